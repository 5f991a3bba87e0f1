// goodput.hpp: what failures and checkpoints cost a job (the scenario's "reliability" section).
//
// Failures are independent and exponential: the job fails at the sum of its nodes' (or GPUs')
// rates, so its MTBF is M = node MTBF / nodes (or GPU MTBF / GPUs); any failure stops the
// synchronous job. The job trains tau seconds, writes a checkpoint in delta seconds, and so on;
// a failure costs the restart R (restart_minutes plus reading the checkpoint back) and the work
// since the last checkpoint.
//  - Checkpoint interval (Young, "A first order approximation to the optimum checkpoint interval",
//    CACM 17(9), 1974): the waste per unit of work delta / tau + tau / (2 M) is least at
//        tau* = sqrt(2 delta M).
//    The job checkpoints at a step boundary: every k = max(1, round(tau / step)) steps. An
//    interval at least as long as the job (training.target's failure-free time T) takes no
//    checkpoint: a failure restarts the job from the beginning (tau = T, delta = 0 below).
//  - Expected wall time per tau of training (Daly, "A higher order estimate of the optimum
//    checkpoint interval for restart dumps", FGCS 22(3), 2006: its model of the wall-clock time
//    with exponential failures, which may also strike during a checkpoint or a restart):
//        W(tau) = M e^(R/M) (e^((tau + delta)/M) - 1),
//    so the effective training time ratio is ETTR = tau / W(tau) (-> tau / (tau + delta) as
//    M -> infinity), and the time to train with failures is the failure-free time / ETTR.
//  - Checkpoint volume: the model state the strategy keeps (parameters and optimizer state,
//    simulator/prediction/memory.hpp state_bytes_per_param; no gradients). format "dcp" writes
//    every tensor once and spreads the writes over all nodes (torch.distributed.checkpoint gives a
//    replicated tensor to the rank with the smallest plan so far, _dedup_save_plans.py); on
//    restart each rank reads the state it holds (DDP: all of it; ZeRO-1/2: the parameters and
//    its optimizer shard; FSDP/ZeRO-3: its shard of everything; HSDP: its node's shard).
//    format "rank0" writes everything from node 0 and every rank reads the whole file.
//    A transfer takes max(busiest node's bytes / node bandwidth, all bytes / aggregate
//    bandwidth).
//  - checkpoint.async (torch.distributed.checkpoint.async_save; PyTorch recipe "Asynchronous
//    Saving with Distributed Checkpoint", staging.py AsyncStager: the default stager copies the
//    rank's state dict into CPU buffers, then dcp.save writes it in parallel with training):
//    training stops for the staging only, delta = each rank's state (what it reads back on
//    restart) / the GPU's PCIe rate; the write W still has to finish before the checkpoint
//    counts, so a failure also loses the write in flight (R + W in Daly's formula), and the
//    interval is at least W (one save in flight: the next one waits for the previous).
//
//   Goodput g = goodput(*scenario.reliability, workload, cluster, training, parallelism, pred,
//                       scenario.gpu_hour_usd);
//   double wall = *pred.time_to_train_s / g.ettr;   // == *g.time_to_train_s
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/scenario/scenario.hpp"

namespace ddpsim::sim {

struct Prediction;

/// Young's optimum checkpoint interval sqrt(2 x checkpoint_s x mtbf_s), seconds.
double young_interval_s(double checkpoint_s, double mtbf_s);

/// Daly's effective training time ratio tau / (M e^(R/M) (e^((tau+delta)/M) - 1)) for an
/// interval `interval_s` (tau), checkpoint `checkpoint_s` (delta), restart `restart_s` (R) and
/// job MTBF `mtbf_s` (M); 0 when the expected wall time overflows a double.
double daly_ettr(double interval_s, double checkpoint_s, double restart_s, double mtbf_s);

/// Bytes one checkpoint moves (see the file comment).
struct CheckpointVolume {
  double total_bytes = 0;           ///< the whole model state, written once
  double write_bytes_max_node = 0;  ///< the busiest node's share of the write
  double read_bytes_per_rank = 0;   ///< what each rank reads back on restart
  double read_bytes_max_node = 0;   ///< a node's ranks together
  double read_bytes_total = 0;      ///< all ranks together
};
CheckpointVolume checkpoint_volume(double params, model::Optimizer optimizer,
                                   model::Precision precision, model::Strategy strategy, int gpus,
                                   int gpus_per_node, model::CheckpointFormat format,
                                   int fsdp2_shard = 0);  ///< fsdp2: the mesh's shard size

/// A prediction's goodput (the result JSON's "goodput").
struct Goodput {
  double job_mtbf_s = 0;
  std::string mtbf_source;  ///< "node_mtbf_hours 6335 / 128 nodes (default: Llama 3 ...)"
  CheckpointVolume volume;
  double checkpoint_time_s = 0;      ///< the write (delta unless async)
  bool async = false;                ///< checkpoint.async
  double checkpoint_blocking_s = 0;  ///< delta: the write, or async's staging copy
  double restore_read_s = 0;         ///< reading the checkpoint back
  double restart_time_s = 0;         ///< R: restart_minutes + restore_read_s
  double young_interval_s = 0;       ///< sqrt(2 delta M)
  bool interval_given = false;       ///< checkpoint.interval_minutes set (else Young's)
  /// False when the interval reaches the end of the job (training.target): no checkpoint is
  /// taken, interval_steps is 0 and interval_s the job's failure-free time.
  bool checkpoints = true;
  std::int64_t interval_steps = 1;
  double interval_s = 0;  ///< interval_steps x step time: the tau ETTR uses
  /// First order: the restart plus, on average, half of an interval and checkpoint redone.
  double lost_per_failure_s = 0;
  double ettr = 1;
  /// With a time to train (training.target): the same with failures and checkpoints.
  std::optional<double> time_to_train_s;
  std::optional<double> gpu_hours;
  std::optional<double> cost_usd;
  std::optional<double> expected_failures;
};

/// The goodput of `p`, a prediction of (cluster, training, parallelism) for `workload`.
Goodput goodput(const model::ReliabilityConfig& r, const model::Workload& workload,
                const model::ClusterConfig& cluster, const model::TrainingConfig& training,
                const model::ParallelismConfig& parallelism, const Prediction& p,
                std::optional<double> gpu_hour_usd, int gpus_per_host = 0);

/// Sets p.goodput when `r` is set (a warning when the job would not finish); nothing otherwise.
/// `gpus_per_host`: HardwareSpec::gpus_per_host, the unit node_mtbf_hours and the per-node
/// checkpoint bandwidth are of (0: a host per cluster node, as a DGX).
void apply_goodput(const std::optional<model::ReliabilityConfig>& r,
                   const model::Workload& workload, const model::ClusterConfig& cluster,
                   const model::TrainingConfig& training,
                   const model::ParallelismConfig& parallelism, std::optional<double> gpu_hour_usd,
                   Prediction& p, int gpus_per_host = 0);

}  // namespace ddpsim::sim
