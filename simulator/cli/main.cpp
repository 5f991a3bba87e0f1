// ddpsim: the command-line front end.
//
//   ddpsim predict SCENARIO.json [--engine analytic|event] [--format table|json|csv]
//                  [--out FILE.json] [--trace OUT.json]
//   ddpsim plan SCENARIO.json [--format table|json] [--out FILE.json]
//   ddpsim schema [--format json|markdown]
//   ddpsim collective --hardware dgx-h100 --gpus 16 [--op all_reduce] [--min-bytes 8]
//                     [--max-bytes 8G] [--algorithm auto]
//   ddpsim <verb> ...   runs ddpsim-<verb> (calibrate, exec, validate, plot, gui) when built.
//
// Exit codes: 0 ok, 2 bad input (one line on stderr naming file and JSON pointer), 1 internal.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "model/error.hpp"
#include "model/scenario.hpp"
#include "model/units.hpp"
#include "simulator/analytic.hpp"
#include "simulator/event_dp.hpp"
#include "simulator/planner.hpp"
#include "simulator/report.hpp"
#include "simulator/trace.hpp"

namespace {

using namespace ddpsim;
using nlohmann::json;

int run_predict(const std::string& path, const std::string& engine_opt, const std::string& format,
                const std::string& out, const std::string& trace) {
  model::Scenario s = model::load_scenario(path);
  if (!engine_opt.empty()) {
    s.simulation.engine = engine_opt == "event" ? model::Engine::kEvent : model::Engine::kAnalytic;
  }
  const bool event = s.simulation.engine == model::Engine::kEvent;
  if (!trace.empty() && !event) throw Error("--trace needs --engine event");
  std::vector<model::Scenario> points = model::expand_sweep(s);
  for (auto& p : points) p.simulation.engine = s.simulation.engine;
  std::vector<sim::Prediction> predictions;
  predictions.reserve(points.size());
  // One Predictor per distinct workload and hardware: its caches (buckets, layer times,
  // topologies) are shared across the sweep points that only move other knobs.
  std::optional<sim::Predictor> predictor;
  const model::Workload* last_workload = nullptr;
  std::string last_hw;
  for (const model::Scenario& p : points) {
    const std::string hw_key = p.doc.at("hardware").dump();
    if (!predictor || last_workload != p.workload.get() || hw_key != last_hw) {
      predictor.emplace(p);
      last_workload = p.workload.get();
      last_hw = hw_key;
    }
    if (!event) {
      predictions.push_back(predictor->predict(p.cluster, p.training, p.parallelism, p.gpu_hour_usd,
                                               p.simulation.jitter_cv));
      continue;
    }
    // The analytic model supplies everything that is not a timing (memory, lr, ...); the event
    // simulator replaces the timings.
    sim::Prediction pred =
        predictor->predict(p.cluster, p.training, p.parallelism, p.gpu_hour_usd, 0.0);
    const sim::StepPlan plan = predictor->plan(p.cluster, p.training, p.parallelism);
    sim::EventOptions o;
    o.steps = p.simulation.steps;
    o.jitter_cv = p.simulation.jitter_cv;
    o.jitter_distribution = p.simulation.jitter_distribution;
    o.seed = p.simulation.seed;
    o.straggler_rank = p.simulation.straggler_rank;
    o.straggler_slowdown = p.simulation.straggler_slowdown;
    o.record_timeline = !trace.empty();
    const sim::EventResult r = sim::simulate_event(plan, o);
    sim::apply_event_result(pred, r, o);
    if (p.simulation.straggler_rank >= p.cluster.gpus) {
      pred.warnings.push_back("straggler_rank " + std::to_string(p.simulation.straggler_rank) +
                              " is not among the " + std::to_string(p.cluster.gpus) +
                              " ranks: no straggler");
    }
    if (!trace.empty()) {
      // One file per sweep point: trace.json, or trace.1.json, trace.2.json, ... for sweeps.
      std::filesystem::path tp(trace);
      if (points.size() > 1) {
        tp.replace_extension("." + std::to_string(predictions.size() + 1) +
                             std::filesystem::path(trace).extension().string());
      }
      sim::write_chrome_trace(tp.string(), r.timeline,
                              {{"scenario", s.name},
                               {"file", path},
                               {"gpus", p.cluster.gpus},
                               {"point", p.point},
                               {"steps", o.steps},
                               {"jitter_cv", o.jitter_cv},
                               {"seed", o.seed},
                               {"ranks_shown", "the first 64 ranks and the slowest one"}});
    }
    predictions.push_back(std::move(pred));
  }
  const json doc = sim::results_json(s, points, predictions, event ? "event" : "analytic");
  if (!out.empty()) sim::write_file_atomic(out, doc.dump(2) + "\n");
  if (format == "json") {
    std::cout << doc.dump(2) << "\n";
  } else if (format == "csv") {
    std::cout << sim::results_csv(points, predictions);
  } else {
    std::cout << sim::results_table(s, points, predictions);
    std::vector<std::string> seen;
    for (const auto& p : predictions) {
      for (const auto& w : p.warnings) {
        if (std::find(seen.begin(), seen.end(), w) == seen.end()) seen.push_back(w);
      }
    }
    for (const auto& w : seen) std::cout << "note: " << w << "\n";
    if (!out.empty()) std::cout << "wrote " << out << "\n";
  }
  return 0;
}

// Exit 0 also when nothing is feasible: "feasible": 0 with the counts per reason is an answer.
int run_plan(const std::string& path, const std::string& format, const std::string& out) {
  const model::Scenario s = model::load_scenario(path);
  const sim::PlanResult r = sim::make_plan(s);
  const json doc = sim::plan_json(s, r);
  if (!out.empty()) sim::write_file_atomic(out, doc.dump(2) + "\n");
  if (format == "json") {
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << sim::plan_table(s, r);
    if (!out.empty()) std::cout << "wrote " << out << "\n";
  }
  return 0;
}

int run_schema(const std::string& format) {
  if (format == "markdown") {
    std::cout << model::to_markdown(model::scenario_keys());
  } else {
    std::cout << model::to_json_schema(model::scenario_keys()).dump(2) << "\n";
  }
  return 0;
}

double parse_size(const std::string& text, const char* option) {
  // 8, 64K, 32M, 8G (powers of 1024, as nccl-tests' -b/-e accept).
  if (text.empty()) throw Error(std::string(option) + ": expected a positive size, got nothing");
  double mult = 1;
  std::string digits = text;
  switch (text.back()) {
    case 'K':
    case 'k':
      mult = kKiB;
      digits.pop_back();
      break;
    case 'M':
    case 'm':
      mult = kMiB;
      digits.pop_back();
      break;
    case 'G':
    case 'g':
      mult = kGiB;
      digits.pop_back();
      break;
    default:
      break;
  }
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(digits, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != digits.size() || !(v > 0)) {
    throw Error(std::string(option) + ": expected a positive size like 8, 64K, 32M or 8G, got \"" +
                text + "\"");
  }
  return v * mult;
}

int run_collective(const std::string& hardware, int gpus, const std::string& op,
                   const std::string& min_b, const std::string& max_b, const std::string& algo) {
  const double lo = parse_size(min_b, "--min-bytes");
  const double hi = parse_size(max_b, "--max-bytes");
  if (lo > hi) {
    throw Error("--min-bytes (" + min_b + ") must not exceed --max-bytes (" + max_b + ")");
  }
  json section;
  if (!hardware.empty() && hardware.front() == '{') {
    try {
      section = json::parse(hardware);
    } catch (const json::exception&) {
      throw Error(
          "--hardware: expected a preset name or a JSON hardware section, got invalid JSON");
    }
  } else {
    section = {{"preset", hardware}};
  }
  json doc = {{"model", {{"mlp", {{"widths", {1, 1}}}}}},
              {"hardware", section},
              {"cluster", {{"gpus", gpus}}},
              {"training", {{"per_gpu_batch", 1}}},
              {"parallelism", {{"algorithm", algo}}}};
  const model::Scenario s = model::parse_scenario(doc, "<command line>");
  const auto bw = model::Topology(s.hardware, s.cluster.gpus).bandwidths();
  sim::Collective c = sim::Collective::kAllReduce;
  if (op == "reduce_scatter") c = sim::Collective::kReduceScatter;
  if (op == "all_gather") c = sim::Collective::kAllGather;
  if (op == "broadcast") c = sim::Collective::kBroadcast;
  std::printf("# %s on %d x %s (%s), %d node(s), model prediction\n", op.c_str(), gpus,
              s.hardware.gpu.name.c_str(), s.hardware.name.c_str(), bw.nodes);
  std::printf("# %12s %12s %8s %13s %10s %8s %8s\n", "size(B)", "count", "type", "algorithm",
              "time(us)", "algbw", "busbw");
  for (double b = lo; b <= hi; b *= 2) {
    const auto cost = sim::collective_cost(c, bw, s.hardware, b, s.parallelism.algorithm);
    std::printf("  %12.0f %12.0f %8s %13s %10.2f %8.2f %8.2f\n", b, b / 4, "float",
                model::algorithm_name(cost.algorithm), cost.time_s * 1e6, cost.algbw_gbytes_per_s,
                cost.busbw_gbytes_per_s);
  }
  return 0;
}

// git-style dispatch: `ddpsim calibrate ...` runs ddpsim-calibrate beside this binary.
int dispatch(const std::string& verb, int argc, char** argv) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto tool = self.parent_path() / ("ddpsim-" + verb);
  if (!ec && std::filesystem::exists(tool)) {
    std::vector<char*> args;
    std::string name = tool.string();
    args.push_back(name.data());
    for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    execv(name.c_str(), args.data());
    std::fprintf(stderr, "ddpsim: cannot run %s\n", name.c_str());
    return 1;
  }
  static const std::vector<std::pair<std::string, std::string>> known = {
      {"calibrate", "the calibration issue (OpenBLAS/cuBLAS GEMMs, Gloo/NCCL sweeps)"},
      {"exec", "the executor issue (a real DDP run over Gloo or NCCL)"},
      {"validate", "the executor issue (predict, run, compare)"},
      {"plot", "the GUI issue (Qt Charts rendered headless)"},
      {"gui", "the GUI issue (Qt6 Widgets + Charts)"}};
  for (const auto& [k, what] : known) {
    if (k == verb) {
      std::fprintf(stderr,
                   "ddpsim: '%s' is not built in this version (ddpsim-%s not found beside %s); "
                   "it arrives with %s\n",
                   verb.c_str(), verb.c_str(), self.string().c_str(), what.c_str());
      return 2;
    }
  }
  std::fprintf(stderr,
               "ddpsim: unknown command '%s' (commands: predict, schema, collective, calibrate, "
               "exec, validate, plot, gui, plan)\n",
               verb.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2) {
    const std::string verb = argv[1];
    if (verb != "predict" && verb != "plan" && verb != "schema" && verb != "collective" &&
        verb.front() != '-') {
      return dispatch(verb, argc, argv);
    }
  }
  CLI::App app{"ddpsim: predict data-parallel training step time, memory and scaling"};
  app.set_version_flag("--version", std::string("ddpsim ") + DDPSIM_VERSION);
  app.require_subcommand(1);

