// reliability.hpp: the scenario's "reliability" section: how often the cluster fails and what a
// checkpoint and a restart cost (simulator/prediction/goodput.hpp turns it into ETTR and time to
// train with failures).
//
// Default failure rate, when the section gives neither node_mtbf_hours nor gpu_mtbf_hours:
// Llama 3's 405B pre-training (Llama Team, "The Llama 3 Herd of Models", arXiv:2407.21783,
// sec. 3.3.4): 419 unexpected interruptions in a 54-day snapshot on 16,384 H100 GPUs in
// 8-GPU servers (2,048 nodes): 2,048 x 54 x 24 / 419 = 6,335 node-hours between failures (the
// interruptions include switches and cables, charged to the nodes here).
//
//   std::optional<ReliabilityConfig> r = parse_reliability(doc, "run.json");  // doc: the file
//   if (r) use(r->checkpoint.write_bytes_per_s_per_node);
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ddpsim::model {

/// Node-hours between failures measured on Llama 3's 16,384-GPU run (see the file comment).
inline constexpr double kLlama3NodeMtbfHours = 2048.0 * 54.0 * 24.0 / 419.0;

/// How a checkpoint is written and read.
enum class CheckpointFormat {
  /// torch.distributed.checkpoint (DCP): every rank writes; a tensor several ranks hold is
  /// written once, by the rank with the smallest plan so far
  /// (torch/distributed/checkpoint/_dedup_save_plans.py), so writes spread over all nodes;
  /// on restart each rank reads the state it holds.
  kDcp,
  /// torch.save of the full state dict on rank 0 (PyTorch's DDP tutorial; FSDP
  /// FULL_STATE_DICT): node 0 writes everything and every rank torch.loads the whole file.
  kRank0,
};
/// "dcp", "rank0".
const char* checkpoint_format_name(CheckpointFormat f);

struct CheckpointConfig {
  CheckpointFormat format = CheckpointFormat::kDcp;
  double write_bytes_per_s_per_node = 0;  ///< storage write bandwidth one node gets
  double read_bytes_per_s_per_node = 0;   ///< default: the write bandwidth
  /// The storage system's total bandwidth across nodes; unset: no shared limit.
  std::optional<double> aggregate_write_bytes_per_s;
  std::optional<double> aggregate_read_bytes_per_s;
  /// Training time between checkpoints; unset: Young's optimum sqrt(2 x checkpoint x MTBF).
  std::optional<double> interval_s;
  /// torch.distributed.checkpoint.async_save: training stops only while each rank copies its
  /// state to CPU buffers (staging, at staging_bytes_per_s); the write runs beside training.
  bool async = false;
  /// The GPU's path to host memory (the hardware's PCIe link), set where the scenario is read.
  double staging_bytes_per_s = 0;
};

struct ReliabilityConfig {
  /// Exactly one is set: the section's value, or node_mtbf_hours = kLlama3NodeMtbfHours.
  std::optional<double> node_mtbf_hours;
  std::optional<double> gpu_mtbf_hours;
  bool mtbf_defaulted = false;
  double restart_s = 0;  ///< rescheduling, start-up and re-initialisation, before the reload
  CheckpointConfig checkpoint;
};

/// The "/reliability" section of `doc` (already validated against the key table), or nullopt
/// when there is none. Throws InputError naming `file` for what the table cannot say: both
/// node_mtbf_hours and gpu_mtbf_hours.
std::optional<ReliabilityConfig> parse_reliability(const nlohmann::json& doc,
                                                   const std::string& file);

}  // namespace ddpsim::model
