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
  /// --min-seconds (--runner torch): each run measures at least this many seconds of steps
  /// (calibrate/torch/step_loop.py measured_step_count); < 0: kTorchMinSeconds
  double min_seconds = -1;
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
  /// --no-torch-calibration: with --runner torch, --calibrate does not add a torch section
  bool no_torch_calibration = false;
  /// --predict-only: print the points' predictions on the given --profile, measure nothing
  bool predict_only = false;
};

/// --min-seconds' default: ten 50 ms steps are half a second, and one slow half-second of this
/// machine moved such a run's median by 8-32% (results/VALIDATION.md); three seconds hold six
/// such episodes' worth of steps.
inline constexpr double kTorchMinSeconds = 3.0;

/// The seconds of steps each torch-runner run measures at least (0 for ddpsim-exec, which
/// measures exactly --steps).
inline double min_seconds(const Options& o) {
  if (o.runner != "torch") return 0;
  return o.min_seconds >= 0 ? o.min_seconds : kTorchMinSeconds;
}

/// argv prefix that runs a child on `ranks` ranks: nothing (the child launches its own local
/// ranks), or netns-launch.sh, one rank per network namespace.
inline std::vector<std::string> launcher(const Options& o, int ranks) {
  if (o.netns_launch.empty() || ranks < 2) return {};
  return {"bash", o.netns_launch, "--nproc", std::to_string(ranks), "--timeout-s", "3600", "--"};
}

}  // namespace ddpsim::validate
