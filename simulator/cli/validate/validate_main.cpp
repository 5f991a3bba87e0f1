// ddpsim-validate (`ddpsim validate`): predict a scenario on this machine's calibration profile
// with both engines, run it for real with ddpsim-exec (or, --runner torch, as a real PyTorch DDP
// job), and tabulate predicted vs measured.
//
//   ddpsim-validate SCENARIO.json [--nproc N] [--profile P]... [--calibrate] [--steps S]
//                   [--repeat R] [--recalibrate-each] [--efficiency] [--netns-launch SCRIPT]
//                   [--out F] [--markdown M]
//   ddpsim-validate SCENARIO.json --runner torch [--min-seconds S] [...]   (real PyTorch DDP:
//                   torch_runner.hpp; every run measures at least S seconds of steps, default 3)
//   ddpsim-validate SCENARIO.json --backend cuda [--runner torch] [--profile GPU.json] [--steps S]
//                   [--out F]  (its GPT-2 on one GPU, by ddpsim-exec or PyTorch:
//                   cuda_validation.hpp)
//   ddpsim-validate SCENARIO.json [--runner torch] --points-dir DIR   (write the points, stop)
//   ddpsim-validate SCENARIO.json [--runner torch] --profile P --predict-only   (the predictions
//                   alone: what `ddpsim predict SCENARIO.json --profile P` gives)
//   ddpsim-validate SCENARIO.json --trace rank0.pt.trace.json.gz [--trace ...] [--extrapolate]
//                   [--out F]  (the prediction and the replay against the user's own profiler
//                   traces, --extrapolate: the traced compute over the sweep: trace_compare.hpp)
//
// Every point is predicted through the run API alone (predict_validation_point): exactly what
// `ddpsim predict SCENARIO.json --profile P` gives for it, the profile's sections (a torch
// calibration included) applied by the Predictor; validate composes no cost of its own.
// Per sweep point (bucket sizes, widths, batches, cluster.gpus...): step time, forward, backward,
// exposed communication, optimizer, summed communication and every bucket's end time, each as
// analytic and event prediction, measurement (the median over every measured step of every
// repetition) and their relative errors (predicted - measured) / measured. Points may differ in
// rank count (a cluster.gpus sweep): each rank count gets its own profile — a --profile measured
// on that many ranks, else results/profile-<host>.json when it was, else `ddpsim-calibrate
// --backend cpu --quick` on the scenario at that rank count (also with --calibrate); calibrated
// profiles are kept beside the output. --repeat R runs every point R times, round-robin over
// the points, so that drift of a loaded machine spreads over all points instead of biasing the
// last ones; every step quantity then reports its run-to-run spread (min/median/max of the runs'
// medians, relative half-range) and a warning line where that spread exceeds the |error| it
// reports ("the error is within the noise"). --recalibrate-each also calibrates before every
// repetition and predicts each on its own calibration (the spread over the calibrations).
// results/profile-<host>.json is used only when its machine fingerprint is this machine's
// (model/profile/machine_match.hpp); a --profile from another machine is used with a warning line.
// ddpsim-exec runs with --noise-scale false (the simulator does not model the noise-scale norms,
// which add a pass over the gradients to backward).
//
// --efficiency also runs every point as N independent processes (ddpsim-exec --independent:
// the same per-rank work, all ranks at once, no collectives), alternating DDP and independent
// runs within each repetition (order flipped every repetition), and reports the DDP overhead per
// step and per bucket with a paired ratio and its CI (a point's "efficiency" block).
// Where the sweep has a parallelism.bucket_cap_mb axis, "bucket_choice" groups the points that
// differ only in the cap: per cap the median step with a 95% order-statistic CI (stats.hpp),
// the measured best set and whether the predicted best lies in it.
// --netns-launch SCRIPT runs every multi-rank child (calibration and executor) under
// calibrate/netns/netns-launch.sh, one rank per network namespace of scripts/netns-lab.sh.
//
// The children (ddpsim-calibrate, ddpsim-exec) are the binaries beside this one; a missing one
// or a failing run is named on one line, exits 1 and writes no file. The output is written
// atomically (default results/validation-<host>-<YYYYMMDD>.json); --markdown writes the tables
// (rows and tables: report.hpp).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/atomic_file.hpp"
#include "model/cli_validators.hpp"
#include "model/error.hpp"
#include "model/interrupt.hpp"
#include "model/profile/profile.hpp"
#include "model/run_context.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/cli/validate/children.hpp"
#include "simulator/cli/validate/cuda_validation.hpp"
#include "simulator/cli/validate/options.hpp"
#include "simulator/cli/validate/points.hpp"
#include "simulator/cli/validate/profiles.hpp"
#include "simulator/cli/validate/report.hpp"
#include "simulator/cli/validate/torch_runner.hpp"
#include "simulator/cli/validate/trace_compare.hpp"
#include "simulator/report.hpp"

