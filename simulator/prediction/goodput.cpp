#include "simulator/prediction/goodput.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/error.hpp"
#include "simulator/prediction/fsdp2.hpp"
#include "simulator/prediction/memory.hpp"
#include "simulator/prediction/prediction.hpp"

namespace ddpsim::sim {

using model::CheckpointFormat;
using model::Strategy;

double young_interval_s(double checkpoint_s, double mtbf_s) {
  DDPSIM_ASSERT(checkpoint_s >= 0 && mtbf_s > 0, "Young's interval needs delta >= 0, M > 0");
  return std::sqrt(2.0 * checkpoint_s * mtbf_s);
}

double daly_ettr(double interval_s, double checkpoint_s, double restart_s, double mtbf_s) {
  DDPSIM_ASSERT(interval_s > 0 && checkpoint_s >= 0 && restart_s >= 0 && mtbf_s > 0,
                "Daly's ETTR needs tau > 0, delta >= 0, R >= 0, M > 0");
  // expm1 keeps the M -> infinity limit exact: M (e^(x/M) - 1) -> x.
  const double wall =
      mtbf_s * std::exp(restart_s / mtbf_s) * std::expm1((interval_s + checkpoint_s) / mtbf_s);
  if (!std::isfinite(wall) || wall <= 0) return 0.0;
  return interval_s / wall;
}

CheckpointVolume checkpoint_volume(double params, model::Optimizer optimizer,
                                   model::Precision precision, Strategy strategy, int gpus,
                                   int gpus_per_node, CheckpointFormat format, int fsdp2_shard) {
  DDPSIM_ASSERT(params >= 0 && gpus >= 1 && gpus_per_node >= 1, "checkpoint volume inputs");
  const StateBytesPerParam bpp = state_bytes_per_param(optimizer, precision);
  const double n = gpus;
  const double param_bytes = bpp.params * params;
  const double opt_bytes = bpp.optimizer * params;
  CheckpointVolume v;
  v.total_bytes = param_bytes + opt_bytes;
  const int per_node = std::min(gpus, gpus_per_node);
  if (format == CheckpointFormat::kRank0) {
    v.write_bytes_max_node = v.total_bytes;
    v.read_bytes_per_rank = v.total_bytes;
  } else {
    // The busiest host writes its ranks' shares: per_node / n of the whole (1 / nodes when the
    // GPUs fill whole hosts; 4/6 for 6 GPUs on 4-GPU trays, whose second tray holds 2).
    v.write_bytes_max_node = v.total_bytes * per_node / n;
    switch (strategy) {
      case Strategy::kDdp:
        v.read_bytes_per_rank = v.total_bytes;
        break;
      case Strategy::kZero1:
      case Strategy::kZero2:
        v.read_bytes_per_rank = param_bytes + opt_bytes / n;
        break;
      case Strategy::kZero3:
      case Strategy::kFsdpFullShard:
      case Strategy::kFsdpShardGradOp:
        v.read_bytes_per_rank = v.total_bytes / n;
        break;
      case Strategy::kFsdpHybrid:
        v.read_bytes_per_rank = v.total_bytes / per_node;
        break;
      case Strategy::kFsdp2:
        // Each rank loads its shard of the mesh's shard dimension (HSDP replicas load the same).
        v.read_bytes_per_rank = v.total_bytes / (fsdp2_shard > 0 ? fsdp2_shard : n);
        break;
    }
  }
  v.read_bytes_max_node = v.read_bytes_per_rank * per_node;
  v.read_bytes_total = v.read_bytes_per_rank * n;
  return v;
}

namespace {

// max(busiest node / node bandwidth, everything / aggregate bandwidth).
double transfer_s(double node_bytes, double total_bytes, double node_bw,
                  const std::optional<double>& aggregate_bw) {
  double t = node_bytes / node_bw;
  if (aggregate_bw) t = std::max(t, total_bytes / *aggregate_bw);
  return t;
}

}  // namespace

Goodput goodput(const model::ReliabilityConfig& r, const model::Workload& workload,
                const model::ClusterConfig& cluster, const model::TrainingConfig& training,
                const model::ParallelismConfig& parallelism, const Prediction& p,
                std::optional<double> gpu_hour_usd, int gpus_per_host) {
  Goodput g;
  // Hosts fail and write checkpoints: a DGX's node, or a GB200 NVL72 rack's 4-GPU trays.
  const int per_host = gpus_per_host > 0 ? gpus_per_host : cluster.gpus_per_node;
  const int nodes = model::ClusterConfig{cluster.gpus, per_host}.nodes();
  if (r.gpu_mtbf_hours) {
    g.job_mtbf_s = *r.gpu_mtbf_hours * 3600.0 / cluster.gpus;
    g.mtbf_source = fmt::format("gpu_mtbf_hours {:g} / {} GPUs", *r.gpu_mtbf_hours, cluster.gpus);
  } else {
    g.job_mtbf_s = *r.node_mtbf_hours * 3600.0 / nodes;
    g.mtbf_source = fmt::format("node_mtbf_hours {:.6g} / {} node{}{}", *r.node_mtbf_hours, nodes,
                                nodes == 1 ? "" : "s",
                                r.mtbf_defaulted ? " (default: Llama 3's 16,384-GPU run)" : "");
  }
  const auto& k = r.checkpoint;
  g.volume =
      checkpoint_volume(static_cast<double>(workload.param_count()), training.optimizer,
                        training.precision, parallelism.strategy, cluster.gpus, per_host, k.format,
                        parallelism.strategy == Strategy::kFsdp2
                            ? fsdp2_mesh("<input>", parallelism.fsdp2, cluster.gpus).shard
                            : 0);
  g.checkpoint_time_s = transfer_s(g.volume.write_bytes_max_node, g.volume.total_bytes,
                                   k.write_bytes_per_s_per_node, k.aggregate_write_bytes_per_s);
  g.restore_read_s = transfer_s(g.volume.read_bytes_max_node, g.volume.read_bytes_total,
                                k.read_bytes_per_s_per_node, k.aggregate_read_bytes_per_s);
  g.restart_time_s = r.restart_s + g.restore_read_s;
  g.async = k.async;
  g.checkpoint_blocking_s = g.checkpoint_time_s;
  // async_save: a failure also loses the write in flight (Daly's R); one save at a time.
  double lost_write_s = 0, min_interval_s = 0;
  if (k.async) {
    DDPSIM_ASSERT(k.staging_bytes_per_s > 0, "async checkpoints need the staging rate");
    g.checkpoint_blocking_s = g.volume.read_bytes_per_rank / k.staging_bytes_per_s;
    lost_write_s = g.checkpoint_time_s;
    min_interval_s = g.checkpoint_time_s;
  }
  g.young_interval_s = young_interval_s(g.checkpoint_blocking_s, g.job_mtbf_s);
  g.interval_given = k.interval_s.has_value();
  const double wanted =
      g.interval_given ? *k.interval_s : std::max(g.young_interval_s, min_interval_s);
  // Checkpoints are taken between steps: the nearest whole number of steps, at least one.
  const double step = p.step_time_s;
  DDPSIM_ASSERT(step > 0, "goodput needs the prediction's step time");
  // An interval that reaches the end of the job (its failure-free time) takes no checkpoint: the
  // job is one segment of T seconds that a failure restarts from the beginning (Daly's W with
  // tau = T and delta = 0). Counted in steps it would round or overflow (10^6 s over a 10^-15 s
  // step is past 2^63), so the comparison is made in seconds first.
  const double job_s = p.time_to_train_s.value_or(std::numeric_limits<double>::infinity());
  g.checkpoints = wanted < job_s;
  if (!g.checkpoints) {
    g.interval_steps = 0;
    g.interval_s = job_s;
    g.checkpoint_blocking_s = 0;
    g.lost_per_failure_s = g.restart_time_s + job_s / 2.0;
    g.ettr = daly_ettr(job_s, 0.0, g.restart_time_s, g.job_mtbf_s);
  } else {
    // Whole steps, at most 2^53 (exact in a double; a job of more steps has no time to train and
    // keeps this interval).
    const double steps = std::min(std::round(wanted / step), 9007199254740992.0);
    g.interval_steps = std::max<std::int64_t>(1, static_cast<std::int64_t>(steps));
    g.interval_s = static_cast<double>(g.interval_steps) * step;
    g.lost_per_failure_s =
        g.restart_time_s + lost_write_s + (g.interval_s + g.checkpoint_blocking_s) / 2.0;
    g.ettr = daly_ettr(g.interval_s, g.checkpoint_blocking_s, g.restart_time_s + lost_write_s,
                       g.job_mtbf_s);
  }
  if (p.time_to_train_s && g.ettr > 0) {
    g.time_to_train_s = *p.time_to_train_s / g.ettr;
    g.gpu_hours = *g.time_to_train_s * cluster.gpus / 3600.0;
    if (gpu_hour_usd) g.cost_usd = *g.gpu_hours * *gpu_hour_usd;
    g.expected_failures = *g.time_to_train_s / g.job_mtbf_s;
  }
  return g;
}

void apply_goodput(const std::optional<model::ReliabilityConfig>& r,
                   const model::Workload& workload, const model::ClusterConfig& cluster,
                   const model::TrainingConfig& training,
                   const model::ParallelismConfig& parallelism, std::optional<double> gpu_hour_usd,
                   Prediction& p, int gpus_per_host) {
  if (!r) return;
  p.goodput = goodput(*r, workload, cluster, training, parallelism, p, gpu_hour_usd, gpus_per_host);
  const Goodput& g = *p.goodput;
  if (!g.checkpoints) {
    p.warnings.push_back(fmt::format(
        "reliability: no checkpoint is taken: the {} interval ({:.3g} h) is not shorter than the "
        "job ({:.3g} h without failures), so a failure restarts it from the beginning",
        g.interval_given ? "checkpoint" : "optimal (Young's)",
        (g.interval_given ? *r->checkpoint.interval_s : g.young_interval_s) / 3600.0,
        g.interval_s / 3600.0));
  }
  if (g.ettr <= 0) {
    p.warnings.push_back(fmt::format(
        "reliability: the job would not finish: a failure every {:.3g} h costs {:.3g} h (restart "
        "{:.3g} h, checkpoint every {:.3g} h taking {:.3g} h); ETTR 0",
        g.job_mtbf_s / 3600.0, g.lost_per_failure_s / 3600.0, g.restart_time_s / 3600.0,
        g.interval_s / 3600.0, g.checkpoint_time_s / 3600.0));
  } else if (g.ettr < 0.5) {
    p.warnings.push_back(fmt::format(
        "reliability: ETTR {:.2f}: less than half of the wall time trains (job MTBF {:.3g} h, "
        "checkpoint {:.3g} s, restart {:.3g} s)",
        g.ettr, g.job_mtbf_s / 3600.0, g.checkpoint_time_s, g.restart_time_s));
  }
}

}  // namespace ddpsim::sim
