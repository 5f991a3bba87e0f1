// children.hpp: how ddpsim-validate runs the programs it measures with (ddpsim-calibrate,
// ddpsim-exec, found beside it): one child at a time, its output into a log file, a failure
// named on one line (ChildError, exit code 1), and a temporary folder removed on every exit path.
//
//   TempDir tmp;
//   run_child({sibling("ddpsim-exec").string(), "point.json", "--out", "r.json"},
//             tmp.path / "exec.log");
#pragma once

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/interrupt.hpp"

namespace ddpsim::validate {

/// A child that could not run or failed: one line, exit 1.
struct ChildError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The program `name` beside this one; throws ChildError when it is missing.
std::filesystem::path sibling(const std::string& name);

/// Runs `argv` with stdout and stderr into `log`; throws ChildError naming the program, how it
/// ended and the last line of its log unless it exits 0.
void run_child(const std::vector<std::string>& argv, const std::filesystem::path& log);

/// Runs `argv` like run_child but returns its exit status (minus the signal number when killed)
/// instead of throwing; ChildError only when it cannot be started or waited for.
int run_child_status(const std::vector<std::string>& argv, const std::filesystem::path& log);

/// The last non-empty line of `log` ("" when none).
std::string last_log_line(const std::filesystem::path& log);

/// /proc/loadavg's 1, 5 and 15 minute averages ("0.52 0.61 0.70").
std::string load_average();

/// A temporary folder (ddpsim-validate-XXXXXX) removed on every exit path.
struct TempDir {
  std::filesystem::path path;
  std::unique_ptr<model::RemoveOnInterrupt> on_interrupt;  // SIGINT/SIGTERM remove it too
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

}  // namespace ddpsim::validate