  std::string path, engine, format = "table", out, trace;
  auto* predict = app.add_subcommand("predict", "predict a scenario (and its sweep)");
  predict->add_option("scenario", path, "scenario JSON file")->required();
  predict->add_option("--engine", engine, "analytic | event (overrides simulation.engine)")
      ->check(CLI::IsMember({"analytic", "event"}));
  predict->add_option("--format", format, "table | json | csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  predict->add_option("--out", out, "also write the JSON results to this file (atomically)");
  predict->add_option("--trace", trace,
                      "write a Chrome trace (Perfetto) of the simulated steps: needs --engine "
                      "event; ranks 0-63 and the slowest; sweeps write OUT.1.json, OUT.2.json...");

  std::string plan_path, plan_format = "table", plan_out;
  auto* plan = app.add_subcommand(
      "plan",
      "best N and knobs under memory, deadline and budget; Pareto front of time vs GPU-hours");
  plan->add_option("scenario", plan_path, "scenario JSON file (candidates in its \"plan\" section)")
      ->required();
  plan->add_option("--format", plan_format, "table | json")
      ->check(CLI::IsMember({"table", "json"}));
  plan->add_option("--out", plan_out, "also write the JSON plan to this file (atomically)");

  std::string schema_format = "json";
  auto* schema = app.add_subcommand("schema", "print the scenario JSON Schema or key reference");
  schema->add_option("--format", schema_format, "json | markdown")
      ->check(CLI::IsMember({"json", "markdown"}));

  std::string hw = "dgx-h100", op = "all_reduce", min_b = "8", max_b = "1G", algo = "auto";
  int gpus = 8;
  auto* coll = app.add_subcommand("collective", "nccl-tests-style table of modelled collectives");
  coll->add_option("--hardware", hw, "system preset name or a JSON hardware section");
  coll->add_option("--gpus", gpus, "ranks")->check(CLI::Range(1, 10000000));
  coll->add_option("--op", op, "all_reduce | reduce_scatter | all_gather | broadcast")
      ->check(CLI::IsMember({"all_reduce", "reduce_scatter", "all_gather", "broadcast"}));
  coll->add_option("--min-bytes", min_b, "smallest size (8, 64K, 32M, 8G)");
  coll->add_option("--max-bytes", max_b, "largest size");
  coll->add_option("--algorithm", algo, "auto | ring | tree | hierarchical | nvls");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, like every other input error (CLI11's own exit() adds a second line).
    std::string msg = e.what();
    for (char& c : msg) {
      if (c == '\n') c = ' ';
    }
    std::fprintf(stderr, "ddpsim: %s (see ddpsim --help)\n", msg.c_str());
    return 2;
  }
  try {
    if (*predict) return run_predict(path, engine, format, out, trace);
    if (*plan) return run_plan(plan_path, plan_format, plan_out);
    if (*schema) return run_schema(schema_format);
    if (*coll) return run_collective(hw, gpus, op, min_b, max_b, algo);
  } catch (const ddpsim::Error& e) {
    std::fprintf(stderr, "ddpsim: %s\n", e.what());
    return 2;
  } catch (const nlohmann::json::exception& e) {
    std::fprintf(stderr, "ddpsim: bad JSON: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddpsim: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
