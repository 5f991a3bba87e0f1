#include "calibrate/torch_calibration.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "model/atomic_file.hpp"
#include "model/error.hpp"
#include "model/interrupt.hpp"
#include "model/process_env.hpp"
#include "model/profile/profile.hpp"
#include "model/run_context.hpp"
#include "model/scenario/scenario.hpp"
#include "model/scenario/torch_workload.hpp"

extern char** environ;

namespace ddpsim::calib {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Runs argv with this process's stdout/stderr; its exit status (127: it could not start).
int run_status(const std::vector<std::string>& argv) {
  std::vector<char*> a;
  for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, a[0], nullptr, nullptr, a.data(), environ) != 0) return 127;
  const model::StopOnInterrupt stop(pid);  // a SIGTERM to this process reaches the child too
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

struct TempDir {
  fs::path path;
  std::optional<model::RemoveOnInterrupt> on_interrupt;  // SIGINT/SIGTERM remove it too
  TempDir() {
    std::string t = (fs::temp_directory_path() / "ddpsim-torchcal-XXXXXX").string();
    if (mkdtemp(t.data()) == nullptr) throw std::runtime_error("cannot create a temporary folder");
    path = t;
    on_interrupt.emplace(t, /*tree=*/true);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write_json(const fs::path& p, const json& j) {
  model::write_file_atomic(p.string(), j.dump(2) + "\n");  // checked: a full disk is an error
}

}  // namespace

int run_torch_calibration(const RunOptions& o) {
  if (o.scenario.empty()) {
    throw InputError("--backend torch", "/",
                     "--scenario S.json: the model it times is the scenario's", "none");
  }
  const std::string out = o.out.empty() ? "results/profile-" + model::host_name() + ".json" : o.out;
  if (!fs::exists(out)) {
    throw InputError(out, "/",
                     "this machine's CPU profile, which the torch section completes (run "
                     "ddpsim-calibrate --backend cpu --scenario " +
                         o.scenario + " --out " + out + " first)",
                     "no such file");
  }
  model::check_output_path("--out", out, {o.scenario});  // the profile it completes, never S
  json base = model::Profile::load(out).document();
  const model::Scenario scenario = model::load_scenario(o.scenario);
  TempDir tmp;
  std::vector<std::string> argv = model::torch_python_command("calibrate.torch.torch_calibrate");
  const std::string python = argv[0];
  std::set<std::tuple<std::string, std::int64_t, std::string>> seen;
  std::int64_t max_bytes = std::int64_t{64} << 10;
  int nproc = o.nproc;
  for (const model::Scenario& p : model::expand_sweep(scenario)) {
    const json w = model::torch_workload_json(p);
    if (!seen.insert(
                 {w.dump(), p.training.per_gpu_batch, model::optimizer_name(p.training.optimizer)})
             .second) {
      continue;
    }
    if (nproc == 0) nproc = std::max(2, p.cluster.gpus);
    // The gradients of the whole model are the largest bucket an all-reduce can carry.
    while (max_bytes < 4 * p.workload->param_count()) max_bytes *= 2;
    json doc = p.doc;
    doc.erase("sweep");
    const std::string i = std::to_string(seen.size() - 1);
    write_json(tmp.path / ("point-" + i + ".json"), doc);
    write_json(tmp.path / ("workload-" + i + ".json"), w);
    argv.push_back((tmp.path / ("point-" + i + ".json")).string());
    argv.push_back("--workload");
    argv.push_back((tmp.path / ("workload-" + i + ".json")).string());
  }
  const fs::path section = tmp.path / "torch.json";
  for (const std::string& a :
       {std::string("--nproc"), std::to_string(nproc), std::string("--max-bytes"),
        std::to_string(max_bytes), std::string("--out"), section.string()}) {
    argv.push_back(a);
  }
  if (o.quick) {
    for (const char* a : {"--warmup-steps", "2", "--steps", "5", "--iters", "5"}) {
      argv.push_back(a);
    }
  }
  std::fprintf(stderr, "calibrate: timing %zu workload(s) through PyTorch (%s, %d ranks)\n",
               seen.size(), one_line(python).c_str(), nproc);
  const int rc = run_status(argv);
  if (rc == 2) {
    throw UnsupportedError("--backend torch: " + o.scenario +
                           ": PyTorch cannot run it here (the line above says why)");
  }
  if (rc == 127) {
    throw UnsupportedError("--backend torch: cannot run " + python +
                           " (set DDPSIM_TORCH_PYTHON to a python3 that imports torch)");
  }
  if (rc != 0) {
    std::fprintf(stderr, "ddpsim-calibrate: --backend torch: %s failed (exit %d)\n",
                 argv[2].c_str(), rc);
    return 1;
  }
  base["torch"] = model::read_json_file(section.string());
  // The strict reader checks the merged document before it replaces the file.
  const model::Profile checked = model::Profile::from_json(base, out);
  model::write_file_atomic(out, checked.document().dump(2) + "\n");
  std::fprintf(stderr, "calibrate: wrote the torch section of %s\n", out.c_str());
  return 0;
}

}  // namespace ddpsim::calib
