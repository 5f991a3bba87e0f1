// calibrate_checks: end-to-end checks of a profile written by ddpsim-calibrate.
//
//   calibrate_checks read-back PROFILE SCENARIO   the profile parses (model/profile), holds a
//       row for every GEMM the scenario runs at every sweep batch (looked up without
//       extrapolation), the four collectives with fits, the memory bandwidth, and reads as
//       hardware;
//   calibrate_checks remeasure PROFILE            re-times the profile's largest GEMMs with the
//       same kernel, with as many sibling processes running it as the profile had ranks (it was
//       recorded with all ranks at once), and checks each median lands within 10% of the
//       recorded one (or inside its recorded p10..p90 widened by 10%), five attempts per shape.
// Exit 0 when every check holds, 1 otherwise (with one line per failure); remeasure exits 77
// (skipped) when the load average exceeds the core count or when most rows' own re-measured
// p10..p90 is wider than 20% of the median (too noisy to judge 10%).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "calibrate/cpu_kernels.hpp"
#include "calibrate/gemm_plan.hpp"
#include "model/profile.hpp"
#include "model/scenario.hpp"

namespace {

using namespace ddpsim;

int failures = 0;
void fail(const std::string& what) {
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  ++failures;
}

int read_back(const std::string& profile_path, const std::string& scenario_path) {
  const model::Profile p = model::Profile::load(profile_path);
  const model::Scenario s = model::load_scenario(scenario_path);
  const auto plan = calib::gemms_of_scenario(s);
  for (const calib::PlannedGemm& g : plan) {
    // Rebuild the workload GEMM from the plan: its per-sample shape is the batch extent / batch.
    model::Gemm gemm;
    gemm.per_sample = g.shape;
    gemm.batch_dim = *g.batch_dim;
    switch (gemm.batch_dim) {
      case model::BatchDim::kM:
        gemm.per_sample.m /= g.batch;
        break;
      case model::BatchDim::kN:
        gemm.per_sample.n /= g.batch;
        break;
      case model::BatchDim::kK:
        gemm.per_sample.k /= g.batch;
        break;
      case model::BatchDim::kCount:
        gemm.per_sample.count /= g.batch;
        break;
    }
    const auto e = p.gemm_time_s(gemm, model::DType::kFp32, g.batch);
    if (!e) {
      fail("no profile row for " + g.ops.front() + " at batch " + std::to_string(g.batch));
    } else if (e->extrapolated || !(e->time_s > 0) || e->low_s > e->time_s ||
               e->high_s < e->time_s) {
      fail("bad lookup for " + g.ops.front());
    }
  }
  if (p.gemms().size() != plan.size()) {
    fail("profile has " + std::to_string(p.gemms().size()) + " GEMM rows, the scenario " +
         std::to_string(plan.size()));
  }
  for (auto op : {model::CollectiveOp::kAllReduce, model::CollectiveOp::kReduceScatter,
                  model::CollectiveOp::kAllGather, model::CollectiveOp::kBroadcast}) {
    const model::CollectiveTable* t = p.collective(op);
    if (t == nullptr) {
      fail(std::string("no ") + model::collective_op_name(op) + " table");
      continue;
    }
    if (t->fit.segments.empty() || !std::isfinite(t->fit.r_squared)) {
      fail(std::string(model::collective_op_name(op)) + ": no usable fit");
    }
    const model::Estimate e = p.collective_time_s(op, 1 << 20, p.ranks());
    if (!(e.time_s > 0)) fail(std::string(model::collective_op_name(op)) + ": no time at 1 MiB");
  }
  if (!p.memory_bandwidth_bytes_per_s("triad")) fail("no triad bandwidth");
  (void)model::hardware_json_from_profile(p, scenario_path, "/hardware");
  std::printf("read back %s: %zu GEMMs, %d ranks, %s\n", profile_path.c_str(), p.gemms().size(),
              p.ranks(), failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}

// 1-minute load average from /proc/loadavg (0 when unreadable).
double load_average() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return 0;
  double l = 0;
  if (std::fscanf(f, "%lf", &l) != 1) l = 0;
  std::fclose(f);
  return l;
}

// Keeps `n` sibling processes running the same GEMM until stopped: the profile was recorded
// with every rank timing the same shape at once (calibrate_main.cpp, "all ranks at once"), so
// a fair re-measurement loads the machine the same way (shared caches and memory bus).
class Siblings {
 public:
  Siblings(int n, const model::GemmShape& shape) {
    for (int i = 0; i < n; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        calib::TimingOptions o;
        o.repeats = 1000000;
        o.budget_s = 3600;
        for (;;) (void)calib::time_sgemm(shape, o);
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~Siblings() {
    for (pid_t pid : pids_) kill(pid, SIGKILL);
    for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
  }
  Siblings(const Siblings&) = delete;
  Siblings& operator=(const Siblings&) = delete;

 private:
  std::vector<pid_t> pids_;
};

int remeasure(const std::string& profile_path) {
  // On a machine busier than its core count, a rank's GEMM time says more about the other jobs
  // than about the kernel: the comparison would be noise either way, so it is skipped (77).
  const double load = load_average();
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  if (load > cores) {
    std::printf("skipped: load average %.1f on %u cores; re-run on an idle machine\n", load, cores);
    return 77;
  }
  calib::blas_single_thread();
  const model::Profile p = model::Profile::load(profile_path);
  std::vector<const model::ProfileGemm*> rows;
  for (const auto& g : p.gemms()) {
    // Sub-0.2 ms GEMMs are at the mercy of the scheduler on a shared machine.
    if (g.dtype == model::DType::kFp32 && g.time_s >= 2e-4) rows.push_back(&g);
  }
  std::sort(rows.begin(), rows.end(),
            [](auto* a, auto* b) { return a->shape.flops() > b->shape.flops(); });
  if (rows.size() > 4) rows.resize(4);
  if (rows.empty()) {
    fail("no GEMM row of at least 0.2 ms to re-measure");
    return 1;
  }
  const int siblings = std::max(0, std::min(p.ranks(), static_cast<int>(cores)) - 1);
  std::printf("re-measuring with %d sibling process(es) busy, as the %d-rank profile was\n",
              siblings, p.ranks());
  calib::TimingOptions o;
  o.repeats = 15;
  o.budget_s = 1.5;
  int noisy = 0;
  for (const model::ProfileGemm* g : rows) {
    Siblings busy(siblings, g->shape);
    bool ok = false;
    double best_dev = 1e9, best_spread = 1e9;
    // Medians are compared; a re-measured median inside the recorded p10..p90 (widened by
    // 10%) also passes, since the recorded median itself carries that spread.
    for (int attempt = 0; attempt < 5 && !ok; ++attempt) {
      const calib::Stats st = calib::time_sgemm(g->shape, o);
      const double t = st.median_s;
      const double dev = std::fabs(t - g->time_s) / g->time_s;
      best_dev = std::min(best_dev, dev);
      best_spread = std::min(best_spread, (st.p90_s - st.p10_s) / st.median_s);
      ok = dev <= 0.10 || (t >= g->low_s * 0.9 && t <= g->high_s * 1.1);
    }
    // A re-measurement whose own p10..p90 is wider than the tolerance cannot judge a 10%
    // agreement either way: that row is reported as noise, not as a failure.
    const bool too_noisy = !ok && best_spread > 0.20;
    std::printf(
        "%ldx%ldx%ld: recorded %.4f ms, closest re-measurement %.1f%% away "
        "(its p10..p90 %.1f%% of the median): %s\n",
        static_cast<long>(g->shape.m), static_cast<long>(g->shape.n), static_cast<long>(g->shape.k),
        g->time_s * 1e3, best_dev * 100, best_spread * 100,
        ok          ? "ok"
        : too_noisy ? "too noisy to judge"
                    : "FAILED");
    if (too_noisy) {
      ++noisy;
    } else if (!ok) {
      fail("re-measured GEMM outside 10% of the profile");
    }
  }
  if (failures) return 1;
  if (noisy * 2 > static_cast<int>(rows.size())) {
    std::printf("skipped: %d of %zu rows too noisy to judge on this machine\n", noisy, rows.size());
    return 77;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "read-back" && argc == 4) return read_back(argv[2], argv[3]);
    if (cmd == "remeasure" && argc == 3) return remeasure(argv[2]);
    std::fprintf(stderr,
                 "usage: calibrate_checks read-back PROFILE SCENARIO | remeasure PROFILE\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 1;
  }
}
