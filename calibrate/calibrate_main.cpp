// ddpsim-calibrate (also `ddpsim calibrate`): measures this machine and writes a profile.
//
//   ddpsim-calibrate [--backend cpu|cuda] [--nproc N] [--scenario S.json] [--quick]
//                    [--gemm-operands cold|warm] [--out results/profile-<host>.json]
//                    [--plan]     list what would be timed (no device needed), time nothing
//   ddpsim-calibrate --backend torch --scenario S.json [--out P.json] [--nproc N] [--quick]
//                    time S's layers, optimizer and torch's gloo all-reduce through PyTorch into
//                    P's "torch" section (P: this machine's CPU profile; torch_calibration.hpp)
//   ddpsim-calibrate import nccl-tests LOG|JSON [--op all_reduce] [--out P.json]
//   ddpsim-calibrate import kineto TRACE.json[.gz] [--out P.json]
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
// This file is the command line and the subcommands; the run itself is calibration_run.cpp.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "calibrate/calibration_run.hpp"
#include "calibrate/context.hpp"
#include "calibrate/fit_check.hpp"
#include "calibrate/gpu_criteria.hpp"
#include "calibrate/torch_calibration.hpp"
#include "model/atomic_file.hpp"
#include "model/cli_validators.hpp"
#include "model/error.hpp"
#include "model/imports/kineto_import.hpp"
#include "model/imports/measurement_import.hpp"
#include "model/interrupt.hpp"
#include "model/profile/profile.hpp"
#include "model/scenario/scenario.hpp"

