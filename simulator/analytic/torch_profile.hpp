// torch_profile.hpp: a calibration profile's "torch" section (ddpsim calibrate --backend torch,
// calibrate/torch/torch_calibrate.py) as the costs of a PyTorch DDP job on that machine. The
// Predictor applies it to every plan it makes for a workload the section calibrated (the run
// API, so `ddpsim predict --profile`, plan, the GUI, the Python module and validate all see it).
//
// What the calibration timed, each part alone, never the job being predicted:
//  - per workload (name, untied parameters, per-GPU batch, optimizer): every layer's forward
//    and backward inside DistributedDataParallel with a comm hook that reduces nothing (the
//    Reducer's copies into the buckets are in the backward), and the optimizer step
//    (opt.step() + zero_grad(set_to_none=True));
//  - torch's gloo all_reduce per size, one at a time ("sync_s") and two in flight ("pair_s",
//    per all-reduce: ProcessGroupGloo runs collectives on `gloo_threads` worker threads);
//  - the contention of a synthetic compute (forward + backward of a fixed MLP, the autograd
//    engine with the GIL released, as DDP's backward runs) with all-reduces of each size back
//    to back beside it: how much slower each runs while the other does.
// These become the plan's layer times and optimizer (apply_measured_costs), each DDP bucket's
// collective_s / paired_s at its size, its compute_slowdown and collective_slowdown (the
// engines' processor sharing, ddp_timeline.hpp) and StepPlan::comm_lanes = gloo_threads.
//
//   auto c = TorchCalibration::from_profile(*scenario.hardware.profile);
//   std::string why;
//   if (const TorchCalibration::Entry* e = c->entry(*scenario.workload, 32, Optimizer::kAdam,
//   &why))
//     apply_torch_collectives(plan, *c);   // after apply_measured_costs(plan, e->costs)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/profile/profile.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/analytic/step_plan.hpp"

namespace ddpsim::sim {

class TorchCalibration {
 public:
  struct AllReduceRow {
    double bytes = 0, sync_s = 0, pair_s = 0;
  };
  struct ContentionRow {
    double bytes = 0, compute_slowdown = 1, collective_slowdown = 1;
  };
  /// One calibrated workload: its layer and optimizer costs (MeasuredCosts::source names the
  /// profile).
  struct Entry {
    std::string workload, optimizer;
    std::int64_t parameters = 0, per_gpu_batch = 0;
    std::vector<std::string> layer_names;
    MeasuredCosts costs;
  };

  /// The profile's section; nullopt without one. The profile's schema
  /// (model/profile/profile_keys.cpp) has checked its keys and types.
  static std::optional<TorchCalibration> from_profile(const model::Profile& p);

  int ranks() const { return ranks_; }
  int gloo_threads() const { return gloo_threads_; }
  const std::string& source() const { return source_; }

  /// The entry for `w` at `per_gpu_batch` and `optimizer` whose layers are w's layers; nullptr,
  /// with the reason in *why, when there is none.
  const Entry* entry(const model::Workload& w, std::int64_t per_gpu_batch,
                     model::Optimizer optimizer, std::string* why) const;

  /// One all-reduce of `bytes` (pair: per all-reduce with two in flight): linear in size between
  /// the two measured sizes around it; below the smallest, the smallest's time; above the
  /// largest, the line through the two largest (at least the largest's time). E.g. rows
  /// {1 MiB: 3 ms, 2 MiB: 5 ms}: 1.5 MiB -> 4 ms, 4 MiB -> 9 ms, 64 KiB -> 3 ms. nullopt
  /// without rows.
  std::optional<double> all_reduce_s(double bytes, bool pair) const;

  /// The contention beside an all-reduce of `bytes`: interpolated in log2(size) between the
  /// measured sizes around it, the end rows' values beyond them; each at least 1 (sharing the
  /// cores cannot speed either up: below 1 is noise). E.g. rows {1 MiB: 1.2, 1.5; 4 MiB: 1.6,
  /// 2.5}: 2 MiB -> 1.4, 2.0; 512 KiB -> 1.2, 1.5; 64 MiB -> 1.6, 2.5. nullopt without rows.
  std::optional<ContentionRow> contention_at(double bytes) const;

 private:
  std::string source_;
  int ranks_ = 0, gloo_threads_ = 1;
  std::vector<Entry> entries_;
  std::vector<AllReduceRow> all_reduce_;
  std::vector<ContentionRow> contention_;
};

/// The calibration's gloo on DDP plan `sp` (made for `c.ranks()` ranks, no communication hook):
/// every bucket's collective_s, paired_s, compute_slowdown and collective_slowdown at its
/// size, the first iteration's one bucket of every gradient, and comm_lanes = gloo_threads.
/// Returns what it applied, for the plan's note ("" when nothing: no all-reduce rows).
std::string apply_torch_collectives(StepPlan& sp, const TorchCalibration& c);

}  // namespace ddpsim::sim
