// The measurements of a calibration run (detail/calibration_steps.hpp), in the order they run.
#include "calibrate/detail/calibration_steps.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "calibrate/cpu_kernels.hpp"
#include "model/profile/profile.hpp"
#ifdef DDPSIM_HAVE_CUDA
#include "calibrate/gpu_kernels.hpp"
#endif
#ifdef DDPSIM_HAVE_GLOO
#include "calibrate/comm/sweep.hpp"
#include "calibrate/interference.hpp"
#endif

namespace ddpsim::calib::detail {

using nlohmann::json;

namespace {

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

// One GEMM measurement: a shape of the plan in one dtype.
struct GemmJob {
  std::size_t plan_index;
  model::DType dtype;
};

// Every shape of the plan in every dtype, but on the CPU none above the FLOP cap (a note each).
std::vector<GemmJob> gemm_jobs(Run& r, const std::vector<calib::PlannedGemm>& plan,
                               const std::vector<model::DType>& dtypes) {
  const RunOptions& o = r.o;
  const double cpu_cap = cpu_flop_cap(o);
  std::vector<GemmJob> jobs;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const calib::PlannedGemm& g = plan[i];
    for (model::DType dt : dtypes) {
      if (o.backend == "cpu" && g.shape.flops() > cpu_cap) {
        if (r.lead) {
          r.notes.push_back("skipped " + shape_text(g.shape) + " (" +
                            (g.ops.empty() ? std::string("grid") : g.ops.front()) +
                            "): " + std::to_string(g.shape.flops() / 1e9) +
                            " GFLOP per call is above the " + std::to_string(cpu_cap / 1e9) +
                            " GFLOP CPU cap");
        }
        continue;
      }
      jobs.push_back({i, dt});
    }
  }
  return jobs;
}

// Times every job once per pass, all ranks in step; timed[pass][job].
std::vector<std::vector<calib::Stats>> time_gemm_passes(Run& r,
                                                        const std::vector<calib::PlannedGemm>& plan,
                                                        const std::vector<GemmJob>& jobs,
                                                        calib::Operands operands) {
  const RunOptions& o = r.o;
  const int passes = gemm_passes(o);
  std::vector<std::vector<calib::Stats>> timed(static_cast<std::size_t>(passes),
                                               std::vector<calib::Stats>(jobs.size()));
  for (int pass = 0; pass < passes; ++pass) {
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const calib::PlannedGemm& g = plan[jobs[j].plan_index];
      r.sync();
      calib::Stats& s = timed[static_cast<std::size_t>(pass)][j];
      if (o.backend == "cpu") {
        s = calib::time_sgemm(g.shape, r.t, operands);
      } else {
#ifdef DDPSIM_HAVE_CUDA
        s = calib::gpu::time_gemm(r.local_rank, g.shape, jobs[j].dtype, r.t);
#endif
      }
      say(r.lead, "gemm " + std::to_string(j + 1) + "/" + std::to_string(jobs.size()) + " pass " +
                      std::to_string(pass + 1) + "/" + std::to_string(passes) + " " +
                      (g.ops.empty() ? std::string("grid") : g.ops.front()) + " " +
                      shape_text(g.shape) + " " + model::dtype_name(jobs[j].dtype) + " batch " +
                      std::to_string(g.batch) + ": " + std::to_string(s.median_s * 1e3) + " ms, " +
                      std::to_string(g.shape.flops() / s.median_s / 1e9) + " GFLOP/s");
    }
  }
  return timed;
}

// The pass whose median is the middle one of job j's passes.
const calib::Stats& middle_pass(const std::vector<std::vector<calib::Stats>>& timed,
                                std::size_t j) {
  std::vector<const calib::Stats*> by_median;
  for (const std::vector<calib::Stats>& pass : timed) by_median.push_back(&pass[j]);
  std::sort(by_median.begin(), by_median.end(),
            [](const calib::Stats* a, const calib::Stats* b) { return a->median_s < b->median_s; });
  return *by_median[by_median.size() / 2];
}

