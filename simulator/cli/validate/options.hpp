// options.hpp: ddpsim-validate's command line (validate_main.cpp parses it) and how a child runs
// on several ranks.
#pragma once

#include <string>
#include <vector>

namespace ddpsim::validate {

/// ddpsim-validate's options (validate_main.cpp documents each).
struct Options {
  std::string scenario;
  int nproc = 0;
  std::vector<std::string> profiles;
  bool calibrate = false;
  bool recalibrate_each = false;  ///< --recalibrate-each: a fresh calibration per repetition
  int steps = 0;
  int repeat = 1;
  bool efficiency = false;
  std::string netns_launch;
  std::string out;
  std::string markdown;
  std::vector<std::string> traces;  ///< --trace: compare with these profiler traces instead
  bool extrapolate = false;         ///< --extrapolate (with --trace): traced compute, model comm
  std::string runner = "exec";      ///< --runner: exec (ddpsim-exec) or torch (PyTorch DDP)
  std::string backend = "cpu";      ///< --backend: cpu, or cuda (cuda_validation.hpp)
  std::string points_dir;           ///< --points-dir: write the points' files there and stop
  /// --torch-trace (with --backend cuda --runner torch): the PyTorch profiler trace of steps
  /// after the measured ones, written there by the runner (ddpsim_runner.py --profile-trace)
  std::string torch_trace;
  /// --no-torch-calibration: with --runner torch, predict with the model's costs even when the
  /// profile holds a torch section (and --calibrate does not add one)
  bool no_torch_calibration = false;
};

/// argv prefix that runs a child on `ranks` ranks: nothing (the child launches its own local
/// ranks), or netns-launch.sh, one rank per network namespace.
inline std::vector<std::string> launcher(const Options& o, int ranks) {
  if (o.netns_launch.empty() || ranks < 2) return {};
  return {"bash", o.netns_launch, "--nproc", std::to_string(ranks), "--timeout-s", "3600", "--"};
}

}  // namespace ddpsim::validate
