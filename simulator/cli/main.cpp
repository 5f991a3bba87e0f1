// ddpsim: the command-line front end.
//
//   ddpsim predict SCENARIO.json [--engine analytic|event] [--format table|json|csv]
//                  [--out FILE.json] [--trace OUT.json]
//   ddpsim plan SCENARIO.json [--format table|json|csv] [--out FILE.json]
//   (predict, plan and lr: SCENARIO may be - for standard input; --set KEY=VALUE, repeatable)
//   ddpsim schema [--format json|markdown]
//   ddpsim collective --hardware dgx-h100 --gpus 16 [--op all_reduce] [--min-bytes 8]
//                     [--max-bytes 8G] [--algorithm auto]
//   ddpsim import deepspeed DS_CONFIG.json [--scenario BASE.json] [--gpus N] [--out OUT.json]
//   ddpsim import torch KNOBS.json [--scenario BASE.json] [--out OUT.json]
//   ddpsim import torchtitan JOB.toml [--scenario BASE.json] [--gpus N] [--out OUT.json]
//   ddpsim import trace RANK0.pt.trace.json[.gz] [MORE...] [--out OUT.json]
//                   (a scenario drafted from a DDP job's profiler traces: import_verb.hpp)
//   ddpsim lr SCENARIO.json [--steps N] [--format table|json]
//   ddpsim published --out-dir results/published
//   ddpsim fidelity --out-dir results
//   ddpsim <verb> ...   runs ddpsim-<verb> (calibrate, exec, validate, plot, gui) when built.
//
// Exit codes: 0 ok, 2 bad input (one line on stderr naming file and JSON pointer), 1 internal
// or a plan with no feasible configuration.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "model/atomic_file.hpp"
#include "model/cli_validators.hpp"
#include "model/error.hpp"
#include "model/interrupt.hpp"
#include "model/process_env.hpp"
#include "model/scenario/scenario.hpp"
#include "model/scenario/scenario_keys.hpp"
#include "model/schema.hpp"
#include "model/units.hpp"
#include "simulator/cli/collective_verb.hpp"
#include "simulator/cli/import_verb.hpp"
#include "simulator/cli/scenario_input.hpp"
#include "simulator/collectives/collective.hpp"
#include "simulator/fidelity/fidelity.hpp"
#include "simulator/fidelity/published_report.hpp"
#include "simulator/planner.hpp"
#include "simulator/prediction/lr_schedule.hpp"
#include "simulator/prediction/uncertainty.hpp"
#include "simulator/report.hpp"
#include "simulator/run.hpp"

