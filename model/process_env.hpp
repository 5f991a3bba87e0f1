// process_env.hpp: what a ddpsim program needs to start its helpers: its own path and a
// variable with a fallback.
//
//   std::vector<std::string> args{model::self_exe("ddpsim-exec")};   // this binary, again
//   const std::string python = model::env_or("DDPSIM_TORCH_PYTHON", "python3");
#pragma once

#include <string>

namespace ddpsim::model {

/// The running program's path (/proc/self/exe), or `fallback` when it cannot be read.
std::string self_exe(const std::string& fallback = "");

/// $name when it is set and not empty, else `fallback`.
std::string env_or(const char* name, const std::string& fallback);

}  // namespace ddpsim::model