namespace ddpsim::validate {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Every file this run reads (the outputs are checked against them: check_outputs).
std::vector<std::string> inputs_of(const Options& o) {
  std::vector<std::string> in = {o.scenario, o.netns_launch};
  in.insert(in.end(), o.profiles.begin(), o.profiles.end());
  in.insert(in.end(), o.traces.begin(), o.traces.end());
  return in;
}

void check_outputs(const Options& o) {
  std::vector<std::string> in = inputs_of(o);
  model::check_output_path("--torch-trace", o.torch_trace, in);
  in.push_back(o.torch_trace);
  model::check_output_path("--markdown", o.markdown, in);
  in.push_back(o.markdown);
  model::check_output_path("--out", o.out, in);
}

// The run's checks of option combinations, before anything is calibrated or measured.
void check_run_options(const Options& o, bool torch) {
  if (!o.netns_launch.empty() && access(o.netns_launch.c_str(), R_OK) != 0) {
    throw InputError(o.netns_launch, "", "a readable netns-launch.sh", "missing");
  }
  if (!torch && o.min_seconds >= 0) {
    throw UnsupportedError(
        "--min-seconds lengthens the torch runner's runs (--runner torch); ddpsim-exec "
        "measures exactly --steps");
  }
  if (torch && !o.netns_launch.empty()) {
    throw UnsupportedError(
        "--runner torch runs its ranks on this host; --netns-launch is for "
        "--runner exec");
  }
}

// --predict-only: what validate would predict, measuring nothing (`ddpsim predict --profile`'s
// results document).
int predict_only(const Options& o, const model::Scenario& base,
                 const std::vector<model::Scenario>& expanded, int steps, const fs::path& tmp) {
  if (o.profiles.empty()) {
    throw UnsupportedError("--predict-only predicts on a given --profile; it calibrates nothing");
  }
  const std::map<int, ProfileChoice> profiles =
      choose_profiles(o, base, expanded, (tmp / "v.json").string(), tmp);
  json results = json::array();
  for (const model::Scenario& s : expanded) {
    const int ranks = o.nproc > 0 ? o.nproc : s.cluster.gpus;
    json r = predict_validation_point(o, base, s, profiles.at(ranks).path, steps).analytic_json;
    if (!s.point.empty()) r["sweep_point"] = s.point;  // as ddpsim predict labels its points
    results.push_back(std::move(r));
  }
  const std::string text = json{{"results", results}}.dump(2) + "\n";
  if (!o.out.empty()) model::write_file_atomic(o.out, text);
  std::cout << text;
  return 0;
}

// --runner torch, before any calibration or measurement: PyTorch must be able to run every
// point, and the module it builds must be ddpsim's workload (torch_runner.hpp). Its facts.
json check_torch_points(const Options& o, const model::Scenario& base,
                        const std::vector<model::Scenario>& expanded, const fs::path& tmp) {
  std::vector<TorchPointFiles> files;
  for (std::size_t i = 0; i < expanded.size(); ++i) {
    Point p;
    p.doc = point_scenario(o, base, expanded[i]);
    p.workload = workload_json(expanded[i]);
    write_point_files(p, i, tmp);
    const std::string name =
        expanded[i].point.empty() ? base.file : base.file + " point " + expanded[i].point.dump();
    files.push_back({point_file(tmp, i), workload_file(tmp, i), name});
  }
  return torch_check_points(files, tmp / "torch-check.log");
}

// --points-dir: the files the runner would measure, to run it by hand (e.g. under torchrun).
// All of them or none: a write that fails (a full disk) or a SIGINT/SIGTERM removes the files
// already written, and the failure is one line, exit 2.
int write_points_dir(const Options& o, const model::Scenario& base,
                     const std::vector<model::Scenario>& expanded, const json& torch_facts) {
  const bool torch = o.runner == "torch";
  std::error_code ec;
  if (fs::exists(o.points_dir, ec) && !fs::is_directory(o.points_dir, ec)) {
    throw Error("--points-dir " + o.points_dir + ": is not a folder");
  }
  fs::create_directories(o.points_dir, ec);
  if (ec)
    throw Error("--points-dir " + o.points_dir + ": cannot be created (" + ec.message() + ")");
  // No point file may replace an input (a scenario named point-0.json in that folder).
  for (std::size_t i = 0; i < expanded.size(); ++i) {
    model::check_output_path("--points-dir", point_file(o.points_dir, i).string(), {o.scenario});
    if (torch) {
      model::check_output_path("--points-dir", workload_file(o.points_dir, i).string(),
                               {o.scenario});
    }
  }
  model::RunOutputs outputs;
  std::string listing;
  for (std::size_t i = 0; i < expanded.size(); ++i) {
    Point p;
    p.doc = point_scenario(o, base, expanded[i]);
    if (torch) {
      p.workload = workload_json(expanded[i]);
      apply_runner_defaults(p.doc, o.runner, torch_facts);
    }
    try {
      write_point_files(p, i, o.points_dir, &outputs);
    } catch (const model::FileWriteError& e) {
      throw Error("--points-dir " + o.points_dir + ": " + e.what());
    }
    listing += point_file(o.points_dir, i).string() +
               (torch ? " --workload " + workload_file(o.points_dir, i).string() : "") + "  " +
               label_text(expanded[i].point, o.nproc > 0 ? o.nproc : expanded[i].cluster.gpus) +
               "\n";
  }
  outputs.keep();
  std::cout << listing;
  return 0;
}

// The measurements: repetitions round-robin over the points; with --efficiency each repetition
// runs DDP and independent back to back, the order flipped every repetition. Returns the
// --recalibrate-each calibrations.
json measure_points(const Options& o, const Options& first, const model::Scenario& base,
                    const std::vector<model::Scenario>& expanded,
                    const std::map<int, ProfileChoice>& profiles, std::vector<Point>& points,
                    int steps, const json& torch_facts, const fs::path& exec, const fs::path& tmp) {
  const bool torch = o.runner == "torch";
  const int repeat = o.repeat;
  json recalibrations = json::array();
  for (int rep = 0; rep < repeat; ++rep) {
    if (o.recalibrate_each) {
      // Each repetition predicts on its own calibration, made just before it: the spread of the
      // predictions over the calibrations is the calibration's own noise.
      std::map<int, ProfileChoice> mine = profiles;
      if (rep > 0) {
        const fs::path dir = tmp / ("rep-" + std::to_string(rep + 1));
        fs::create_directories(dir);
        mine = choose_profiles(first, base, expanded, (dir / "v.json").string(), dir);
      }
      for (std::size_t i = 0; i < points.size(); ++i) {
        const Point fresh =
            rep == 0 ? points[i]
                     : predict_validation_point(o, base, expanded[i], mine.at(points[i].ranks).path,
                                                steps, torch_facts);
        record_prediction(points[i], fresh);
      }
      for (const auto& [ranks, c] : mine) {
        recalibrations.push_back(
            {{"repetition", rep + 1}, {"ranks", ranks}, {"source", c.how}, {"file", c.path}});
      }
    }
    for (std::size_t i = 0; i < points.size(); ++i) {
      std::cerr << "repetition " << rep + 1 << "/" << repeat << ", point " << i + 1 << "/"
                << points.size() << " " << label_text(points[i].label, points[i].ranks) << ": "
                << (torch ? "PyTorch DDP" : "ddpsim-exec") << " (" << steps << " steps"
                << (min_seconds(o) > 0 ? ", at least " + json(min_seconds(o)).dump() + " s" : "")
                << ")" << (o.efficiency ? " x2" : "") << "...\n";
      const bool indep_first = o.efficiency && rep % 2 == 1;
      if (indep_first) measure(o, points[i], i, true, steps, exec, tmp);
      measure(o, points[i], i, false, steps, exec, tmp);
      if (o.efficiency && !indep_first) measure(o, points[i], i, true, steps, exec, tmp);
    }
  }
  return recalibrations;
}

// The validation document, the kept profiles and the tables on standard output.
int write_validation(const Options& o, const model::Scenario& base, const std::string& out,
                     const std::map<int, ProfileChoice>& profiles, const std::vector<Point>& points,
                     int steps, const json& torch_facts, json recalibrations,
                     const std::string& load_before, const std::string& load_after) {
  const bool torch = o.runner == "torch";
  const int repeat = o.repeat;
  json out_points = json::array();
  std::string table;
  for (const Point& pt : points) {
    out_points.push_back(point_json(pt, profiles.at(pt.ranks).kept, o.efficiency, repeat, steps));
    table += point_table(pt, out_points.back());
  }
  const json choice = bucket_choice_json(points);
  for (const json& g : choice) {
    table += "bucket choice " + g["group"].dump() + ": measured best " +
             g["measured_best_mb"].dump() + " MB, set " + g["measured_best_set_mb"].dump() +
             ", predicted best " + g["predicted_best_mb_analytic"].dump() + " -> " +
             (g["predicted_best_in_set_analytic"].get<bool>() ? "in the set" : "NOT in the set") +
             "\n";
  }

  json doc;
  doc["context"] =
      sim::context_json(torch ? "analytic+event vs PyTorch DDP" : "analytic+event vs ddpsim-exec");
  doc["context"]["device"] =
      torch ? "this machine's CPUs (PyTorch DDP over gloo, one thread per rank: "
              "calibrate/torch/ddp_runner.py)"
            : "this machine's CPUs (ddpsim-exec, Gloo, OpenBLAS)";
  doc["context"]["runner"] = o.runner;
  if (torch) doc["context"]["torch"] = torch_facts;
  doc["context"]["load_average"] = load_before;
  doc["context"]["load_average_after"] = load_after;
  doc["context"]["nproc"] = o.nproc > 0 ? json(o.nproc) : json("per point (cluster.gpus)");
  doc["context"]["steps"] = steps;
  if (torch) doc["context"]["min_seconds"] = min_seconds(o);
  doc["context"]["repeat"] = repeat;
  doc["context"]["recalibrate_each"] = o.recalibrate_each;
  if (o.recalibrate_each) {
    // The files are temporary (only the first calibration is kept beside the output); the
    // predictions on each are in every row's "predicted_spread".
    for (json& r : recalibrations) r.erase("file");
    doc["recalibrations"] = recalibrations;
  }
  doc["context"]["network"] = o.netns_launch.empty()
                                  ? "loopback TCP (local ranks)"
                                  : "network namespaces (scripts/netns-lab.sh; see its tbf rate)";
  doc["scenario"] = sim::scenario_json(base);
  json prof = json::array();
  for (const auto& [ranks, c] : profiles) {
    prof.push_back({{"ranks", ranks},
                    {"file", c.kept},
                    {"source", c.how},
                    {"machine", machine_json(c.path)},
                    {"context", model::Profile::load(c.path).document().value("context", json())}});
  }
  // One rank count keeps the former single-object layout.
  doc["profile"] = prof.size() == 1 ? prof[0] : prof;
  doc["errors_are"] = "(predicted - measured) / measured; null where nothing was measured";
  doc["points"] = out_points;
  doc["bucket_choice"] = choice;
  sim::check_finite(doc);
  // The kept profiles, the document and the tables: all or none (model/interrupt.hpp).
  model::RunOutputs outputs;
  const auto write = [&](const std::string& f, const std::string& text) {
    model::write_file_atomic(f, text, &outputs);
  };
  for (const auto& [ranks, c] : profiles) {
    if (c.kept == c.path) continue;
    std::ifstream f(c.path);
    std::stringstream ss;
    ss << f.rdbuf();
    write(c.kept, ss.str());
  }
  write(out, doc.dump(2) + "\n");
  if (!o.markdown.empty()) write(o.markdown, markdown(doc));
  outputs.keep();
  std::cout << table;
  for (const auto& [ranks, c] : profiles) {
    std::cout << "profile (" << ranks << " ranks): " << c.kept << " (" << c.how.get<std::string>()
              << ")\n";
  }
  std::cout << "wrote " << out << (o.markdown.empty() ? "" : " and " + o.markdown) << "\n";
  return 0;
}

int run(const Options& o) {
  const model::Scenario base = model::load_scenario(o.scenario);
  const std::vector<model::Scenario> expanded = model::expand_sweep(base);
  const int steps = o.steps > 0 ? o.steps : base.simulation.steps;
  const bool torch = o.runner == "torch";
  check_run_options(o, torch);
  TempDir tmp;
  if (o.predict_only) return predict_only(o, base, expanded, steps, tmp.path);
  const json torch_facts = torch ? check_torch_points(o, base, expanded, tmp.path) : json();
  // --points-dir only writes the points (what to run later): no ddpsim-exec needed here.
  if (!o.points_dir.empty()) return write_points_dir(o, base, expanded, torch_facts);
  const fs::path exec = torch ? fs::path() : sibling("ddpsim-exec");
  const std::string out = !o.out.empty() ? o.out
                                         : "results/validation-" + model::host_name() + "-" +
                                               model::utc_now("%Y%m%d") + ".json";
  if (o.out.empty()) model::check_output_path("--out", out, inputs_of(o));
  if (o.recalibrate_each && !o.profiles.empty()) {
    throw UnsupportedError(
        "--recalibrate-each calibrates every repetition afresh; it does not go with --profile");
  }
  Options first = o;
  first.calibrate = o.calibrate || o.recalibrate_each;
  const std::map<int, ProfileChoice> profiles =
      choose_profiles(first, base, expanded, out, tmp.path);
  std::vector<Point> points;
  for (const model::Scenario& s : expanded) {
    const int ranks = o.nproc > 0 ? o.nproc : s.cluster.gpus;
    points.push_back(
        predict_validation_point(o, base, s, profiles.at(ranks).path, steps, torch_facts));
  }
  const std::string load_before = load_average();
  json recalibrations = measure_points(o, first, base, expanded, profiles, points, steps,
                                       torch_facts, exec, tmp.path);
  const std::string load_after = load_average();
  return write_validation(o, base, out, profiles, points, steps, torch_facts,
                          std::move(recalibrations), load_before, load_after);
}

}  // namespace

}  // namespace ddpsim::validate

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{
      "ddpsim validate: predict (analytic + event, on a calibration profile), run "
      "ddpsim-exec, compare"};
  ddpsim::validate::Options o;
  app.add_option("scenario", o.scenario, "scenario JSON (an MLP; sweeps give one row set each)")
      ->required();
  app.add_option("--nproc", o.nproc, "ranks for every point (default: each point's cluster.gpus)")
      ->check(ddpsim::model::integer_in(1, 64));
  app.add_option("--profile", o.profiles,
                 "calibration profile(s); repeat for several rank counts (default: "
                 "results/profile-<host>.json or a fresh --quick calibration per rank count)");
  app.add_flag("--calibrate", o.calibrate, "always calibrate (ddpsim-calibrate --quick)");
  app.add_option("--steps", o.steps, "measured steps per run (default: simulation.steps)")
      ->check(ddpsim::model::integer_in(1, 100000));
  app.add_option("--min-seconds", o.min_seconds,
                 "with --runner torch: every run measures more than --steps steps when they "
                 "would take less than this many seconds (at most 20x --steps; default 3, 0: "
                 "exactly --steps)")
      ->check(ddpsim::model::number_in(0.0, 3600.0));
  app.add_option("--repeat", o.repeat,
                 "runs per point, round-robin over the points; medians pool every run's steps "
                 "(default 1)")
      ->check(ddpsim::model::integer_in(1, 1000));
  app.add_flag("--recalibrate-each", o.recalibrate_each,
               "calibrate afresh (ddpsim-calibrate --quick) before every repetition and predict "
               "each on its own calibration: rows get the predictions' spread over the "
               "calibrations (not with --profile)");
  app.add_flag("--efficiency", o.efficiency,
               "also run every point as N independent processes (ddpsim-exec --independent), "
               "interleaved, and report the DDP overhead per step and per bucket");
  app.add_option("--netns-launch", o.netns_launch,
                 "run multi-rank children under this calibrate/netns/netns-launch.sh (the lab "
                 "must be up: scripts/netns-lab.sh up N RATE)");
  app.add_option("--runner", o.runner,
                 "what measures: exec (ddpsim-exec, the default) or torch (real PyTorch DDP over "
                 "gloo: calibrate/torch/ddp_runner.py)")
      ->check(CLI::IsMember({"exec", "torch"}));
  app.add_option("--backend", o.backend,
                 "cpu (the default: this machine's ranks) or cuda (the scenario's GPT-2 on one "
                 "GPU by ddpsim-exec --backend cuda, or with --runner torch by PyTorch; exit 77 "
                 "without a device)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--torch-trace", o.torch_trace,
                 "with --backend cuda --runner torch: also record a PyTorch profiler trace "
                 "(Kineto: CPU ops, module regions, CUDA kernels) of 2 steps after the measured "
                 "ones into this .json or .json.gz (readable by --trace)");
  app.add_flag("--no-torch-calibration", o.no_torch_calibration,
               "with --runner torch --calibrate: calibrate the CPU only, without a torch section "
               "(ddpsim-calibrate --backend torch)");
  app.add_flag("--predict-only", o.predict_only,
               "predict every point on the given --profile exactly as a validation would and "
               "print the results (`ddpsim predict --profile --format json`'s), measuring "
               "nothing");
  app.add_option("--points-dir", o.points_dir,
                 "write every point's plain scenario (with --runner torch also ddpsim's workload "
                 "for calibrate/torch/ddp_runner.py) into this folder and stop");
  app.add_option("--out", o.out, "validation JSON (default results/validation-<host>-<date>.json)");
  app.add_option("--markdown", o.markdown, "also write the tables as markdown to this file");
  app.add_option("--trace", o.traces,
                 "compare the scenario's prediction with PyTorch profiler traces of the job "
                 "(one per rank, .json or .json.gz; repeatable) instead of running ddpsim-exec; "
                 "--out is then optional");
  app.add_flag("--extrapolate", o.extrapolate,
               "with --trace: also predict every sweep point (other cluster.gpus, bucket caps, "
               "networks) with the traced compute and optimizer in place, collectives from the "
               "model");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    ddpsim::print_error("ddpsim-validate", e.what());
    return 2;
  }
  try {
    ddpsim::validate::check_outputs(o);  // never onto an input, a FIFO or a device
    if (o.extrapolate && o.traces.empty()) {
      throw ddpsim::InputError(o.scenario, "", "--trace with --extrapolate",
                               "--extrapolate alone (it extrapolates a traced job)");
    }
    if (o.backend == "cuda") {
      if (!o.traces.empty() || o.repeat != 1 || o.efficiency || !o.points_dir.empty() ||
          o.min_seconds >= 0) {
        throw ddpsim::UnsupportedError(
            "--backend cuda runs ddpsim-exec (or, --runner torch, PyTorch) once on one GPU for "
            "exactly --steps; it does not go with --trace, --repeat, --efficiency, --points-dir "
            "or --min-seconds");
      }
      return ddpsim::validate::run_cuda_validation(o);
    }
    if (!o.torch_trace.empty()) {
      throw ddpsim::UnsupportedError(
          "--torch-trace records the torch runner on a GPU: it goes with --backend cuda "
          "--runner torch");
    }
    if (!o.traces.empty()) {
      return ddpsim::validate::run_trace_comparison(o.scenario, o.traces, o.out, o.extrapolate);
    }
    return ddpsim::validate::run(o);
  } catch (const ddpsim::InputError& e) {
    ddpsim::print_error("ddpsim-validate", e.what());
    return 2;
  } catch (const ddpsim::UnsupportedError& e) {
    ddpsim::print_error("ddpsim-validate", e.what());
    return 2;
  } catch (const ddpsim::validate::ChildError& e) {
    ddpsim::print_error("ddpsim-validate", e.what());
    return 1;
  } catch (const ddpsim::Error& e) {  // an output refused or a write that failed: one line
    ddpsim::print_error("ddpsim-validate", e.what());
    return 2;
  } catch (const std::exception& e) {
    ddpsim::print_error("ddpsim-validate", e.what());
    return 1;
  }
}

}  // namespace

// What was printed must reach standard output (a full device fails only at the flush).
int main(int argc, char** argv) {
  // SIGINT/SIGTERM: the children stopped, the temporary folder, temporaries and partial outputs
  // removed, one line, exit 130/143 (model/interrupt.hpp).
  ddpsim::model::install_interrupt_handlers("ddpsim-validate");
  return ddpsim::model::stdout_checked("ddpsim-validate", run_main(argc, argv));
}
