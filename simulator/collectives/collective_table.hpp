// collective_table.hpp: `ddpsim collective`'s computation as a function: the modelled cost of
// one collective at every size from min_bytes to max_bytes (doubling), on a system given as a
// preset name or a hardware section, launched as nccl-tests or DDP would launch it. The Python
// module's ddpsim.collective() calls it; the rows are what the CLI's table prints.
//
//   CollectiveTableRequest q;
//   q.hardware = {{"preset", "dgx-a100"}};
//   q.gpus = 16;
//   CollectiveTable t = collective_table(q);   // t.rows[i].time_s, .busbw_gbytes_per_s
//   nlohmann::json doc = collective_table_json(t);
//
// Bad input (an unknown op, protocol or launch, a size outside 1 .. 2^50 bytes, a hardware
// section the scenario reader refuses) throws InputError naming `source` and the request's key.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ddpsim::sim {

/// The largest size a table may ask for: 2^50 bytes (the sweep doubles, so <= 51 rows).
inline constexpr double kMaxCollectiveTableBytes = 1125899906842624.0;

struct CollectiveTableRequest {
  /// A hardware section of a scenario ({"preset": "dgx-h100"} or explicit keys).
  nlohmann::json hardware = {{"preset", "dgx-h100"}};
  int gpus = 8;                     ///< ranks, 1 .. 10^7
  std::string op = "all_reduce";    ///< all_reduce | reduce_scatter | all_gather | broadcast
  double min_bytes = 8;             ///< whole bytes, 1 .. 2^50
  double max_bytes = 1073741824.0;  ///< whole bytes, min_bytes .. 2^50
  std::string algorithm = "auto";   ///< parallelism.algorithm's words (NCCL_ALGO)
  std::string protocol = "auto";    ///< auto | ll | ll128 | simple (NCCL_PROTO)
  /// "process" (one process per GPU: torchrun, DDP, nccl-tests -g 1) or "threads" (one thread
  /// drives the node's GPUs: nccl-tests -g N).
  std::string launch = "process";
  std::string nccl_version;             ///< empty: the preset's
  std::optional<int> gpus_per_process;  ///< 1 .. 1024; overrides launch
  bool cuda_graphs = false;             ///< launched from a CUDA graph (nccl-tests -G)
  /// The name errors give, and the file relative references (a hardware profile) resolve from.
  std::string source = "<collective>";
};

struct CollectiveTableRow {
  double size_bytes = 0;  ///< whole bytes (an integer in the JSON)
  double count = 0;       ///< float elements (size / 4), as nccl-tests prints
  std::string algorithm;
  std::string protocol;
  int channels = 0;
  double chunk_bytes = 0;
  double time_s = 0;
  double algbw_gbytes_per_s = 0;
  double busbw_gbytes_per_s = 0;
};

struct CollectiveTable {
  std::string op;
  int gpus = 0;
  int nodes = 0;
  std::string gpu;       ///< the GPU's name
  std::string hardware;  ///< the system's name
  std::string nccl_version;
  int gpus_per_process = 1;
  bool cuda_graphs = false;
  std::string algorithm;  ///< as requested
  std::string protocol;   ///< as requested
  /// What reading the hardware noticed: the NIC fitted to a collectives profile (fabric_fit.hpp).
  std::vector<std::string> notes;
  std::vector<CollectiveTableRow> rows;
};

CollectiveTable collective_table(const CollectiveTableRequest& q);

/// {"op", "gpus", "nodes", "gpu", "hardware", "nccl_version", "gpus_per_process",
/// "cuda_graphs", "algorithm", "protocol", "notes", "rows": [{"size_bytes", "count", "type",
/// "algorithm", "protocol", "channels", "chunk_bytes", "time_s", "algbw_gbytes_per_s",
/// "busbw_gbytes_per_s"}]}
nlohmann::json collective_table_json(const CollectiveTable& t);

}  // namespace ddpsim::sim