namespace {

using namespace ddpsim;
using nlohmann::json;

std::string join_args(int argc, char** argv) {
  std::string s = "ddpsim-calibrate";
  for (int i = 1; i < argc; ++i) s += std::string(" ") + argv[i];
  return s;
}

void emit(const json& doc, const std::string& out) {
  if (out.empty()) {
    std::printf("%s\n", doc.dump(2).c_str());
  } else {
    model::write_file_atomic(out, doc.dump(2) + "\n");
    std::fprintf(stderr, "calibrate: wrote %s\n", one_line(out).c_str());
  }
}

// `import nccl-tests FILE`: the log or -J JSON as a profile, its fits summarised on stderr.
// The profile an import wrote, read back by the profile reader. A value it refuses was derived
// from the imported file (a step time, a fit): the error names that file and what in it gave the
// value, not a pointer of this tool's own output (it said "/layer_times/cpu_step_s" of a trace).
model::Profile read_back_imported(const json& doc, const std::string& source, const char* what) {
  try {
    return model::Profile::from_json(doc, source);
  } catch (const InputError& e) {
    throw InputError(source, "",
                     std::string(what) + " whose imported values make a valid profile; its " +
                         e.pointer() + " would be " + e.expected(),
                     e.got());
  }
}

int run_import_nccl_tests(const std::string& nt_file, const std::string& nt_op,
                          const model::NcclTestsLayout& layout, const std::string& nt_out,
                          const std::string& command) {
  model::check_output_path("--out", nt_out, {nt_file});
  json doc = model::imported_profile(model::import_nccl_tests_file(nt_file, nt_op, layout), nullptr,
                                     command);
  const model::Profile p = read_back_imported(doc, nt_file, "an nccl-tests log");
  for (const auto& [name, table] : p.document().at("collectives").at("ops").items()) {
    const json& f = table.at("fit");
    std::fprintf(stderr, "calibrate: %s: %zu rows, %zu fit segment(s), R^2 %.4f\n",
                 one_line(name).c_str(), table.at("rows").size(), f.at("segments").size(),
                 f.at("r_squared").get<double>());
  }
  emit(p.document(), nt_out);
  return 0;
}

// `check-fit PROFILE SWEEP`: the profile's fit against a second sweep; 1 when a size is off.
int run_check_fit(const std::string& cf_profile, const std::string& cf_sweep,
                  const std::string& cf_op, const std::string& cf_above, double cf_tol) {
  const model::Profile p = model::Profile::load(cf_profile);
  const calib::FitCheck r = calib::check_fit(
      p, model::read_json_file(cf_sweep), cf_sweep, *model::parse_collective_op(cf_op),
      static_cast<double>(calib::parse_size(cf_above, "--above")), cf_tol);
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

// `gpu-criteria PROFILES...`: a CUDA calibration against its own peaks; 1 when one is below.
int run_gpu_criteria(const std::vector<std::string>& gc_profiles, double gc_gemm, double gc_copy) {
  std::vector<std::pair<std::string, json>> docs;
  for (const std::string& f : gc_profiles) {
    // The reader checks every key first: a misspelt row is an input error, not a skip.
    docs.emplace_back(f, model::Profile::load(f).document());
  }
  const calib::GpuCriteria r = calib::gpu_criteria(docs, gc_gemm, gc_copy);
  std::printf("%s", calib::format_gpu_criteria(r).c_str());
  return calib::passed(r) ? 0 : 1;
}

// `import kineto FILE`: a profiler trace's layer times as a profile, summarised on stderr.
int run_import_kineto(const std::string& kt_file, const std::string& kt_out,
                      const std::string& command) {
  model::check_output_path("--out", kt_out, {kt_file});
  json doc = model::imported_profile(nullptr, model::import_kineto_file(kt_file), command);
  const model::Profile p = read_back_imported(doc, kt_file, "a profiler trace");
  const json& l = p.document().at("layer_times");
  double fwd = 0, bwd = 0;
  for (const json& x : l.at("layers")) {
    fwd += x.at("forward_s").get<double>();
    bwd += x.at("backward_s").get<double>();
  }
  std::fprintf(stderr,
               "calibrate: %s trace, %d step(s) of %.3f ms: %zu layer(s)%s, forward %.3f ms, "
               "backward %.3f ms per step\n",
               l.at("device").get<std::string>().c_str(), l.at("steps").get<int>(),
               l.at("step_s").get<double>() * 1e3, l.at("layers").size(),
               l.at("whole_model").get<bool>() ? " (the whole model)" : "", fwd * 1e3, bwd * 1e3);
  if (l.contains("communication")) {
    const json& c = l.at("communication");
    std::fprintf(stderr, "calibrate: %.1f collective(s) per step (%s): %.3f ms, %.3f ms exposed\n",
                 c.at("collectives_per_step").get<double>(),
                 c.at("source").get<std::string>().c_str(), c.at("comm_s").get<double>() * 1e3,
                 c.at("exposed_s").get<double>() * 1e3);
  }
  for (const json& w : l.at("warnings")) {
    std::fprintf(stderr, "calibrate: warning: %s\n", w.get<std::string>().c_str());
  }
  emit(p.document(), kt_out);
  return 0;
}

int run_main(int argc, char** argv) {
  CLI::App app{
      "ddpsim-calibrate: measure this machine (GEMMs, memory bandwidth, collectives) "
      "into a profile, or import nccl-tests / PyTorch profiler output"};
  calib::RunOptions o;
  o.command = join_args(argc, argv);
  app.add_option("--backend", o.backend,
                 "cpu (OpenBLAS + Gloo), cuda (cuBLAS + NCCL) or torch (the scenario's layers, "
                 "optimizer and gloo all-reduce through PyTorch, into the profile's torch section)")
      ->check(CLI::IsMember({"cpu", "cuda", "torch"}));
  app.add_option("--nproc", o.nproc, "ranks on this host (default 2 on cpu, the GPUs on cuda)")
      ->check(ddpsim::model::integer_in(1, 1024));
  app.add_option("--scenario", o.scenario, "time the GEMMs this scenario runs (all sweep batches)");
  app.add_flag("--quick", o.quick, "fewer repeats, sizes up to 4 MiB (under a minute)");
  app.add_flag("--plan", o.plan_only,
               "list the GEMMs a run would time and its timing budget; time nothing");
  app.add_option("--out", o.out, "profile to write (default results/profile-<host>.json)");
  app.add_option("--timeout-s", o.timeout_s, "per-collective timeout")
      ->check(ddpsim::model::positive_number(1e6));
  app.add_option("--max-bytes", o.max_bytes,
                 "largest collective size (K/M/G; default 256M, 4M with --quick)");
  app.add_option("--iters", o.iters, "timed calls per collective size (default 20, 5 quick)")
      ->check(ddpsim::model::integer_in(1, 100000));
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
  model::NcclTestsLayout nt_layout;
  nt->add_option("--ranks", nt_layout.ranks,
                 "ranks of the run, for a log without rank lines (a table cut from a larger log)")
      ->check(CLI::Range(2, 10000000));
  nt->add_option("--nodes", nt_layout.nodes,
                 "nodes of the run, for a log without rank lines: a log of 2 or more nodes beside "
                 "a preset fits its NIC (ddpsim predict --profile)")
      ->check(CLI::Range(1, 10000000));
  auto* kt = imp->add_subcommand(
      "kineto", "a PyTorch profiler (Kineto) trace: per-step layer times and collectives");
  kt->add_option("file", kt_file, "the Chrome-trace JSON, plain or gzip (.pt.trace.json.gz)")
      ->required();
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
  cf->add_option("--tolerance", cf_tol, "largest relative error")
      ->check(ddpsim::model::number_in(0.0, 10.0));
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
  gc->add_option("--gemm-min", gc_gemm, "fraction of the GEMM peak")
      ->check(ddpsim::model::number_in(0.0, 1.0));
  gc->add_option("--copy-min", gc_copy, "fraction of the copy bandwidth")
      ->check(ddpsim::model::number_in(0.0, 1.0));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    // One line, like every other input error (CLI11's own exit() adds a second line).
    ddpsim::print_error("ddpsim-calibrate", e.what());
    return 2;
  }
  o.collectives = !no_coll;

  try {
    if (nt->parsed()) {
      return run_import_nccl_tests(nt_file, nt_op, nt_layout, nt_out, o.command);
    }
    if (cf->parsed()) return run_check_fit(cf_profile, cf_sweep, cf_op, cf_above, cf_tol);
    if (gc->parsed()) return run_gpu_criteria(gc_profiles, gc_gemm, gc_copy);
    if (kt->parsed()) return run_import_kineto(kt_file, kt_out, o.command);
    if (o.backend == "torch") return calib::run_torch_calibration(o);
    return calib::run_calibration(o, argc, argv);
  } catch (const InputError& e) {
    ddpsim::print_error("ddpsim-calibrate", e.what());
    return 2;
  } catch (const UnsupportedError& e) {
    ddpsim::print_error("ddpsim-calibrate", e.what());
    return 2;
  } catch (const Error& e) {  // an output refused or not writable (model/atomic_file.hpp)
    ddpsim::print_error("ddpsim-calibrate", e.what());
    return 2;
  } catch (const std::exception& e) {
    ddpsim::print_error("ddpsim-calibrate", e.what());
    return 1;
  }
}

}  // namespace

// What was printed must reach standard output (a full device fails only at the flush).
int main(int argc, char** argv) {
  // SIGINT/SIGTERM: ranks stopped, temporaries removed, one line, exit 130/143.
  ddpsim::model::install_interrupt_handlers("ddpsim-calibrate");
  return ddpsim::model::stdout_checked("ddpsim-calibrate", run_main(argc, argv));
}
