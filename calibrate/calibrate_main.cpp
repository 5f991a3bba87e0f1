// ddpsim-calibrate (also `ddpsim calibrate`): measures this machine and writes a profile.
//
//   ddpsim-calibrate [--backend cpu|cuda] [--nproc N] [--scenario S.json] [--quick]
//                    [--gemm-operands cold|warm] [--out results/profile-<host>.json]
//                    [--plan]     list what would be timed (no device needed), time nothing
//   ddpsim-calibrate import nccl-tests LOG|JSON [--op all_reduce] [--out P.json]
//   ddpsim-calibrate import kineto TRACE.json [--out P.json]
//   ddpsim-calibrate check-fit PROFILE SWEEP.json [--op all_reduce] [--above 64K]
//                    [--tolerance 0.1]     does the profile's fit predict a second sweep?
//   ddpsim-calibrate gpu-criteria GRID.json [SCENARIO.json] [--gemm-min 0.8] [--copy-min 0.85]
//                                           do the CUDA GEMMs and kernels reach the run's peaks?
//
// The collective sweep goes from 8 B to 256 MiB by factors of 2 (4 MiB with --quick), with
// fewer timed calls above 16 MiB (sweep.hpp). Every collective result is checked: a row with
// wrong elements fails the calibration (exit 1, naming op, size and count); nothing is fitted.
// On the CPU backend with 2+ ranks the profile also gets "interference": the GEMM slowdown
// while an all-reduce runs on a communication thread (calibrate/interference.hpp).
//
// Without launcher variables it starts --nproc copies of itself (calibrate/comm launch_local, a
// one-host torchrun); under torchrun/mpirun it is the rank it is given. Every rank times the
// same GEMMs, bandwidth and kernels at the same time (they share cores' memory bus as executor
// ranks do), then all run the collective sweep; rank 0 writes the profile (atomically).
// Progress goes to stderr. Exit codes: 0 ok, 2 bad input or a part not built/no device, 1 a
// failed run (a rank died, a timeout, wrong collective results).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/context.hpp"
#include "calibrate/cpu_kernels.hpp"
#include "calibrate/fit_check.hpp"
#include "calibrate/gemm_plan.hpp"
#include "calibrate/gpu_criteria.hpp"
#include "calibrate/timing.hpp"
#include "model/error.hpp"
#include "model/kineto_import.hpp"
#include "model/measurement_import.hpp"
#include "model/profile.hpp"
#include "model/scenario.hpp"
#ifdef DDPSIM_HAVE_CUDA
#include "calibrate/gpu_kernels.hpp"
#endif
#ifdef DDPSIM_HAVE_GLOO
#include "calibrate/comm/communicator.hpp"
#include "calibrate/comm/gloo_communicator.hpp"
#include "calibrate/comm/launcher.hpp"
#include "calibrate/comm/nccl_communicator.hpp"
#include "calibrate/comm/rank.hpp"
#include "calibrate/comm/sweep.hpp"
#include "calibrate/interference.hpp"
#endif

namespace {

using namespace ddpsim;
using nlohmann::json;

struct Options {
  std::string backend = "cpu";
  int nproc = 0;  // 0: 2 on cpu, the device count on cuda
  std::string scenario;
  bool quick = false;
  std::string out;
  double timeout_s = 120;
  bool collectives = true;
  std::string max_bytes;               // empty: the sweep's default (256 MiB, 4 MiB with --quick)
  int iters = 0;                       // 0: the sweep's default
  std::string gemm_operands = "cold";  // calib::Operands: as in a training step, or cache-warm
  bool plan_only = false;              // --plan: list what would be timed, time nothing
  std::string command;
};

std::string self_exe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("ddpsim-calibrate") : p.string();
}

