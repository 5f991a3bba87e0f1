// A calibration run (calibration_run.hpp): the options resolved, the ranks launched or joined,
// the measurement steps (detail/calibration_steps.hpp) in order, then the profile.
#include "calibrate/calibration_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/context.hpp"
#include "calibrate/cpu_kernels.hpp"
#include "calibrate/detail/calibration_steps.hpp"
#include "calibrate/gemm_plan.hpp"
#include "calibrate/timing.hpp"
#include "model/atomic_file.hpp"
#include "model/error.hpp"
#include "model/process_env.hpp"
#include "model/profile/machine_fingerprint.hpp"
#include "model/profile/profile.hpp"
#include "model/run_context.hpp"
#include "model/scenario/scenario.hpp"
#ifdef DDPSIM_HAVE_CUDA
#include "calibrate/gpu_kernels.hpp"
#endif
#ifdef DDPSIM_HAVE_GLOO
#include "calibrate/comm/communicator.hpp"
#include "calibrate/comm/gloo_communicator.hpp"
#include "calibrate/comm/launcher.hpp"
#include "calibrate/comm/nccl_communicator.hpp"
#include "calibrate/comm/rank.hpp"
#endif

namespace ddpsim::calib {

using detail::cpu_flop_cap;
using detail::gemm_passes;
using detail::Run;
using detail::say;
using detail::shape_text;
using nlohmann::json;

std::int64_t parse_size(const std::string& s, const char* option) {
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

namespace {

// The GEMMs a calibration times: the scenario's (loaded into *scenario), else the grid.
std::vector<calib::PlannedGemm> plan_of(const RunOptions& o,
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

std::vector<model::DType> dtypes_of(const RunOptions& o) {
  if (o.backend == "cuda") return {model::DType::kFp32, model::DType::kBf16};
  return {model::DType::kFp32};
}

// How each measurement is timed (--quick: fewer, shorter samples).
calib::TimingOptions timing_of(const RunOptions& o) {
  calib::TimingOptions t;
  if (o.quick) {
    t.warmup = 1;
    t.repeats = 5;
    t.min_sample_s = 1e-3;
    t.budget_s = 0.3;
  }
  return t;
}

}  // namespace

// --plan sizes a run before borrowing a GPU for it.
int print_plan(const RunOptions& o) {
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

namespace {

// What the steps measured, under the profile's section names; null when not measured.
struct Measured {
  json bandwidth = json::array(), gemms = json::array(), kernels = json::array();
  json collectives, interference;
  std::string comm_backend, comm_version;  // the collectives' library (empty: none)
};

// --backend cuda needs CUDA and a device; the rank count defaults to the devices (2 on the
// CPU); --max-bytes is refused and the output named before any rank starts.
void resolve_options(RunOptions& o) {
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
  if (o.out.empty()) o.out = "results/profile-" + model::host_name() + ".json";
  model::check_output_path("--out", o.out, {o.scenario});  // before any rank starts
}

#ifdef DDPSIM_HAVE_GLOO
// Starts o.nproc copies of this binary on this host (argv passed on) and waits for them.
int launch_ranks(const RunOptions& o, int argc, char** argv) {
  std::vector<std::string> args{model::self_exe("ddpsim-calibrate")};
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
#endif

// The profile (rank 0): context, then what was measured; read back through the profile reader
// before it is written, atomically.
void write_profile(const Run& r, const Measured& m) {
  const RunOptions& o = r.o;
  json doc;
  doc["format"] = "ddpsim-profile";
  doc["format_version"] = 1;
  doc["context"] = calib::context_json(o.backend, o.command);
#ifdef DDPSIM_HAVE_CUDA
  if (o.backend == "cuda") {
    const calib::gpu::DeviceInfo d = calib::gpu::device_info(r.local_rank);
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
  if (!m.comm_backend.empty()) doc["context"]["libraries"][m.comm_backend] = m.comm_version;
  // Which machine measured (model/profile/machine_fingerprint.hpp), with the versions of the
  // libraries this run actually loaded: OpenBLAS's own build string, the collective library's
  // version. Only the libraries this backend measures with: a CPU profile names no CUDA/NCCL (which
  // a machine may then lack or update), a CUDA one no Gloo.
  doc["machine"] = model::to_json(model::probe_machine());
  json& libs = doc["machine"]["libraries"];
  for (const char* l : o.backend == "cuda" ? std::vector<const char*>{"gloo"}
                                           : std::vector<const char*>{"cuda", "nccl"}) {
    libs.erase(l);
  }
  libs["openblas"] = calib::blas_config();
  if (m.comm_backend.empty()) {
    libs.erase("gloo");  // no collective measured (one rank, --no-collectives)
    libs.erase("nccl");
  } else {
    libs[m.comm_backend] = m.comm_version;
  }
  doc["backend"] = o.backend;
  doc["ranks"] = r.world;
  if (!o.scenario.empty()) doc["scenario"] = o.scenario;
  if (!r.notes.empty()) doc["notes"] = r.notes;
  doc["gemms"] = m.gemms;
  if (!m.bandwidth.empty()) doc["memory_bandwidth"] = m.bandwidth;
  if (!m.kernels.empty()) doc["kernels"] = m.kernels;
  if (!m.collectives.is_null()) doc["collectives"] = m.collectives;
  if (!m.interference.is_null()) doc["interference"] = m.interference;
  // The writer checks its own output against the reader before anyone else reads it.
  (void)model::Profile::from_json(doc, o.out);
  model::write_file_atomic(o.out, doc.dump(2) + "\n");
  say(r.lead, "wrote " + o.out + " (" + std::to_string(m.gemms.size()) + " GEMMs" +
                  (m.collectives.is_null()
                       ? std::string(", no collectives")
                       : ", " + std::to_string(m.collectives["ops"].size()) + " collectives") +
                  ")");
}

}  // namespace

int run_calibration(RunOptions o, int argc, char** argv) {
  if (o.plan_only) return print_plan(o);
  calib::blas_single_thread();
  resolve_options(o);
  Run r(o);
#ifdef DDPSIM_HAVE_GLOO
  const auto me = comm::rank_from_env();
  if (!me && o.nproc > 1) return launch_ranks(o, argc, argv);
  std::unique_ptr<comm::Communicator> c;
  if (me) {
    r.rank = me->rank;
    r.world = me->world_size;
    r.local_rank = me->local_rank;
    if (r.world > 1) {
      const auto timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
      c = o.backend == "cuda" ? comm::make_nccl(*me, timeout) : comm::make_gloo(*me, timeout);
    }
  }
  r.sync = [&c] {
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
  r.sync = [] {};
#endif
  r.lead = r.rank == 0;
  r.device = o.backend == "cuda" ? "cuda:" + std::to_string(r.local_rank) : std::string("cpu");

  // What to time.
  std::optional<model::Scenario> scenario;
  const std::vector<calib::PlannedGemm> plan = plan_of(o, scenario);
  const std::vector<model::DType> dtypes = dtypes_of(o);
  if (scenario && o.backend == "cpu") {
    const model::DType cd = model::compute_dtype(scenario->training.precision);
    if (cd != model::DType::kFp32) {
      r.notes.push_back(std::string("the scenario computes in ") + model::dtype_name(cd) +
                        "; OpenBLAS sgemm timed in fp32");
    }
  }
  r.t = timing_of(o);

  Measured m;
  m.bandwidth = detail::measure_bandwidth(r);
  m.gemms = detail::measure_gemms(r, plan, dtypes);
  m.kernels = detail::measure_kernels(r, m.bandwidth);
#ifdef DDPSIM_HAVE_GLOO
  if (c && o.collectives) m.collectives = detail::measure_collectives(r, *c, *me);
  if (c && o.collectives && o.backend == "cpu")
    m.interference = detail::interference_section(r, *c, plan);
  if (c) {
    m.comm_backend = c->backend();
    m.comm_version = c->version();
  }
#endif
  if (r.lead) write_profile(r, m);
  r.sync();
  return 0;
}

}  // namespace ddpsim::calib
