#include "simulator/cli/validate/cuda_validation.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "model/atomic_file.hpp"
#include "model/error.hpp"
#include "model/run_context.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/cli/validate/children.hpp"
#include "simulator/cli/validate/profiles.hpp"
#include "simulator/cli/validate/report.hpp"
#include "simulator/cli/validate/torch_runner.hpp"
#include "simulator/report.hpp"
#include "simulator/run.hpp"

namespace ddpsim::validate {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr int kNoDevice = 77;  // ddpsim-exec's exit code without a CUDA device

json error_of(double predicted, double measured) {
  return measured > 0 ? json((predicted - measured) / measured) : json(nullptr);
}

// The measuring child: ddpsim-exec --backend cuda (--runner exec), or the torch runner on the
// GPU (--runner torch: PyTorch's own module, autocast and optimizer; calibrate/torch/
// ddp_runner.py --device cuda) with ddpsim's workload of the point beside it.
std::vector<std::string> measuring_argv(const Options& o, const json& doc, const std::string& file,
                                        const fs::path& tmp, const fs::path& point,
                                        const fs::path& result, int steps) {
  const std::vector<std::string> common = {
      "--nproc", "1", "--steps", std::to_string(steps), "--out", result.string()};
  std::vector<std::string> argv;
  if (o.runner == "torch") {
    const fs::path workload = tmp / "workload.json";
    model::write_file_atomic(workload.string(),
                             workload_json(model::parse_scenario(doc, file)).dump(1));
    argv = torch_runner_argv();
    argv.insert(argv.end(), {point.string(), "--workload", workload.string(), "--device", "cuda"});
    if (!o.torch_trace.empty()) {
      argv.insert(argv.end(), {"--profile-trace", fs::absolute(o.torch_trace).string()});
    }
  } else {
    argv = {sibling("ddpsim-exec").string(), point.string(), "--backend", "cuda"};
  }
  argv.insert(argv.end(), common.begin(), common.end());
  return argv;
}

}  // namespace

