#include "model/scenario/reliability.hpp"

#include "model/error.hpp"
#include "model/scenario/detail/json_io.hpp"

namespace ddpsim::model {

using nlohmann::json;

const char* checkpoint_format_name(CheckpointFormat f) {
  return f == CheckpointFormat::kRank0 ? "rank0" : "dcp";
}

std::optional<ReliabilityConfig> parse_reliability(const json& doc, const std::string& file) {
  if (!doc.contains("reliability")) return std::nullopt;
  const json& r = doc.at("reliability");
  ReliabilityConfig c;
  const bool node = r.contains("node_mtbf_hours");
  const bool gpu = r.contains("gpu_mtbf_hours");
  if (node && gpu) {
    throw InputError(file, "/reliability/gpu_mtbf_hours",
                     "one failure rate: node_mtbf_hours or gpu_mtbf_hours, not both",
                     "both are given");
  }
  if (node) c.node_mtbf_hours = r.at("node_mtbf_hours").get<double>();
  if (gpu) c.gpu_mtbf_hours = r.at("gpu_mtbf_hours").get<double>();
  if (!node && !gpu) {
    c.node_mtbf_hours = kLlama3NodeMtbfHours;
    c.mtbf_defaulted = true;
  }
  c.restart_s = r.at("restart_minutes").get<double>() * 60.0;
  const json& k = r.at("checkpoint");
  c.checkpoint.format =
      detail::get_or_default<std::string>(k, "/reliability/checkpoint/format") == "rank0"
          ? CheckpointFormat::kRank0
          : CheckpointFormat::kDcp;
  c.checkpoint.write_bytes_per_s_per_node = k.at("write_gbytes_per_s_per_node").get<double>() * 1e9;
  c.checkpoint.read_bytes_per_s_per_node =
      k.contains("read_gbytes_per_s_per_node")
          ? k.at("read_gbytes_per_s_per_node").get<double>() * 1e9
          : c.checkpoint.write_bytes_per_s_per_node;
  if (k.contains("aggregate_write_gbytes_per_s")) {
    c.checkpoint.aggregate_write_bytes_per_s =
        k.at("aggregate_write_gbytes_per_s").get<double>() * 1e9;
  }
  if (k.contains("aggregate_read_gbytes_per_s")) {
    c.checkpoint.aggregate_read_bytes_per_s =
        k.at("aggregate_read_gbytes_per_s").get<double>() * 1e9;
  }
  if (k.contains("interval_minutes")) {
    c.checkpoint.interval_s = k.at("interval_minutes").get<double>() * 60.0;
  }
  c.checkpoint.async = detail::get_or_default<bool>(k, "/reliability/checkpoint/async");
  if (c.checkpoint.async && c.checkpoint.format == CheckpointFormat::kRank0) {
    throw InputError(file, "/reliability/checkpoint/async",
                     "false with format \"rank0\" (async_save is torch.distributed.checkpoint's; "
                     "torch.save on rank 0 blocks)",
                     "true");
  }
  return c;
}

}  // namespace ddpsim::model
