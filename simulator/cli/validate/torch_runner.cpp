#include "simulator/cli/validate/torch_runner.hpp"

#include <fstream>

#include "model/error.hpp"
#include "model/process_env.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/cli/validate/children.hpp"

namespace ddpsim::validate {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<std::string> torch_runner_argv() {
  try {
    return model::torch_python_command("calibrate.torch.ddp_runner");
  } catch (const Error& e) {
    throw ChildError(std::string("the torch runner: ") + e.what());
  }
}

std::string runner_line_naming_points(const fs::path& log,
                                      const std::vector<TorchPointFiles>& points) {
  std::string line = last_log_line(log);
  for (const TorchPointFiles& p : points) {
    const std::size_t at = line.find(p.point.string());
    if (at != std::string::npos) line.replace(at, p.point.string().size(), p.name);
  }
  return line;
}

json torch_check_points(const std::vector<TorchPointFiles>& points, const fs::path& log) {
  std::vector<std::string> argv = torch_runner_argv();
  const fs::path facts = log.parent_path() / "torch-facts.json";
  argv.push_back("--check");
  argv.push_back("--facts");
  argv.push_back(facts.string());
  for (const TorchPointFiles& p : points) {
    argv.push_back(p.point.string());
    argv.push_back("--workload");
    argv.push_back(p.workload.string());
  }
  const int rc = run_child_status(argv, log);
  if (rc == 0) return model::read_json_file(facts.string());
  const std::string line = runner_line_naming_points(log, points);
  if (rc == 2) throw UnsupportedError(line);
  if (rc == 127 && line.empty()) {
    throw ChildError("cannot run " + argv[0] +
                     " (set DDPSIM_TORCH_PYTHON to a python3 that imports torch)");
  }
  throw ChildError(line.empty() ? argv[0] + " failed (exit " + std::to_string(rc) + ")" : line);
}

void apply_runner_defaults(json& doc, const std::string& runner, const json& torch_facts) {
  json& training = doc["training"];
  if (!training.contains("optimizer_impl")) {
    training["optimizer_impl"] = runner == "torch" ? "for_loop" : "fused";
  }
  json& par = doc["parallelism"];
  if (runner == "torch" && torch_facts.is_object() &&
      torch_facts.value("first_bucket_always", false) && !par.contains("first_bucket_mb")) {
    par["first_bucket_mb"] = torch_facts.at("first_bucket_bytes").get<double>() / (1024.0 * 1024.0);
  }
}

}  // namespace ddpsim::validate
