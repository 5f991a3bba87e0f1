// analytic_bounds.cpp: what the planner asks of a Predictor before it plans a candidate
// (analytic.hpp): a floor under the step time and the memory per GPU without a plan.
#include <algorithm>

#include "simulator/analytic/analytic.hpp"
#include "simulator/analytic/normal_order_stats.hpp"
#include "simulator/analytic/sharded_layout.hpp"

namespace ddpsim::sim {

std::optional<double> Predictor::step_time_floor_s(const model::TrainingConfig& training,
                                                   const model::ParallelismConfig& par) const {
  // plan() replaces the model's layers or optimizer with measured ones: no floor from the model.
  if (hw_.profile || measured_ || torch_) return std::nullopt;
  // As plan_model: FSDP2 with a param_dtype all-gathers cast weights, so autocast casts none.
  const bool weights_cast = !(par.strategy == model::Strategy::kFsdp2 && par.fsdp2.param_dtype);
  const LayerTimes& lt =
      layer_times(training.per_gpu_batch, training, Bound::kMedian, weights_cast);
  double micro_batch_s = lt.fwd_total + lt.bwd_total;
  if (training.activation_checkpointing.enabled()) {
    micro_batch_s +=
        recomputation_s(*workload_, training.activation_checkpointing, lt.fwd, lt.fwd_op_recompute);
  }
  double floor = training.grad_accumulation * micro_batch_s;
  // Sharded ranks step their shard (or offload it): only DDP's optimizer is the whole one.
  if (!model::is_sharded(par.strategy)) {
    floor += optimizer_time(training, model::optimizer_impl_for(training, par.strategy));
  }
  return floor;
}

double Predictor::step_time_s(const model::ClusterConfig& cluster,
                              const model::TrainingConfig& training,
                              const model::ParallelismConfig& par, double jitter_cv) const {
  const StepPlan sp = plan(cluster, training, par);
  if (model::is_sharded(sp.strategy)) check_sharded_layout(file_, sp);  // as predict()
  // predict()'s mean factor of the slowest rank, its layout (steady_step_s is both of its
  // branches' step) and apply_input_floor.
  const double f = jitter_cv > 0 ? 1.0 + jitter_cv * expected_max_std_normal(cluster.gpus) : 1.0;
  return std::max(steady_step_s(sp, f), sp.input_floor_s);
}

const MemoryEstimate* Predictor::unplanned_memory(const model::ClusterConfig& cluster,
                                                  const model::TrainingConfig& training,
                                                  const model::ParallelismConfig& par) const {
  // PowerSGD's and top-k's state is sized by their plan (StepPlan::hook_memory_bytes); every
  // other hook holds none.
  const model::CommHook::Kind hook = par.comm_hook.kind;
  if (hook != model::CommHook::Kind::kNone && hook != model::CommHook::Kind::kFp16 &&
      hook != model::CommHook::Kind::kBf16) {
    return nullptr;
  }
  return &memory_estimate(0.0, cluster, training, par);
}

}  // namespace ddpsim::sim