// "8", "64K", "16M", "1G" (powers of 1024, as nccl-tests reads -e).
std::int64_t parse_size(const std::string& s, const char* option = "--max-bytes") {
  std::size_t pos = 0;
  long long v = -1;
  try {
    v = std::stoll(s, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  const std::string unit = s.substr(pos);
  std::int64_t mult = 0;
  if (unit.empty() || unit == "B") mult = 1;
  if (unit == "K" || unit == "k") mult = std::int64_t{1} << 10;
  if (unit == "M" || unit == "m") mult = std::int64_t{1} << 20;
  if (unit == "G" || unit == "g") mult = std::int64_t{1} << 30;
  if (v < 8 || mult == 0) {
    throw InputError("command line", option, "a size of at least 8 such as 64K, 16M, 1G",
                     "\"" + s + "\"");
  }
  return v * mult;
}

void say(bool lead, const std::string& line) {
  if (!lead) return;
  std::fprintf(stderr, "calibrate: %s\n", line.c_str());
  std::fflush(stderr);
}

std::string shape_text(const model::GemmShape& s) {
  std::string t = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                  " " + (s.trans_a ? "T" : "N") + (s.trans_b ? "T" : "N");
  if (s.count > 1) t += " x" + std::to_string(s.count);
  return t;
}

json bandwidth_row(const std::string& kernel, const std::string& device, double bytes, int ranks,
                   const calib::Stats& s) {
  json r = calib::stats_json(s);
  r["kernel"] = kernel;
  r["device"] = device;
  r["bytes"] = static_cast<std::int64_t>(bytes);
  r["ranks_concurrent"] = ranks;
  r["gbytes_per_s"] = bytes / s.median_s / 1e9;
  r["gbytes_per_s_min"] = bytes / s.max_s / 1e9;
  r["gbytes_per_s_max"] = bytes / s.min_s / 1e9;
  return r;
}

json kernel_row(const std::string& name, const std::string& device, double elements, double bytes,
                const calib::Stats& s) {
  json r = calib::stats_json(s);
  r["name"] = name;
  r["device"] = device;
  r["elements"] = static_cast<std::int64_t>(elements);
  r["bytes"] = static_cast<std::int64_t>(bytes);
  r["gbytes_per_s"] = bytes / s.median_s / 1e9;
  return r;
}

// The GEMMs a calibration times: the scenario's (loaded into *scenario), else the grid.
std::vector<calib::PlannedGemm> plan_of(const Options& o,
                                        std::optional<model::Scenario>& scenario) {
  if (o.scenario.empty()) return calib::standard_grid(o.quick, o.backend == "cuda");
  scenario = model::load_scenario(o.scenario);
  std::vector<calib::PlannedGemm> plan = calib::gemms_of_scenario(*scenario);
  if (plan.empty()) {
    throw InputError(
        o.scenario, "/model",
        "a model with GEMM shapes (mlp, preset, hf_config; \"layers\" give FLOPs only)",
        "no GEMMs");
  }
  return plan;
}

std::vector<model::DType> dtypes_of(const Options& o) {
  if (o.backend == "cuda") return {model::DType::kFp32, model::DType::kBf16};
  return {model::DType::kFp32};
}

// A CPU core does ~1e11 FLOP/s at best: a larger GEMM per call (e.g. GPT-sized layers at a
// large batch) would take minutes per repeat, so it is left out and said so.
double cpu_flop_cap(const Options& o) { return o.quick ? 4e9 : 2e11; }

// How each measurement is timed (--quick: fewer, shorter samples).
calib::TimingOptions timing_of(const Options& o) {
  calib::TimingOptions t;
  if (o.quick) {
    t.warmup = 1;
    t.repeats = 5;
    t.min_sample_s = 1e-3;
    t.budget_s = 0.3;
  }
  return t;
}

// Passes over the GEMM plan (see "three passes" in run_calibration).
int gemm_passes(const Options& o) { return o.backend == "cpu" ? 3 : 1; }

// --plan: the GEMMs (and dtypes) a run would time, their FLOPs, and the timing budget, without
// timing anything or needing the device (to size a run before borrowing a GPU for it).
int print_plan(const Options& o) {
  std::optional<model::Scenario> scenario;
  const std::vector<calib::PlannedGemm> plan = plan_of(o, scenario);
  const std::vector<model::DType> dtypes = dtypes_of(o);
  const calib::TimingOptions t = timing_of(o);
  std::printf("| GEMM | batch | GFLOP per call | dtypes | used by |\n|---|---:|---:|---|---|\n");
  int measurements = 0;
  for (const calib::PlannedGemm& g : plan) {
    const bool skipped = o.backend == "cpu" && g.shape.flops() > cpu_flop_cap(o);
    std::string dts;
    for (model::DType dt : dtypes)
      dts += (dts.empty() ? "" : ", ") + std::string(model::dtype_name(dt));
    // The first user and how many more (a 32-layer model lists 128 users of one shape).
    std::string ops = g.ops.empty() ? "grid" : g.ops.front();
    if (g.ops.size() > 1) ops += " +" + std::to_string(g.ops.size() - 1) + " more";
    std::printf("| %s | %lld | %.3f | %s | %s |\n", shape_text(g.shape).c_str(),
                static_cast<long long>(g.batch), g.shape.flops() / 1e9,
                skipped ? "skipped (above the CPU cap)" : dts.c_str(), ops.c_str());
    if (skipped) continue;
    measurements += static_cast<int>(dtypes.size());
  }
  const int passes = gemm_passes(o);
  std::printf(
      "\n%zu GEMM shapes, %d measurements x %d pass(es) (%s backend), each timed for at most "
      "about %.1f s after its warm-up: GEMMs take at most about %.0f s\n",
      plan.size(), measurements, passes, o.backend.c_str(), t.budget_s,
      measurements * passes * t.budget_s);
  return 0;
}

int run_calibration(Options o, int argc, char** argv) {
  if (o.plan_only) return print_plan(o);
  calib::blas_single_thread();
  if (o.backend == "cuda") {
#ifndef DDPSIM_HAVE_CUDA
    throw UnsupportedError(
        "--backend cuda: this ddpsim-calibrate was built without CUDA; reconfigure with "
        "-DDDPSIM_WITH_CUDA=ON (needs the CUDA Toolkit)");
#else
    std::string why;
    const int n = calib::gpu::device_count(&why);
    if (n == 0) throw UnsupportedError("--backend cuda: no usable CUDA device (" + why + ")");
    if (o.nproc == 0) o.nproc = n;
#endif
  }
  if (o.nproc == 0) o.nproc = 2;
  if (!o.max_bytes.empty()) (void)parse_size(o.max_bytes);  // refused before any rank starts
  if (o.out.empty()) o.out = "results/profile-" + calib::host_name() + ".json";
  int rank = 0, world = 1, local_rank = 0;

#ifdef DDPSIM_HAVE_GLOO
  const auto me = comm::rank_from_env();
  if (!me && o.nproc > 1) {
    std::vector<std::string> args{self_exe()};
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
    comm::LaunchOptions lo;
    lo.timeout_s = o.quick ? 600 : 7200;
    // A failed run leaves no profile of its own: rank 0 may have written one just before another
    // rank failed, or have been stopped mid-write (its temporary file). An earlier run's profile
    // at the same path is kept.
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto before =
        fs::exists(o.out, ec) ? fs::last_write_time(o.out, ec) : fs::file_time_type::min();
    const int rc = comm::launch_local(o.nproc, args, lo);
    if (rc != 0) {
      const fs::path out(o.out);
      if (fs::exists(out, ec) && fs::last_write_time(out, ec) != before) fs::remove(out, ec);
      const std::string tmp_prefix = out.filename().string() + ".tmp.";
      for (const auto& e :
           fs::directory_iterator(out.has_parent_path() ? out.parent_path() : ".", ec)) {
        if (e.path().filename().string().rfind(tmp_prefix, 0) == 0) fs::remove(e.path(), ec);
      }
    }
    return rc == 0 ? 0 : 1;
  }
  std::unique_ptr<comm::Communicator> c;
  if (me) {
    rank = me->rank;
    world = me->world_size;
    local_rank = me->local_rank;
    if (world > 1) {
      const auto timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
      c = o.backend == "cuda" ? comm::make_nccl(*me, timeout) : comm::make_gloo(*me, timeout);
    }
  }
  auto sync = [&] {
    if (c) c->barrier();
  };
#else
  (void)argc;
  (void)argv;
  if (o.nproc > 1) {
    throw UnsupportedError(
        "--nproc " + std::to_string(o.nproc) +
        ": collective sweeps need Gloo (apt-get install libgloo-dev, then reconfigure); use "
        "--nproc 1 for GEMMs and bandwidth only");
  }
  auto sync = [] {};
#endif
  const bool lead = rank == 0;
  const std::string device =
      o.backend == "cuda" ? "cuda:" + std::to_string(local_rank) : std::string("cpu");
  json notes = json::array();

  // What to time.
  std::optional<model::Scenario> scenario;
  const std::vector<calib::PlannedGemm> plan = plan_of(o, scenario);
  const std::vector<model::DType> dtypes = dtypes_of(o);
  if (scenario && o.backend == "cpu") {
    const model::DType cd = model::compute_dtype(scenario->training.precision);
    if (cd != model::DType::kFp32) {
      notes.push_back(std::string("the scenario computes in ") + model::dtype_name(cd) +
                      "; OpenBLAS sgemm timed in fp32");
    }
  }

  const calib::TimingOptions t = timing_of(o);
  const double cpu_cap = cpu_flop_cap(o);

  // 1. Memory bandwidth: rank 0 alone, then every rank at once (executor ranks share the bus).
  json bandwidth = json::array();
  if (o.backend == "cpu") {
    const std::size_t elements = o.quick ? (std::size_t{1} << 23) : (std::size_t{1} << 25);
    for (auto k : {calib::StreamKernel::kCopy, calib::StreamKernel::kTriad}) {
      const std::string name = k == calib::StreamKernel::kCopy ? "copy" : "triad";
      sync();
      if (lead) {
        const calib::Stats s = calib::time_stream(k, elements, t);
        bandwidth.push_back(bandwidth_row(name, device, calib::stream_bytes(k, elements), 1, s));
        say(lead, name + " alone: " +
                      std::to_string(bandwidth.back()["gbytes_per_s"].get<double>()) + " GB/s");
      }
      sync();
      if (world > 1) {
        const calib::Stats s = calib::time_stream(k, elements, t);
        if (lead) {
          bandwidth.push_back(
              bandwidth_row(name, device, calib::stream_bytes(k, elements), world, s));
          say(lead, name + " with " + std::to_string(world) + " ranks: " +
                        std::to_string(bandwidth.back()["gbytes_per_s"].get<double>()) +
                        " GB/s per rank");
        }
      }
    }
  }

  // 2. GEMMs, all ranks at once, in step.
  const calib::Operands operands =
      o.gemm_operands == "warm" ? calib::Operands::kWarm : calib::Operands::kCold;
  json gemms = json::array();
  struct Job {
    std::size_t plan_index;
    model::DType dtype;
  };
  std::vector<Job> jobs;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const calib::PlannedGemm& g = plan[i];
    for (model::DType dt : dtypes) {
      if (o.backend == "cpu" && g.shape.flops() > cpu_cap) {
        if (lead) {
          notes.push_back("skipped " + shape_text(g.shape) + " (" +
                          (g.ops.empty() ? std::string("grid") : g.ops.front()) + "): " +
                          std::to_string(g.shape.flops() / 1e9) + " GFLOP per call is above the " +
                          std::to_string(cpu_cap / 1e9) + " GFLOP CPU cap");
        }
        continue;
      }
      jobs.push_back({i, dt});
    }
  }
  // On the CPU, three passes over the plan, seconds apart; a GEMM keeps the pass with the
  // middle median, so that a slow (or fast) spell of the host during one pass is not what the
  // profile records (on this VM one quick profile in about seven recorded a 1024x512x16 GEMM at
  // 1.04 ms against 0.47-0.60 ms in the others; passes of one run differ by 10-20% on sub-ms
  // GEMMs, and keeping the lowest of two biased the record ~10% low). A GPU has no other
  // tenant and its timing is on the device: one pass.
  const int passes = gemm_passes(o);
  std::vector<std::vector<calib::Stats>> timed(static_cast<std::size_t>(passes),
                                               std::vector<calib::Stats>(jobs.size()));
  const std::string library = o.backend == "cpu" ? "openblas" : "cublas";
  for (int pass = 0; pass < passes; ++pass) {
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const calib::PlannedGemm& g = plan[jobs[j].plan_index];
      sync();
      calib::Stats& s = timed[static_cast<std::size_t>(pass)][j];
      if (o.backend == "cpu") {
        s = calib::time_sgemm(g.shape, t, operands);
      } else {
#ifdef DDPSIM_HAVE_CUDA
        s = calib::gpu::time_gemm(local_rank, g.shape, jobs[j].dtype, t);
#endif
      }
      say(lead, "gemm " + std::to_string(j + 1) + "/" + std::to_string(jobs.size()) + " pass " +
                    std::to_string(pass + 1) + "/" + std::to_string(passes) + " " +
                    (g.ops.empty() ? std::string("grid") : g.ops.front()) + " " +
                    shape_text(g.shape) + " " + model::dtype_name(jobs[j].dtype) + " batch " +
                    std::to_string(g.batch) + ": " + std::to_string(s.median_s * 1e3) + " ms, " +
                    std::to_string(g.shape.flops() / s.median_s / 1e9) + " GFLOP/s");
    }
  }
  for (std::size_t j = 0; lead && j < jobs.size(); ++j) {
    const calib::PlannedGemm& g = plan[jobs[j].plan_index];
    std::vector<const calib::Stats*> by_median;
    for (int pass = 0; pass < passes; ++pass) {
      by_median.push_back(&timed[static_cast<std::size_t>(pass)][j]);
    }
    std::sort(by_median.begin(), by_median.end(), [](const calib::Stats* a, const calib::Stats* b) {
      return a->median_s < b->median_s;
    });
    const calib::Stats* best = by_median[by_median.size() / 2];
    const calib::Stats& s = *best;
    json r = calib::stats_json(s);
    r["ops"] = g.ops;
    if (!g.layer.empty()) r["layer"] = g.layer;
    if (!g.role.empty()) r["role"] = g.role;
    r["m"] = g.shape.m;
    r["n"] = g.shape.n;
    r["k"] = g.shape.k;
    r["count"] = g.shape.count;
    r["transa"] = g.shape.trans_a;
    r["transb"] = g.shape.trans_b;
    r["dtype"] = model::dtype_name(jobs[j].dtype);
    r["batch"] = g.batch;
    r["batch_dim"] = calib::batch_dim_name(g.batch_dim);
    r["gflops"] = g.shape.flops() / s.median_s / 1e9;
    r["device"] = device;
    r["library"] = library;
    if (o.backend == "cpu") r["operands"] = calib::operands_name(operands);
    gemms.push_back(std::move(r));
  }

  // 3. Memory-bound training kernels.
  json kernels = json::array();
  sync();
  if (o.backend == "cpu") {
    const std::size_t n = o.quick ? (std::size_t{1} << 20) : (std::size_t{1} << 24);
    const calib::Stats s = calib::time_adam(n, t);
    if (lead) kernels.push_back(kernel_row("adam_fp32", device, n, calib::adam_bytes(n), s));
  } else {
#ifdef DDPSIM_HAVE_CUDA
    const std::size_t n = o.quick ? (std::size_t{1} << 24) : (std::size_t{1} << 26);
    const calib::Stats a = calib::gpu::time_adam(local_rank, n, t);
    const calib::Stats b = calib::gpu::time_cast(local_rank, n, model::DType::kBf16, t);
    const calib::Stats h = calib::gpu::time_cast(local_rank, n, model::DType::kFp16, t);
    const std::size_t bytes = o.quick ? (std::size_t{256} << 20) : (std::size_t{1} << 30);
    const calib::Stats d = calib::gpu::time_d2d_copy(local_rank, bytes, t);
    if (lead) {
      kernels.push_back(kernel_row("adam_fp32", device, n, 28.0 * n, a));
      kernels.push_back(kernel_row("cast_fp32_bf16", device, n, 6.0 * n, b));
      kernels.push_back(kernel_row("cast_fp32_fp16", device, n, 6.0 * n, h));
      bandwidth.push_back(bandwidth_row("d2d_copy", device, 2.0 * bytes, world, d));
    }
#endif
  }
  if (lead) {
    for (const json& k : kernels) {
      say(lead, k["name"].get<std::string>() + ": " +
                    std::to_string(k["gbytes_per_s"].get<double>()) + " GB/s");
    }
  }

  // 4. Collectives.
  json collectives, interference;
#ifdef DDPSIM_HAVE_GLOO
  if (c && o.collectives) {
    comm::SweepOptions so;
    so.quick = o.quick;
    if (!o.max_bytes.empty()) so.max_bytes = parse_size(o.max_bytes);
    if (o.iters > 0) so.iters = o.iters;
    so.ranks_per_node = me->local_world_size;
    if (lead) {
      const std::string note =
          comm::oversubscription_note(c->backend(), me->local_world_size, comm::usable_cores());
      if (!note.empty()) {
        notes.push_back(note);
        say(lead, "warning: " + note);
      }
      say(lead, "collective sweep over " + c->backend() + " " + c->version() + "\n" +
                    comm::format_header());
    }
    collectives = comm::run_sweep(*c, so, [&](const std::string& line) { say(lead, line); });
    if (lead) {
      // A timing of a collective that computed the wrong result is not a measurement of it.
      comm::verify_sweep(collectives);
      model::add_collective_fits(collectives);
    }
  }
  // 5. Interference: GEMM time alone and while all-reduces run on a communication thread.
  if (c && o.collectives && o.backend == "cpu") {
    calib::InterferenceOptions io;
    // The scenario's largest GEMM under a cap (the same choice on every rank), so a phase
    // holds tens of calls; the collective is DDP's default 25 MiB bucket (4 MiB quick).
    const double cap = o.quick ? 6e8 : 2e9;
    double best = 0;
    for (const calib::PlannedGemm& g : plan) {
      if (g.shape.flops() <= cap && g.shape.flops() > best) {
        best = g.shape.flops();
        io.gemm = g.shape;
      }
    }
    // Quick: 4 MiB, unless --max-bytes asked for larger collectives (ddpsim validate does).
    io.collective_bytes = std::int64_t{25} << 20;
    if (o.quick) {
      io.collective_bytes = o.max_bytes.empty()
                                ? std::int64_t{4} << 20
                                : std::min(io.collective_bytes, parse_size(o.max_bytes));
    }
    io.rounds = o.quick ? 3 : 5;
    io.window_s = o.quick ? 0.25 : 1.0;
    say(lead, "interference: " + shape_text(io.gemm) + " GEMM alone and during " +
                  std::to_string(io.collective_bytes >> 20) + " MiB all-reduces");
    interference = calib::measure_interference(*c, io);
    if (lead) {
      say(lead, "interference factor " + std::to_string(interference["factor"].get<double>()) +
                    " (ratio " + std::to_string(interference["ratio"].get<double>()) + ")");
    }
  }
#endif

  if (lead) {
    json doc;
    doc["format"] = "ddpsim-profile";
    doc["format_version"] = 1;
    doc["context"] = calib::context_json(o.backend, o.command);
#ifdef DDPSIM_HAVE_CUDA
    if (o.backend == "cuda") {
      const calib::gpu::DeviceInfo d = calib::gpu::device_info(local_rank);
      doc["context"]["gpu"] = {
          {"name", d.name},
          {"memory_bytes", d.memory_bytes},
          {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
          {"sm_count", d.sm_count},
          {"driver", d.driver_version}};
      doc["context"]["libraries"]["cuda_runtime"] = d.runtime_version;
      doc["context"]["libraries"]["cublas"] = d.cublas_version;
    }
#endif
#ifdef DDPSIM_HAVE_GLOO
    if (c) doc["context"]["libraries"][c->backend()] = c->version();
#endif
    doc["backend"] = o.backend;
    doc["ranks"] = world;
    if (!o.scenario.empty()) doc["scenario"] = o.scenario;
    if (!notes.empty()) doc["notes"] = notes;
    doc["gemms"] = gemms;
    if (!bandwidth.empty()) doc["memory_bandwidth"] = bandwidth;
    if (!kernels.empty()) doc["kernels"] = kernels;
    if (!collectives.is_null()) doc["collectives"] = collectives;
    if (!interference.is_null()) doc["interference"] = interference;
    // The writer checks its own output against the reader before anyone else reads it.
    (void)model::Profile::from_json(doc, o.out);
    calib::write_file_atomic(o.out, doc.dump(2) + "\n");
    say(lead, "wrote " + o.out + " (" + std::to_string(gemms.size()) + " GEMMs" +
                  (collectives.is_null()
                       ? std::string(", no collectives")
                       : ", " + std::to_string(collectives["ops"].size()) + " collectives") +
                  ")");
  }
  sync();
  return 0;
}

std::string join_args(int argc, char** argv) {
  std::string s = "ddpsim-calibrate";
  for (int i = 1; i < argc; ++i) s += std::string(" ") + argv[i];
  return s;
}

void emit(const json& doc, const std::string& out) {
  if (out.empty()) {
    std::printf("%s\n", doc.dump(2).c_str());
  } else {
    calib::write_file_atomic(out, doc.dump(2) + "\n");
    std::fprintf(stderr, "calibrate: wrote %s\n", out.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "ddpsim-calibrate: measure this machine (GEMMs, memory bandwidth, collectives) "
      "into a profile, or import nccl-tests / PyTorch profiler output"};
  Options o;
  o.command = join_args(argc, argv);
  app.add_option("--backend", o.backend, "cpu (OpenBLAS + Gloo) or cuda (cuBLAS + NCCL)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--nproc", o.nproc, "ranks on this host (default 2 on cpu, the GPUs on cuda)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--scenario", o.scenario, "time the GEMMs this scenario runs (all sweep batches)");
  app.add_flag("--quick", o.quick, "fewer repeats, sizes up to 4 MiB (under a minute)");
  app.add_flag("--plan", o.plan_only,
               "list the GEMMs a run would time and its timing budget; time nothing");
  app.add_option("--out", o.out, "profile to write (default results/profile-<host>.json)");
  app.add_option("--timeout-s", o.timeout_s, "per-collective timeout")->check(CLI::PositiveNumber);
  app.add_option("--max-bytes", o.max_bytes,
                 "largest collective size (K/M/G; default 256M, 4M with --quick)");
  app.add_option("--iters", o.iters, "timed calls per collective size (default 20, 5 quick)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--gemm-operands", o.gemm_operands,
                 "cold (default: operands rotated through 128 MiB of copies, from memory as in a "
                 "training step) or warm (one set reused, cache-resident)")
      ->check(CLI::IsMember({"cold", "warm"}));
  bool no_coll = false;
  app.add_flag("--no-collectives", no_coll, "skip the collective sweep");

  auto* imp = app.add_subcommand("import", "turn existing measurements into a profile");
  imp->require_subcommand(1);
  std::string nt_file, nt_op, nt_out, kt_file, kt_out;
  auto* nt = imp->add_subcommand("nccl-tests", "an nccl-tests stdout log or its -J JSON");
  nt->add_option("file", nt_file, "the log or JSON")->required();
  nt->add_option("--op", nt_op, "the collective when the log does not name it")
      ->check(CLI::IsMember({"all_reduce", "reduce_scatter", "all_gather", "broadcast"}));
  nt->add_option("--out", nt_out, "profile to write (default: stdout)");
  auto* kt = imp->add_subcommand("kineto", "a PyTorch profiler (Kineto) trace of one step");
  kt->add_option("file", kt_file, "the Chrome-trace JSON")->required();
  kt->add_option("--out", kt_out, "profile to write (default: stdout)");
  auto* cf = app.add_subcommand(
      "check-fit",
      "predict a second, independent collective sweep (ddpsim-collectives --size-offset 1.5 "
      "--json) with the profile's fit; exit 1 when a size above --above is off by more than "
      "--tolerance");
  std::string cf_profile, cf_sweep, cf_op = "all_reduce", cf_above = "64K";
  double cf_tol = 0.10;
  cf->add_option("profile", cf_profile, "the profile whose fit predicts")->required();
  cf->add_option("sweep", cf_sweep, "the second sweep: a collectives section or a profile")
      ->required();
  cf->add_option("--op", cf_op, "the collective to check")
      ->check(CLI::IsMember({"all_reduce", "reduce_scatter", "all_gather", "broadcast"}));
  cf->add_option("--above", cf_above, "judge sizes above this (K/M/G)");
  cf->add_option("--tolerance", cf_tol, "largest relative error")->check(CLI::Range(0.0, 10.0));
  auto* gc = app.add_subcommand(
      "gpu-criteria",
      "judge a CUDA calibration against its own peaks: every bf16 GEMM of the scenario >= 80% "
      "of the largest square bf16 GEMM, every CUDA kernel >= 85% of the device copy; exit 1 "
      "when one is below");
  std::vector<std::string> gc_profiles;
  double gc_gemm = 0.8, gc_copy = 0.85;
  gc->add_option("profiles", gc_profiles,
                 "profiles of one device (the grid run without --scenario, the scenario's run)")
      ->required();
  gc->add_option("--gemm-min", gc_gemm, "fraction of the GEMM peak")->check(CLI::Range(0.0, 1.0));
  gc->add_option("--copy-min", gc_copy, "fraction of the copy bandwidth")
      ->check(CLI::Range(0.0, 1.0));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    // One line, like every other input error (CLI11's own exit() adds a second line).
    std::fprintf(stderr, "ddpsim-calibrate: %s\n", e.what());
    return 2;
  }
  o.collectives = !no_coll;

  try {
    if (nt->parsed()) {
      json doc = model::imported_profile(model::import_nccl_tests_file(nt_file, nt_op), nullptr,
                                         o.command);
      const model::Profile p = model::Profile::from_json(doc, nt_file);
      for (const auto& [name, table] : p.document().at("collectives").at("ops").items()) {
        const json& f = table.at("fit");
        std::fprintf(stderr, "calibrate: %s: %zu rows, %zu fit segment(s), R^2 %.4f\n",
                     name.c_str(), table.at("rows").size(), f.at("segments").size(),
                     f.at("r_squared").get<double>());
      }
      emit(p.document(), nt_out);
      return 0;
    }
    if (cf->parsed()) {
      const model::Profile p = model::Profile::load(cf_profile);
      const calib::FitCheck r = calib::check_fit(
          p, model::read_json_file(cf_sweep), cf_sweep, *model::parse_collective_op(cf_op),
          static_cast<double>(parse_size(cf_above, "--above")), cf_tol);
      std::printf("%s", calib::format_fit_check(r).c_str());
      // A miss may be the host's, not the fit's: the calibration's own remarks say so (e.g.
      // more busy Gloo threads than cores).
      if (r.failures > 0) {
        for (const json& n : p.document().value("notes", json::array())) {
          std::printf("profile note: %s\n", n.get<std::string>().c_str());
        }
      }
      return r.judged > 0 && r.failures == 0 ? 0 : 1;
    }
    if (gc->parsed()) {
      std::vector<std::pair<std::string, json>> docs;
      for (const std::string& f : gc_profiles) {
        // The reader checks every key first: a misspelt row is an input error, not a skip.
        docs.emplace_back(f, model::Profile::load(f).document());
      }
      const calib::GpuCriteria r = calib::gpu_criteria(docs, gc_gemm, gc_copy);
      std::printf("%s", calib::format_gpu_criteria(r).c_str());
      return calib::passed(r) ? 0 : 1;
    }
    if (kt->parsed()) {
      json doc = model::imported_profile(nullptr, model::import_kineto_file(kt_file), o.command);
      const model::Profile p = model::Profile::from_json(doc, kt_file);
      emit(p.document(), kt_out);
      return 0;
    }
    return run_calibration(o, argc, argv);
  } catch (const InputError& e) {
    std::fprintf(stderr, "ddpsim-calibrate: %s\n", e.what());
    return 2;
  } catch (const UnsupportedError& e) {
    std::fprintf(stderr, "ddpsim-calibrate: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddpsim-calibrate: %s\n", e.what());
    return 1;
  }
}
