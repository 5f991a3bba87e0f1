// cuda_run.hpp: `ddpsim-exec --backend cuda` — the scenario's GPT-2 trained on one GPU by the
// CUDA backend (gpt2_cuda.hpp), with the results document's keys (step, forward, backward and
// optimizer medians, per-step arrays) plus the device's peak memory.
//
//   return run_cuda_backend(config, "run.json");   // exit code: 0, 1 failed, 77 no device
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "calibrate/exec/executor.hpp"
#include "calibrate/exec/gpt2_cuda.hpp"

namespace ddpsim::exec {

/// Exit code when there is no CUDA device or no CUDA build (ctest's SKIP_RETURN_CODE).
constexpr int kNoDeviceExit = 77;

/// Throws UnsupportedError when the CUDA backend cannot run `c` (not a GPT-2, more than one
/// rank, ZeRO, hooks, accumulation).
void check_cuda_backend(const ExecConfig& c);
/// The results document of a CUDA run (medians over the measured steps, per-step arrays).
nlohmann::json cuda_results_json(const ExecConfig& c, const CudaRunResult& r);
/// Runs, prints the breakdown, writes `out_path` atomically (when given). Returns the exit code.
int run_cuda_backend(const ExecConfig& c, const std::string& out_path);

}  // namespace ddpsim::exec