// One row of the profile's "gemms".
json gemm_row(const Run& r, const calib::PlannedGemm& g, model::DType dtype, const calib::Stats& s,
              calib::Operands operands) {
  const std::string library = r.o.backend == "cpu" ? "openblas" : "cublas";
  json row = calib::stats_json(s);
  row["ops"] = g.ops;
  if (!g.layer.empty()) row["layer"] = g.layer;
  if (!g.role.empty()) row["role"] = g.role;
  row["m"] = g.shape.m;
  row["n"] = g.shape.n;
  row["k"] = g.shape.k;
  row["count"] = g.shape.count;
  row["transa"] = g.shape.trans_a;
  row["transb"] = g.shape.trans_b;
  row["dtype"] = model::dtype_name(dtype);
  row["batch"] = g.batch;
  row["batch_dim"] = calib::batch_dim_name(g.batch_dim);
  row["gflops"] = g.shape.flops() / s.median_s / 1e9;
  row["device"] = r.device;
  row["library"] = library;
  if (r.o.backend == "cpu") row["operands"] = calib::operands_name(operands);
  return row;
}

}  // namespace

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

// A CPU core does ~1e11 FLOP/s at best: a larger GEMM per call (e.g. GPT-sized layers at a
// large batch) would take minutes per repeat, so it is left out and said so.
double cpu_flop_cap(const RunOptions& o) { return o.quick ? 4e9 : 2e11; }

// Passes over the GEMM plan (see "three passes" in measure_gemms).
int gemm_passes(const RunOptions& o) { return o.backend == "cpu" ? 3 : 1; }

// 1. Memory bandwidth: rank 0 alone, then every rank at once (executor ranks share the bus).
json measure_bandwidth(Run& r) {
  const RunOptions& o = r.o;
  const TimingOptions& t = r.t;
  const bool lead = r.lead;
  json bandwidth = json::array();
  if (o.backend == "cpu") {
    const std::size_t elements = o.quick ? (std::size_t{1} << 23) : (std::size_t{1} << 25);
    for (auto k : {calib::StreamKernel::kCopy, calib::StreamKernel::kTriad}) {
      const std::string name = k == calib::StreamKernel::kCopy ? "copy" : "triad";
      r.sync();
      if (lead) {
        const calib::Stats s = calib::time_stream(k, elements, t);
        bandwidth.push_back(bandwidth_row(name, r.device, calib::stream_bytes(k, elements), 1, s));
        say(lead, name + " alone: " +
                      std::to_string(bandwidth.back()["gbytes_per_s"].get<double>()) + " GB/s");
      }
      r.sync();
      if (r.world > 1) {
        const calib::Stats s = calib::time_stream(k, elements, t);
        if (lead) {
          bandwidth.push_back(
              bandwidth_row(name, r.device, calib::stream_bytes(k, elements), r.world, s));
          say(lead, name + " with " + std::to_string(r.world) + " ranks: " +
                        std::to_string(bandwidth.back()["gbytes_per_s"].get<double>()) +
                        " GB/s per rank");
        }
      }
    }
  }
  return bandwidth;
}

// 2. GEMMs, all ranks at once, in step.
json measure_gemms(Run& r, const std::vector<calib::PlannedGemm>& plan,
                   const std::vector<model::DType>& dtypes) {
  const calib::Operands operands =
      r.o.gemm_operands == "warm" ? calib::Operands::kWarm : calib::Operands::kCold;
  const std::vector<GemmJob> jobs = gemm_jobs(r, plan, dtypes);
  // On the CPU, three passes over the plan, seconds apart; a GEMM keeps the pass with the
  // middle median, so that a slow (or fast) spell of the host during one pass is not what the
  // profile records (on this VM one quick profile in about seven recorded a 1024x512x16 GEMM at
  // 1.04 ms against 0.47-0.60 ms in the others; passes of one run differ by 10-20% on sub-ms
  // GEMMs, and keeping the lowest of two biased the record ~10% low). A GPU has no other
  // tenant and its timing is on the device: one pass.
  const std::vector<std::vector<calib::Stats>> timed = time_gemm_passes(r, plan, jobs, operands);
  json gemms = json::array();
  for (std::size_t j = 0; r.lead && j < jobs.size(); ++j) {
    gemms.push_back(
        gemm_row(r, plan[jobs[j].plan_index], jobs[j].dtype, middle_pass(timed, j), operands));
  }
  return gemms;
}