int run_cuda_validation(const Options& o) {
  const model::Scenario base = model::load_scenario(o.scenario);
  if (!base.sweep.empty()) {
    throw UnsupportedError(o.scenario + ": --backend cuda validates one configuration; it sweeps " +
                           base.sweep.front().key);
  }
  if (o.profiles.size() > 1) {
    throw UnsupportedError("--backend cuda takes at most one --profile (one GPU)");
  }
  if (!o.torch_trace.empty() && o.runner != "torch") {
    throw UnsupportedError("--torch-trace records the torch runner: add --runner torch");
  }
  // One GPU: the scenario as given, on one rank, relative paths made absolute.
  json doc = base.doc;
  doc["cluster"]["gpus"] = 1;
  doc["cluster"].erase("nodes");
  doc.erase("sweep");
  absolutize_paths(doc, base.file);
  const int steps = o.steps > 0 ? o.steps : base.simulation.steps;

  // Prediction: the scenario's hardware, or the GPU calibration profile in its place.
  json pdoc = doc;
  if (!o.profiles.empty()) model::use_profile_as_hardware(pdoc, o.profiles.front());
  const model::Scenario ps = model::parse_scenario(pdoc, base.file);
  sim::PredictorCache cache;
  sim::RunOptions run;
  run.engine = model::Engine::kAnalytic;
  const json analytic = sim::prediction_json(ps, sim::predict_point(ps, run, cache));
  run.engine = model::Engine::kEvent;
  run.steps = std::max(steps, 2);
  const json event = sim::prediction_json(ps, sim::predict_point(ps, run, cache));

  // Measurement on the device.
  TempDir tmp;
  const fs::path point = tmp.path / "point.json", result = tmp.path / "cuda-run.json";
  model::write_file_atomic(point.string(), doc.dump(1));
  const fs::path log = tmp.path / "run.log";
  const bool torch = o.runner == "torch";
  const std::string child =
      torch ? "the torch runner (--device cuda)" : "ddpsim-exec --backend cuda";
  const int rc =
      run_child_status(measuring_argv(o, doc, base.file, tmp.path, point, result, steps), log);
  if (rc == kNoDevice) {
    std::cerr << "ddpsim-validate: --backend cuda: " << last_log_line(log) << "\n";
    return kNoDevice;
  }
  if (rc == 2 && torch) {  // refused: one line, naming the user's scenario, not the temporary
    throw UnsupportedError(runner_line_naming_points(log, {{point, {}, base.file}}));
  }
  if (rc != 0) {
    throw ChildError(child + " exited with status " + std::to_string(rc) + ": " +
                     last_log_line(log));
  }
  std::ifstream rf(result);
  const json measured_doc = json::parse(rf);
  const json& m = measured_doc.at("results").at(0);

  json rows = json::array();
  std::string table = fmt::format("{:<26} {:>12} {:>12} {:>12} {:>9} {:>9}\n", "quantity",
                                  "analytic", "event", "measured", "err an.", "err ev.");
  auto row = [&](const std::string& name, double a, double e, double meas, const char* unit,
                 double scale) {
    const json ea = error_of(a, meas), ee = error_of(e, meas);
    rows.push_back({{"quantity", name},
                    {"analytic", a},
                    {"event", e},
                    {"measured", meas},
                    {"error_analytic", ea},
                    {"error_event", ee}});
    table += fmt::format("{:<26} {:>10.3f}{:<2} {:>10.3f}{:<2} {:>10.3f}{:<2} {:>9} {:>9}\n", name,
                         a * scale, unit, e * scale, unit, meas * scale, unit, pct(ea), pct(ee));
  };
  for (const char* q : {"step_time_s", "forward_time_s", "backward_time_s", "optimizer_time_s"}) {
    row(q, analytic.at(q).get<double>(), event.at(q).get<double>(), m.at(q).get<double>(), "ms",
        1e3);
  }
  // torch.cuda.max_memory_allocated's analogue: the predicted memory without the runtime
  // reserve (CUDA context, cuBLAS handles) and the allocator's fragmentation.
  auto allocated = [](const json& p) {
    const json& mem = p.at("memory");
    return mem.at("params_bytes").get<double>() + mem.at("grads_bytes").get<double>() +
           mem.at("optimizer_bytes").get<double>() + mem.at("activation_bytes").get<double>() +
           mem.at("buffer_bytes").get<double>();
  };
  const double gib = 1.0 / 1073741824.0;
  row("peak_allocated_bytes", allocated(analytic), allocated(event),
      m.at("peak_memory_bytes").get<double>(), "Gi", gib);
  row("device_memory_bytes", analytic.at("memory_per_gpu_bytes").get<double>(),
      event.at("memory_per_gpu_bytes").get<double>(), m.at("device_used_bytes").get<double>(), "Gi",
      gib);

  json out;
  const json& mctx = measured_doc.at("context");
  out["context"] = sim::context_json("analytic+event vs " + child);
  out["context"]["device"] = mctx.value("device", "");
  out["context"]["runner"] =
      torch ? "PyTorch " + mctx.value("torch_version", "") +
                  " (calibrate/torch/ddp_runner.py --device cuda)"
            : std::string("ddpsim-exec --backend cuda (calibrate/exec/gpt2_cuda.hpp)");
  out["context"]["steps"] = steps;
  out["scenario"] = sim::scenario_json(base);
  out["hardware"] = o.profiles.empty() ? json("the scenario's hardware") : json(o.profiles.front());
  out["errors_are"] = "(predicted - measured) / measured";
  out["rows"] = rows;
  out["measured"] = m;
  sim::check_finite(out);
  const std::string path = !o.out.empty() ? o.out
                                          : "results/gpu/validation-cuda-" +
                                                std::string(torch ? "torch-" : "") +
                                                model::utc_now("%Y%m%d") + ".json";
  model::write_file_atomic(path, out.dump(2) + "\n");
  if (!o.markdown.empty()) {
    model::write_file_atomic(o.markdown, "```\n" + table + "```\n");
  }
  std::cout << "ddpsim validate --backend cuda" << (torch ? " --runner torch" : "") << ": "
            << base.file << " on " << out["context"]["device"].get<std::string>() << "\n"
            << table << "wrote " << path << "\n";
  return 0;
}

}  // namespace ddpsim::validate
