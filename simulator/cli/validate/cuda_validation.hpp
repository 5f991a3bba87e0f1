// cuda_validation.hpp: `ddpsim validate --backend cuda` — the scenario's GPT-2 predicted on one
// GPU (its hardware preset, or --profile, a `ddpsim calibrate --backend cuda` profile) with both
// engines, run by `ddpsim-exec --backend cuda` on the device (with --runner torch: by PyTorch
// itself, calibrate/torch/ddp_runner.py --device cuda: its GPT2-shaped module, torch.autocast and
// torch.optim on the GPU, phases timed with CUDA events), and compared per component: step,
// forward, backward and optimizer time, and memory (the predicted per-GPU memory without the
// runtime reserve and fragmentation against the run's peak allocated bytes; the predicted total
// against what the device had in use). One GPU only: NCCL refuses two ranks on one device, so
// this checks the single-rank path (issue 18 item 3).
//
//   return run_cuda_validation(options);   // exit 0; 77 without a device (one line); 2 refused
#pragma once

#include "simulator/cli/validate/options.hpp"

namespace ddpsim::validate {

int run_cuda_validation(const Options& o);

}  // namespace ddpsim::validate
