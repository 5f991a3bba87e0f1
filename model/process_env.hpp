// process_env.hpp: what a ddpsim program needs to start its helpers: its own path, a variable
// with a fallback, and the command that runs one of ddpsim's Python programs (the
// calibrate.torch package, calibrate/torch/__init__.py) with its folders on PYTHONPATH.
//
// The folders that hold the packages calibrate.torch and ddpsim_torch (its records.py writes
// what the programs write), the first that exists:
//   1. $DDPSIM_PYTHONPATH (a PYTHONPATH-style list: another checkout's `ROOT:ROOT/python`);
//   2. <folder of the running binary>/../share/ddpsim/python: the installed layout (cmake
//      --install puts both packages there, cmake/DdpsimInstall.cmake);
//   3. the source tree the binary was built from: its root and its python/ folder.
//
//   std::vector<std::string> argv = model::torch_python_command("calibrate.torch.ddp_runner");
//   // {"/usr/bin/python3", "-m", "calibrate.torch.ddp_runner"}; children get PYTHONPATH
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ddpsim::model {

/// The running program's path (/proc/self/exe), or `fallback` when it cannot be read.
std::string self_exe(const std::string& fallback = "");

/// $name when it is set and not empty, else `fallback`.
std::string env_or(const char* name, const std::string& fallback);

/// The python that runs ddpsim's torch programs: $DDPSIM_TORCH_PYTHON, else the one CMake found
/// that imports torch (cmake/DdpsimOptionalDeps.cmake), else "python3".
std::string torch_python();

/// Steps 2 and 3 of the search order above for a program at `exe` (an absolute path; empty:
/// step 3 only), each a PYTHONPATH-style list, whether or not it exists.
std::vector<std::string> python_path_candidates(const std::filesystem::path& exe);

/// The package folders (see the file comment) as a PYTHONPATH-style list. Throws Error naming
/// the folders it tried when none holds calibrate/torch/__init__.py.
std::string python_path();

/// {torch_python(), "-m", module}, after setting this process's PYTHONPATH (which its children
/// inherit) to python_path() followed by the PYTHONPATH it started with. Throws as python_path().
std::vector<std::string> torch_python_command(const std::string& module);

}  // namespace ddpsim::model