// 3. Memory-bound training kernels; on a GPU also the device-to-device copy, a row of
// `bandwidth`.
json measure_kernels(Run& r, json& bandwidth) {
  const RunOptions& o = r.o;
  const bool lead = r.lead;
  json kernels = json::array();
  r.sync();
  if (o.backend == "cpu") {
    const std::size_t n = o.quick ? (std::size_t{1} << 20) : (std::size_t{1} << 24);
    const calib::Stats s = calib::time_adam(n, r.t);
    if (lead) kernels.push_back(kernel_row("adam_fp32", r.device, n, calib::adam_bytes(n), s));
  } else {
#ifdef DDPSIM_HAVE_CUDA
    const TimingOptions& t = r.t;
    const int local_rank = r.local_rank;
    const std::size_t n = o.quick ? (std::size_t{1} << 24) : (std::size_t{1} << 26);
    const calib::Stats a = calib::gpu::time_adam(local_rank, n, t);
    const calib::Stats b = calib::gpu::time_cast(local_rank, n, model::DType::kBf16, t);
    const calib::Stats h = calib::gpu::time_cast(local_rank, n, model::DType::kFp16, t);
    const std::size_t bytes = o.quick ? (std::size_t{256} << 20) : (std::size_t{1} << 30);
    const calib::Stats d = calib::gpu::time_d2d_copy(local_rank, bytes, t);
    if (lead) {
      kernels.push_back(kernel_row("adam_fp32", r.device, n, 28.0 * n, a));
      kernels.push_back(kernel_row("cast_fp32_bf16", r.device, n, 6.0 * n, b));
      kernels.push_back(kernel_row("cast_fp32_fp16", r.device, n, 6.0 * n, h));
      bandwidth.push_back(bandwidth_row("d2d_copy", r.device, 2.0 * bytes, r.world, d));
    }
#else
    (void)bandwidth;
#endif
  }
  if (lead) {
    for (const json& k : kernels) {
      say(lead, k["name"].get<std::string>() + ": " +
                    std::to_string(k["gbytes_per_s"].get<double>()) + " GB/s");
    }
  }
  return kernels;
}

#ifdef DDPSIM_HAVE_GLOO
// 4. Collectives: the sweep, every result checked, then fitted (rank 0).
json measure_collectives(Run& r, comm::Communicator& c, const comm::RankInfo& me) {
  const RunOptions& o = r.o;
  const bool lead = r.lead;
  comm::SweepOptions so;
  so.quick = o.quick;
  if (!o.max_bytes.empty()) so.max_bytes = parse_size(o.max_bytes);
  if (o.iters > 0) so.iters = o.iters;
  so.ranks_per_node = me.local_world_size;
  if (lead) {
    const std::string note =
        comm::oversubscription_note(c.backend(), me.local_world_size, comm::usable_cores());
    if (!note.empty()) {
      r.notes.push_back(note);
      say(lead, "warning: " + note);
    }
    say(lead,
        "collective sweep over " + c.backend() + " " + c.version() + "\n" + comm::format_header());
  }
  json collectives = comm::run_sweep(c, so, [&](const std::string& line) { say(lead, line); });
  if (lead) {
    // A timing of a collective that computed the wrong result is not a measurement of it.
    comm::verify_sweep(collectives);
    model::add_collective_fits(collectives);
  }
  return collectives;
}

// 5. Interference: GEMM time alone and while all-reduces run on a communication thread.
json interference_section(Run& r, comm::Communicator& c,
                          const std::vector<calib::PlannedGemm>& plan) {
  const RunOptions& o = r.o;
  const bool lead = r.lead;
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
  json interference = calib::measure_interference(c, io);
  if (lead) {
    say(lead, "interference factor " + std::to_string(interference["factor"].get<double>()) +
                  " (ratio " + std::to_string(interference["ratio"].get<double>()) + ")");
  }
  return interference;
}
#endif

}  // namespace ddpsim::calib::detail
