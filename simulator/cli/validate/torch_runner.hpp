// torch_runner.hpp: `ddpsim validate --runner torch` — how ddpsim-validate runs a point as a real
// PyTorch DDP job (calibrate/torch/ddp_runner.py, gloo on CPU) instead of ddpsim-exec.
//
// The Python runner builds its torch.nn.Module from ddpsim's own workload for the point, which
// ddpsim-validate writes beside the point file (workload_json: every parameter tensor with
// name, shape, layer and tied-to, every layer's name and kind, the sequence length, buffer bytes,
// and a "source" block: the MLP's options, or the Hugging Face config.json the transformer was
// built from with model.attention), and refuses (exit 2) what PyTorch DDP cannot be asked for
// here; torch_check_points asks it about every point before anything is predicted or measured.
// The runner writes ddpsim-exec's results document, so measure() reads both the same way.
//
// Which python: $DDPSIM_TORCH_PYTHON, else the one CMake found that imports torch, else
// "python3"; the runner is the module calibrate.torch.ddp_runner from the package folders
// model/process_env.hpp finds ($DDPSIM_PYTHONPATH, an install's share/ddpsim/python, this source
// tree).
//
//   nlohmann::json w = workload_json(scenario);
//   std::vector<std::string> argv = torch_runner_argv();   // {python, -m, ...ddp_runner}
//   torch_check_points({{"p0.json", "w0.json", "s.json"}}, tmp / "check.log");  // exit 2 if bad
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/scenario/scenario.hpp"
#include "model/scenario/torch_workload.hpp"

namespace ddpsim::validate {

/// ddpsim's workload of scenario `s` in the form calibrate/torch/workload_model.py reads
/// (model/scenario/torch_workload.hpp). Throws UnsupportedError for model forms the torch runner
/// cannot build (presets, "layers").
inline nlohmann::json workload_json(const model::Scenario& s) {
  return model::torch_workload_json(s);
}

/// {python, "-m", "calibrate.torch.ddp_runner"}: the argv prefix that runs the runner (and
/// PYTHONPATH set for it, model::torch_python_command). Throws ChildError when no package folder
/// holds it.
std::vector<std::string> torch_runner_argv();

/// A point for torch_check_points: its files and what to call it in messages.
struct TorchPointFiles {
  std::filesystem::path point, workload;
  std::string name;  ///< e.g. "scenario.json point {\"parallelism.overlap\":false}"
};

/// The runner's last log line with every point file in it named as the user knows the point
/// (the files are temporaries): what its one-line refusals print.
std::string runner_line_naming_points(const std::filesystem::path& log,
                                      const std::vector<TorchPointFiles>& points);

/// Runs the runner's --check on every point and returns what this torch does (ddp_runner.py
/// --facts: torch_version, first_bucket_always, first_bucket_bytes, gloo_threads). Its exit 2
/// (a point PyTorch cannot run, a torch too old) becomes UnsupportedError with its one line,
/// the point file replaced by the point's name (exit 2); any other failure (no torch: exit 1)
/// ChildError.
nlohmann::json torch_check_points(const std::vector<TorchPointFiles>& points,
                                  const std::filesystem::path& log);

/// Scenario `doc` completed with what its runner runs where the scenario leaves a key unset
/// (a key it sets is kept: the prediction is then of what the scenario says):
///  - training.optimizer_impl: ddpsim-exec steps every tensor in one fused pass
///    (calibrate/exec/mlp.cpp Optimizer::step), "fused"; torch 1.13's optimizers default to one
///    tensor at a time on the CPU (foreach=None -> False: torch/optim/adam.py:286-288,
///    sgd.py:190-192, adamw.py:207-209), "for_loop";
///  - parallelism.first_bucket_mb (--runner torch, from `torch_facts`): torch 1.13 rebuilds with
///    a 1 MiB first bucket whatever bucket_cap_mb is, dist._DEFAULT_FIRST_BUCKET_BYTES in MiB.
/// A sweep that sets both predicts with `ddpsim predict --profile` exactly what validate prints.
void apply_runner_defaults(nlohmann::json& doc, const std::string& runner,
                           const nlohmann::json& torch_facts);

}  // namespace ddpsim::validate
