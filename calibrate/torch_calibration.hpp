// torch_calibration.hpp: `ddpsim-calibrate --backend torch --scenario S` — the scenario's layers,
// optimizer step and torch's own gloo all-reduce timed through PyTorch
// (calibrate/torch/torch_calibrate.py under the python that imports torch), written into the
// profile's "torch" section, so that every prediction on the profile (`ddpsim predict
// --profile`, validate, the GUI, Python) is of what the user's PyTorch job pays
// (simulator/analytic/torch_profile.hpp).
//
// The profile (--out, default results/profile-<host>.json) must already hold this machine's CPU
// calibration (ddpsim-calibrate --backend cpu): the torch section completes it and replaces an
// earlier one. Every sweep point's distinct (workload, per-GPU batch, optimizer) is calibrated
// once; the all-reduce sizes reach the largest model's gradient bytes.
// Which python: $DDPSIM_TORCH_PYTHON, else the one CMake found that imports torch, else
// "python3"; the module calibrate.torch.torch_calibrate from the package folders
// model/process_env.hpp finds ($DDPSIM_PYTHONPATH, an install, this source tree).
//
//   calib::RunOptions o; o.backend = "torch"; o.scenario = "s.json"; o.out = "p.json";
//   return calib::run_torch_calibration(o);   // 0 ok, 1 a failed run; throws InputError
#pragma once

#include "calibrate/calibration_run.hpp"

namespace ddpsim::calib {

/// The run (see the file comment). Returns 0, or 1 when the Python program failed; throws
/// InputError (no scenario, no base profile, a bad profile) and UnsupportedError (a point
/// PyTorch cannot run here: the program's exit 2, its line).
int run_torch_calibration(const RunOptions& o);

}  // namespace ddpsim::calib