namespace {

using namespace ddpsim;
using nlohmann::json;

int run_predict(const std::string& path, const std::vector<std::string>& sets,
                const std::string& profile, const std::string& engine, const std::string& format,
                const std::string& out, const std::string& trace) {
  model::check_output_path("--out", out, {path, trace, profile});
  model::check_output_path("--trace", trace, {path, profile});
  const model::Scenario s = cli::load_cli_scenario(path, sets, profile);
  sim::RunOptions o;
  if (!engine.empty())
    o.engine = engine == "event" ? model::Engine::kEvent : model::Engine::kAnalytic;
  o.trace_path = trace;
  // The traces and --out are one run's files: an interruption or a failure before both are
  // written removes them all (model/interrupt.hpp).
  model::RunOutputs outputs;
  o.outputs = &outputs;
  const sim::Run r = sim::predict(s, o);
  const json doc = sim::run_json(s, r);
  if (!out.empty()) model::write_file_atomic(out, doc.dump(2) + "\n", &outputs);
  outputs.keep();
  if (format == "json") {
    std::cout << doc.dump(2) << "\n";
  } else if (format == "csv") {
    std::cout << sim::results_csv(r.points, r.predictions);
  } else {
    std::cout << sim::results_table(s, r.points, r.predictions);
    // Each distinct note once, in order of first appearance (a set: a 10,000-point sweep with
    // a note per point would otherwise compare every note with every earlier one).
    std::vector<std::string> seen;
    std::unordered_set<std::string> seen_set;
    for (const auto& p : r.predictions) {
      for (const auto& w : p.warnings) {
        if (seen_set.insert(w).second) seen.push_back(w);
      }
    }
    for (const auto& w : seen) std::cout << "note: " << one_line(w) << "\n";
    if (!out.empty()) std::cout << "wrote " << out << "\n";
  }
  return 0;
}

// Exit 1 when nothing is feasible (the answer, with the nearest option, is still printed).
int run_plan(const std::string& path, const std::vector<std::string>& sets,
             const std::string& profile, const std::string& format, const std::string& out) {
  model::check_output_path("--out", out, {path, profile});
  const model::Scenario s = cli::load_cli_scenario(path, sets, profile);
  const sim::PlanResult r = sim::plan(s);
  const json doc = sim::plan_json(s, r);
  if (!out.empty()) model::write_file_atomic(out, doc.dump(2) + "\n");
  if (format == "json") {
    std::cout << doc.dump(2) << "\n";
  } else if (format == "csv") {
    std::cout << sim::plan_csv(r);
  } else {
    std::cout << sim::plan_table(s, r);
    if (!out.empty()) std::cout << "wrote " << out << "\n";
  }
  if (!r.chosen) {
    ddpsim::print_error("ddpsim", r.none_feasible_reason);
    return 1;
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

const char* scaling_name(model::LrScaling s) {
  switch (s) {
    case model::LrScaling::kLinear:
      return "linear";
    case model::LrScaling::kSqrt:
      return "sqrt";
    case model::LrScaling::kNone:
      break;
  }
  return "none";
}

// `ddpsim lr`: the warmup schedule and the batch-size warnings of every sweep point.
int run_lr(const std::string& path, const std::vector<std::string>& sets,
           std::optional<std::int64_t> steps, const std::string& format) {
  const model::Scenario s = cli::load_cli_scenario(path, sets);
  if (!s.training.lr) {
    throw InputError(path, "/training/lr",
                     "a learning-rate section {\"base\", \"base_batch\", \"scaling\", "
                     "\"warmup_steps\"} for `ddpsim lr`",
                     "nothing");
  }
  const model::LrConfig& lr = *s.training.lr;
  const std::int64_t horizon = steps ? *steps : std::max<std::int64_t>(1, 2 * lr.warmup_steps);
  json points = json::array();
  std::string table =
      fmt::format("# {}: lr base {:g} at global batch {}, {} scaling, {} warmup steps\n",
                  s.name.empty() ? path : s.name, lr.base, lr.base_batch, scaling_name(lr.scaling),
                  lr.warmup_steps);
  for (const model::Scenario& p : model::expand_sweep(s)) {
    const model::LrConfig& plr = *p.training.lr;
    const std::int64_t global =
        p.training.per_gpu_batch * p.training.grad_accumulation * p.cluster.gpus;
    const double peak = sim::scaled_lr(plr, global);
    const auto schedule = sim::lr_schedule(plr, global, horizon);
    const auto warnings = sim::batch_size_warnings(global, p.training);
    json sched = json::array();
    for (const auto& pt : schedule) sched.push_back({{"step", pt.step}, {"lr", pt.lr}});
    points.push_back({{"point", p.point},
                      {"gpus", p.cluster.gpus},
                      {"per_gpu_batch", p.training.per_gpu_batch},
                      {"grad_accumulation", p.training.grad_accumulation},
                      {"global_batch", global},
                      {"peak_lr", peak},
                      {"warmup_steps", plr.warmup_steps},
                      {"schedule", sched},
                      {"warnings", warnings}});
    table += fmt::format(
        "\n{} GPUs x {} per GPU x {} accumulation = global batch {}: peak lr {:.6g}\n",
        p.cluster.gpus, p.training.per_gpu_batch, p.training.grad_accumulation, global, peak);
    table += fmt::format("  {:>12} {:>14}\n", "step", "lr");
    for (const auto& pt : schedule) table += fmt::format("  {:>12} {:>14.6g}\n", pt.step, pt.lr);
    for (const auto& w : warnings) table += "  note: " + w + "\n";
  }
  if (format == "json") {
    json doc = {{"context", sim::context_json("lr")},
                {"scenario", {{"file", path}, {"name", s.name}}},
                {"lr",
                 {{"base", lr.base},
                  {"base_batch", lr.base_batch},
                  {"scaling", scaling_name(lr.scaling)},
                  {"warmup_steps", lr.warmup_steps}}},
                {"horizon_steps", horizon},
                {"points", points}};
    sim::check_finite(doc, "lr");
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << table;
  }
  return 0;
}

// `ddpsim published`: README.md and published.json under out_dir, both written atomically.
int run_published(const std::string& out_dir) {
  const sim::PublishedReport r = sim::compare_published();
  const std::filesystem::path dir(out_dir);
  model::RunOutputs outputs;  // both or neither (a failure or an interruption between them)
  const auto write = [&](const std::filesystem::path& f, const std::string& text) {
    model::write_file_atomic(f.string(), text, &outputs);
  };
  write(dir / "published.json", sim::published_json(r).dump(2) + "\n");
  write(dir / "README.md", sim::published_markdown(r));
  outputs.keep();
  std::cout << fmt::format(
      "{} published rows: {} comparisons ({} ok, {} outside their tolerance, {} reported), {} not "
      "predicted\nwrote {} and {}\n",
      r.published_rows, r.rows.size(), r.count(sim::Agreement::kOk),
      r.count(sim::Agreement::kOutside), r.count(sim::Agreement::kReported), r.not_predicted.size(),
      (dir / "README.md").string(), (dir / "published.json").string());
  return 0;
}

// `ddpsim fidelity`: FIDELITY.md and fidelity.json under out_dir, both written atomically.
int run_fidelity(const std::string& out_dir) {
  const sim::FidelityReport r = sim::compare_fidelity();
  const std::filesystem::path dir(out_dir);
  model::RunOutputs outputs;  // all three or none
  const auto write = [&](const std::filesystem::path& f, const std::string& text) {
    model::write_file_atomic(f.string(), text, &outputs);
  };
  write(dir / "fidelity.json", sim::fidelity_json(r).dump(2) + "\n");
  write(dir / "FIDELITY.md", sim::fidelity_markdown(r));
  // Each row's miss with its class: the error bands every prediction carries
  // (simulator/prediction/uncertainty.hpp; fidelity-update copies it to scenarios/data/).
  std::vector<sim::PublishedError> errors;
  for (const sim::TrainingComparison& c : r.rows) {
    errors.push_back({c.id, c.gpu, c.strategy, c.params, c.speed_error, c.held_out});
  }
  write(dir / "uncertainty.json", sim::published_errors_json(errors).dump(1) + "\n");
  outputs.keep();
  for (const auto& [name, summary] :
       {std::pair{"visible", &r.visible}, {"held-out", &r.held_out}}) {
    if (summary->empty()) continue;
    const sim::ErrorSummary& all = summary->front();
    std::cout << fmt::format("{} rows: {} predicted, median |error| {:.1f}%, max {:.1f}%\n", name,
                             all.count, all.median_abs * 100, all.max_abs * 100);
  }
  std::cout << fmt::format("{} not predicted\nwrote {}, {} and {}\n", r.not_predicted.size(),
                           (dir / "FIDELITY.md").string(), (dir / "fidelity.json").string(),
                           (dir / "uncertainty.json").string());
  return 0;
}

// git-style dispatch: `ddpsim calibrate ...` runs ddpsim-calibrate beside this binary.
int dispatch(const std::string& verb, int argc, char** argv) {
  const std::string self = model::self_exe();
  const auto tool = std::filesystem::path(self).parent_path() / ("ddpsim-" + verb);
  if (!self.empty() && std::filesystem::exists(tool)) {
    std::vector<char*> args;
    std::string name = tool.string();
    args.push_back(name.data());
    for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    execv(name.c_str(), args.data());
    ddpsim::print_error("ddpsim", "cannot run " + name);
    return 1;
  }
  // What each optional part needs; a build without it says how to get it.
  static const std::vector<std::pair<std::string, std::string>> known = {
      {"calibrate", "OpenBLAS (apt-get install libopenblas-dev libgloo-dev, then rebuild)"},
      {"exec", "OpenBLAS and Gloo (apt-get install libopenblas-dev libgloo-dev, then rebuild)"},
      {"validate", "OpenBLAS and Gloo (apt-get install libopenblas-dev libgloo-dev, then rebuild)"},
      {"plot", "Qt 6 (apt-get install qt6-base-dev qt6-charts-dev qt6-svg-dev, then rebuild)"},
      {"gui", "Qt 6 (apt-get install qt6-base-dev qt6-charts-dev qt6-svg-dev, then rebuild)"}};
  for (const auto& [k, what] : known) {
    if (k == verb) {
      std::fprintf(
          stderr, "ddpsim: '%s' is not built (ddpsim-%s not found beside %s); it needs %s\n",
          one_line(verb).c_str(), one_line(verb).c_str(), one_line(self).c_str(), what.c_str());
      return 2;
    }
  }
  std::fprintf(stderr,
               "ddpsim: unknown command '%s' (commands: predict, plan, schema, collective, "
               "import, lr, published, fidelity, calibrate, exec, validate, plot, gui)\n",
               one_line(verb).c_str());
  return 2;
}

// One subcommand: the options add_*() binds, and what it runs when it is the one given.
struct Verb {
  CLI::App* command = nullptr;
  std::function<int()> run;
};

// --set KEY=VALUE, repeatable (scenario_input.hpp).
void add_set_option(CLI::App* c, std::vector<std::string>& sets) {
  c->add_option("--set", sets,
                "KEY=VALUE: set one scenario key before it is checked (repeatable; KEY a JSON "
                "pointer /training/per_gpu_batch or dotted training.per_gpu_batch, VALUE JSON or "
                "a bare word)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

Verb add_predict(CLI::App& app) {
  struct Options {
    std::string path, profile, engine, format = "table", out, trace;
    std::vector<std::string> sets;
  };
  auto o = std::make_shared<Options>();
  auto* c = app.add_subcommand("predict", "predict a scenario (and its sweep)");
  c->add_option("scenario", o->path, "scenario JSON file (- reads standard input)")->required();
  add_set_option(c, o->sets);
  c->add_option("--profile", o->profile,
                "a calibration profile (ddpsim calibrate) as the hardware: every section it "
                "measured (GEMMs, collectives, interference, torch) replaces the model's");
  c->add_option("--engine", o->engine, "analytic | event (overrides simulation.engine)")
      ->check(CLI::IsMember({"analytic", "event"}));
  c->add_option("--format", o->format, "table | json | csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  c->add_option("--out", o->out, "also write the JSON results to this file (atomically)");
  c->add_option("--trace", o->trace,
                "write a Chrome trace (Perfetto) of the simulated steps: needs --engine "
                "event; ranks 0-63 and the slowest; sweeps write OUT.1.json, OUT.2.json...");
  return {c, [o] {
            return run_predict(o->path, o->sets, o->profile, o->engine, o->format, o->out,
                               o->trace);
          }};
}

Verb add_plan(CLI::App& app) {
  struct Options {
    std::string path, profile, format = "table", out;
    std::vector<std::string> sets;
  };
  auto o = std::make_shared<Options>();
  auto* c = app.add_subcommand(
      "plan",
      "which systems (plan.hardware, each with its price), how many GPUs and which knobs, under "
      "memory, deadline and budget; best option per system and the Pareto front of time vs cost "
      "(exit 1 when nothing is feasible, naming the nearest option)");
  c->add_option("scenario", o->path,
                "scenario JSON file (candidates in its \"plan\" section; - reads standard input)")
      ->required();
  add_set_option(c, o->sets);
  c->add_option("--format", o->format, "table | json | csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  c->add_option("--out", o->out, "also write the JSON plan to this file (atomically)");
  c->add_option("--profile", o->profile, "a calibration profile as the hardware (as predict)");
  return {c, [o] { return run_plan(o->path, o->sets, o->profile, o->format, o->out); }};
}

Verb add_schema(CLI::App& app) {
  auto format = std::make_shared<std::string>("json");
  auto* c = app.add_subcommand("schema", "print the scenario JSON Schema or key reference");
  c->add_option("--format", *format, "json | markdown")->check(CLI::IsMember({"json", "markdown"}));
  return {c, [format] { return run_schema(*format); }};
}

Verb add_collective(CLI::App& app) {
  auto o = std::make_shared<cli::CollectiveOptions>();
  auto* c = app.add_subcommand("collective", "nccl-tests-style table of modelled collectives");
  c->add_option("--hardware", o->hw, "system preset name or a JSON hardware section");
  c->add_option("--gpus", o->gpus, "ranks")->check(ddpsim::model::integer_in(1, 10000000));
  c->add_option("--op", o->op, "all_reduce | reduce_scatter | all_gather | broadcast")
      ->check(CLI::IsMember({"all_reduce", "reduce_scatter", "all_gather", "broadcast"}));
  c->add_option("--min-bytes", o->min_b, "smallest size (8, 64K, 32M, 8G)");
  c->add_option("--max-bytes", o->max_b, "largest size");
  c->add_option("--algorithm,--algo", o->algo,
                "auto | ring | tree | hierarchical | nvls (NCCL_ALGO; nvls across nodes runs "
                "nvls_tree; auto also weighs pat, NCCL 2.23+, for all-gather and reduce-scatter "
                "with one GPU per node)");
  c->add_option("--proto", o->proto, "auto | ll | ll128 | simple (NCCL_PROTO)")
      ->check(CLI::IsMember({"auto", "ll", "ll128", "simple"}));
  c->add_option("--redop", o->redop,
                "sum | avg | max on the table's fp32 (nccl-tests -o): avg, as FSDP2 reduces, and "
                "fp32 max run on neither NVLS nor NVLS_TREE, avg not as PAT's reduce-scatter")
      ->check(CLI::IsMember({"sum", "avg", "max"}));
  c->add_option("--nccl-version", o->nccl_version,
                "NCCL release whose constants apply (2.18.0 .. 2.30.x; default the preset's)");
  c->add_option("--launch", o->launch,
                "process (one process per GPU: torchrun, DDP, nccl-tests -g 1) | threads (one "
                "thread drives the node's GPUs: nccl-tests -g N)")
      ->check(CLI::IsMember({"process", "threads"}));
  c->add_option("--gpus-per-process", o->gpus_per_process,
                "GPUs one launching thread drives (nccl-tests -g N)")
      ->check(ddpsim::model::integer_in(1, 1024));
  c->add_flag("--graphs", o->graphs, "launched from a CUDA graph (nccl-tests -G)");
  return {c, [o] { return cli::run_collective(*o); }};
}

Verb add_import(CLI::App& app) {
  struct Options {
    std::string path, base, out;
    std::optional<int> gpus;
    std::vector<std::string> traces;
  };
  auto o = std::make_shared<Options>();
  auto* c = app.add_subcommand(
      "import",
      "turn a DeepSpeed config, PyTorch DDP/FSDP knobs or a profiler trace into scenario keys");
  c->require_subcommand(0, 1);  // none: a one-line error naming both kinds (run, below)
  auto* ds =
      c->add_subcommand("deepspeed", "a DeepSpeed config JSON -> scenario (warnings on stderr)");
  ds->add_option("config", o->path, "DeepSpeed config JSON")->required();
  ds->add_option("--scenario", o->base, "base scenario the keys are applied to");
  ds->add_option("--gpus", o->gpus,
                 "data-parallel world size for DeepSpeed's batch rule (default: the base "
                 "scenario's cluster.gpus)")
      ->check(ddpsim::model::integer_in(1, 10000000));
  ds->add_option("--out", o->out, "write the scenario here (atomically) instead of stdout");
  auto* titan = c->add_subcommand(
      "torchtitan",
      "a torchtitan job file (train_configs/*.toml) -> scenario (what is not modelled is named "
      "on stderr by its TOML path)");
  titan->add_option("job", o->path, "torchtitan job TOML")->required();
  titan->add_option("--scenario", o->base,
                    "base scenario: its hardware and other keys are kept, the job's model, batch, "
                    "mesh and recipe applied");
  titan
      ->add_option("--gpus", o->gpus,
                   "the job's world size (default: the base scenario's cluster.gpus); needed "
                   "when data_parallel_shard_degree is -1")
      ->check(ddpsim::model::integer_in(1, 10000000));
  titan->add_option("--out", o->out, "write the scenario here (atomically) instead of stdout");
  auto* torch =
      c->add_subcommand("torch", "PyTorch knobs {\"ddp\": {...}} or {\"fsdp\": {...}} -> scenario");
  torch->add_option("knobs", o->path, "knobs JSON")->required();
  torch->add_option("--scenario", o->base, "base scenario the keys are applied to");
  torch->add_option("--gpus", o->gpus, "also set cluster.gpus")
      ->check(ddpsim::model::integer_in(1, 10000000));
  torch->add_option("--out", o->out, "write the scenario here (atomically) instead of stdout");
  auto* trace = c->add_subcommand(
      "trace",
      "PyTorch profiler traces of a DDP job (one per rank) -> a drafted scenario: world size, "
      "bucket cap, gradient dtype, steps (what the trace cannot tell is named on stderr)");
  trace->add_option("traces", o->traces, "profiler traces (.json or .json.gz)")->required();
  trace->add_option("--scenario", o->base,
                    "base scenario: only what the traces tell (world size, bucket cap, wire "
                    "dtype, steps) is applied to it; its model, hardware and batch are kept");
  trace->add_option("--out", o->out, "write the scenario here (atomically) instead of stdout");
  return {c, [o, ds, torch, titan, trace] {
            if (*trace) return cli::run_import_trace(o->traces, o->base, o->out);
            if (*ds || *torch || *titan) {
              return cli::run_import(*ds      ? "deepspeed"
                                     : *titan ? "torchtitan"
                                              : "torch",
                                     o->path, o->base, o->gpus, o->out);
            }
            throw Error(
                "import: expected what to import: `ddpsim import deepspeed DS_CONFIG.json`, "
                "`ddpsim import torchtitan JOB.toml`, "
                "`ddpsim import torch KNOBS.json` or `ddpsim import trace TRACE.json.gz`");
          }};
}

Verb add_lr(CLI::App& app) {
  struct Options {
    std::string path, format = "table";
    std::vector<std::string> sets;
    std::optional<std::int64_t> steps;
  };
  auto o = std::make_shared<Options>();
  auto* c = app.add_subcommand(
      "lr", "learning-rate schedule (scaling + gradual warmup) and batch-size warnings");
  c->add_option("scenario", o->path, "scenario JSON file with training.lr (- reads standard input)")
      ->required();
  add_set_option(c, o->sets);
  c->add_option("--steps", o->steps, "last step shown (default: twice the warmup)")
      ->check(ddpsim::model::integer_in(0, 1'000'000'000'000));
  c->add_option("--format", o->format, "table | json")->check(CLI::IsMember({"table", "json"}));
  return {c, [o] { return run_lr(o->path, o->sets, o->steps, o->format); }};
}

Verb add_published(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto* c = app.add_subcommand(
      "published", "compare ddpsim with every published row it can predict (README.md + JSON)");
  c->add_option("--out-dir", *dir,
                "folder for README.md and published.json (e.g. results/published)")
      ->required();
  return {c, [dir] { return run_published(*dir); }};
}

Verb add_fidelity(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto* c = app.add_subcommand(
      "fidelity",
      "presets against published training runs and nccl-tests sweeps (FIDELITY.md + JSON)");
  c->add_option("--out-dir", *dir,
                "folder for FIDELITY.md, fidelity.json and uncertainty.json (e.g. results)")
      ->required();
  return {c, [dir] { return run_fidelity(*dir); }};
}

}  // namespace

int main(int argc, char** argv) {
  // SIGINT/SIGTERM: remove this run's temporaries and partial outputs, one line, exit 130/143.
  model::install_interrupt_handlers("ddpsim");
  if (argc >= 2) {
    const std::string verb = argv[1];
    static const std::vector<std::string> built_in = {"predict", "plan", "schema",    "collective",
                                                      "import",  "lr",   "published", "fidelity"};
    if (std::find(built_in.begin(), built_in.end(), verb) == built_in.end() &&
        verb.front() != '-') {
      return dispatch(verb, argc, argv);
    }
  }
  CLI::App app{"ddpsim: predict data-parallel training step time, memory and scaling"};
  app.set_version_flag("--version", std::string("ddpsim ") + DDPSIM_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Programs run through ddpsim when built (each has --help):\n"
      "  calibrate   measure this machine's GEMMs, collectives and PyTorch ops into a profile\n"
      "  exec        run a real DDP step with Gloo and OpenBLAS, per component\n"
      "  validate    compare measured steps with predictions from a profile\n"
      "  plot        write a scenario's charts as SVG/PNG\n"
      "  gui         the Qt planner\n"
      "A scenario argument may be - (standard input); --set KEY=VALUE overrides keys.");
  const std::vector<Verb> verbs = {add_predict(app),    add_plan(app),    add_schema(app),
                                   add_collective(app), add_import(app),  add_lr(app),
                                   add_published(app),  add_fidelity(app)};
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
    ddpsim::print_error("ddpsim", msg + " (see ddpsim --help)");
    return 2;
  }
  try {
    for (const Verb& v : verbs) {
      if (*v.command) return model::stdout_checked("ddpsim", v.run());
    }
  } catch (const ddpsim::Error& e) {
    ddpsim::print_error("ddpsim", e.what());
    return 2;
  } catch (const nlohmann::json::exception& e) {
    ddpsim::print_error("ddpsim", std::string("bad JSON: ") + e.what());
    return 2;
  } catch (const std::exception& e) {
    ddpsim::print_error("ddpsim", std::string("internal error: ") + e.what());
    return 1;
  }
  return 0;
}
