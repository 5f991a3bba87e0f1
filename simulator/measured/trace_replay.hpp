// trace_replay.hpp: a traced DDP job (the PyTorch profiler traces of its ranks, imported by
// model/imports/kineto_import.hpp) as the measured costs the run API lays out in place of the
// model's (RunOptions::measured, step_plan.hpp MeasuredCosts): `ddpsim validate --trace`'s replay
// and
// --extrapolate, and `ddpsim import trace`'s drafted scenario.
//
// TracedJob averages the traces (one per rank) of their per-step means: step, forward, backward,
// optimizer (the phases of GPU kernel time, or of CPU op time on a CPU trace), summed and exposed
// communication, each traced layer's forward and backward, and the DDP buckets: the all-reduces
// of every profiled step in launch order, the i-th of each step being bucket i (PyTorch's Reducer
// launches bucket i's all-reduce only after bucket i-1's: reducer.cpp mark_bucket_ready walks
// next_bucket_ in order), whose measured duration is the mean over every step of every trace.
//
// measured_costs() builds the replay of one scenario point:
//  - compute: where the trace has module annotations and every layer of the workload is one of
//    them (by name), each layer's traced forward and backward, and the rest of the traced phase
//    (unannotated kernels: the loss, modules the workload does not name) spread over the layers
//    in proportion to the model's own per-layer estimate; otherwise the whole traced forward and
//    backward spread that way. Per micro-batch: the traced phase over grad_accumulation;
//  - the traced optimizer (Optimizer.* annotations: zero_grad and step);
//  - with `collectives`: each bucket's all-reduce its measured duration, and broadcast_buffers
//    the traced broadcasts of a step. Without (extrapolation to other N, caps, networks): the
//    model costs the collectives; compute per sample does not change with N under DDP.
// The traced backward holds the Reducer's copies into the buckets (its autograd hook,
// reducer.cpp autograd_hook -> mark_variable_ready_dense, runs inside AccumulateGrad's
// evaluate_function) and the slowdown from concurrent NCCL kernels, so the plan's copies and
// interference are not added again (apply_measured_costs).
//
//   TracedJob j = load_traced_job({"rank0.json.gz", "rank1.json.gz"});
//   RunOptions o;
//   o.measured = std::make_shared<MeasuredCosts>(measured_costs(j, predictor.workload(), 1, true));
//   Prediction replay = predict_point(point, o);
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/scenario/scenario.hpp"
#include "model/workload/workload.hpp"
#include "simulator/analytic/step_plan.hpp"

namespace ddpsim::sim {

/// The traced job: means over the traces (ranks) of their per-step means; seconds, bytes.
struct TracedJob {
  std::vector<std::string> files;
  std::optional<int> world_size;  ///< distributedInfo (else the kernels' Group size)
  std::string backend;            ///< "nccl", "gloo"; empty without collectives
  int steps = 0;                  ///< profiled steps of the first trace
  double step_s = 0, forward_s = 0, backward_s = 0, optimizer_s = 0;
  double comm_s = 0, exposed_s = 0;
  bool has_communication = false;
  bool whole_model = true;  ///< some trace has no module annotations
  /// Per traced layer (module annotation): mean forward and backward over the traces.
  std::map<std::string, std::pair<double, double>> layers;
  /// The all-reduces of the first step of the first trace, launch order (-1 where unsized).
  std::vector<double> allreduce_bytes;
  /// Their element type as the trace names it ("Float"; empty where it does not say).
  std::vector<std::string> allreduce_dtypes;
  /// Per all-reduce index: the mean over every step of every trace of the time it adds to the
  /// communication's occupancy (its duration unless an earlier one still ran: gloo runs two at
  /// once, the replay one after another); empty when the steps do not all hold the same number
  /// of all-reduces (notes say so).
  std::vector<double> allreduce_s;
  double broadcast_s = 0;  ///< the broadcasts of a step (broadcast_buffers), summed
  std::vector<std::string> notes;
};

/// From imported sections (import_kineto_trace's output), one per file.
TracedJob traced_job(const std::vector<std::string>& files,
                     const std::vector<nlohmann::json>& sections);
/// Imports every file (model::import_kineto_file) and averages them.
TracedJob load_traced_job(const std::vector<std::string>& files);

/// The measured costs of the replay of `j` on workload `w` (see the file comment). `notes`
/// (optional) receives how the compute was mapped ("per layer: 53 of 53 layers", "whole model").
MeasuredCosts measured_costs(const TracedJob& j, const model::Workload& w, int grad_accumulation,
                             bool collectives, std::vector<std::string>* notes = nullptr);

/// A strict scenario drafted from what the traces say (`ddpsim import trace`): cluster.gpus
/// (the world size), parallelism ddp with bucket_cap_mb, training.grad_reduce_dtype (the
/// all-reduces' element type) and precision to match, simulation.steps (the profiled steps).
/// The cap: DDP closes a bucket once it reaches the cap (model/workload/bucketing.hpp), so every
/// bucket but the last (and the 1 MiB first bucket of a default cap) holds at least the cap: the
/// draft takes the largest whole MiB no bucket between the first and the last falls short of; a
/// first bucket below 25 MiB with a larger second one is the 1 MiB first bucket of the default
/// cap, left out as PyTorch leaves it out (bucket_cap_mb absent). What a trace cannot tell is
/// filled so that the draft reads and predicts, and listed in `unknown`: the model ("layers",
/// one parameter tensor per traced bucket with no FLOPs, so the drafted buckets are the traced
/// ones), training.per_gpu_batch (1), the hardware (a preset matching the backend).
struct DraftedScenario {
  nlohmann::json scenario;
  /// draft_onto: the merge patch applied to the base (what the trace tells), else null.
  nlohmann::json patch;
  std::vector<std::string> unknown;  ///< one line each: what to replace
  std::string summary;               ///< one line: what was drafted
};
/// Throws InputError naming the first file when the traces hold no all-reduce.
DraftedScenario draft_scenario(const TracedJob& j);

/// `ddpsim import trace --scenario BASE`: only what the traces tell, applied to the user's base
/// scenario (a JSON merge patch): cluster.gpus (the world size), parallelism ddp with the
/// inferred bucket_cap_mb (null, i.e. the default, when the traced buckets are the default's),
/// simulation.steps, and training.grad_reduce_dtype when the traced all-reduces carry another
/// type than the base sends (with a comm hook in the base: kept, and said in `unknown`). The
/// model, hardware and batch stay the base's. `base` is `base_doc` parsed.
DraftedScenario draft_onto(const TracedJob& j, const nlohmann::json& base_doc,
                           const model::Scenario& base);

}  // namespace ddpsim::sim
