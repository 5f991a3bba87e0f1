// `ddpsim collective`'s computation (collective_table.hpp).
#include "simulator/collectives/collective_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "model/collective_op.hpp"
#include "model/error.hpp"
#include "model/hardware/cluster.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/collectives/collective.hpp"
#include "simulator/collectives/fabric_fit.hpp"

namespace ddpsim::sim {

using nlohmann::json;

namespace {

void check_size(double bytes, const std::string& source, const char* key) {
  // Whole bytes from 1 to 2^50 (1 PiB): the sweep doubles from min to max, so this also bounds
  // it to 51 rows (inf or 1e-300 would never end or print rows of size 0).
  if (!(bytes >= 1) || !(bytes <= kMaxCollectiveTableBytes) || bytes != std::floor(bytes)) {
    throw InputError(source, std::string("/") + key,
                     "a whole number of bytes from 1 to 2^50 (1048576G)", fmt::format("{}", bytes));
  }
}

// An error the scenario reader raised in the scenario built from the request, at the request's
// own key where it has one.
InputError at_request_key(const InputError& e) {
  static const std::pair<const char*, const char*> keys[] = {
      {"/parallelism/algorithm", "/algorithm"},
      {"/cluster/gpus", "/gpus"},
      {"/hardware/collectives/nccl_version", "/nccl_version"}};
  for (const auto& [scenario_key, request_key] : keys) {
    if (e.pointer() == scenario_key)
      return InputError(e.file(), request_key, e.expected(), e.got());
  }
  return e;
}

}  // namespace

CollectiveTable collective_table(const CollectiveTableRequest& q) {
  check_size(q.min_bytes, q.source, "min_bytes");
  check_size(q.max_bytes, q.source, "max_bytes");
  if (q.min_bytes > q.max_bytes) {
    throw InputError(q.source, "/max_bytes", fmt::format("at least min_bytes ({})", q.min_bytes),
                     fmt::format("{}", q.max_bytes));
  }
  if (q.gpus < 1 || q.gpus > 10000000) {
    throw InputError(q.source, "/gpus", "an integer from 1 to 10000000", std::to_string(q.gpus));
  }
  const std::optional<model::CollectiveOp> op = model::parse_collective_op(q.op);
  if (!op) {
    throw InputError(q.source, "/op", "all_reduce, reduce_scatter, all_gather or broadcast",
                     "\"" + q.op + "\"");
  }
  const std::optional<model::CollectiveProtocol> proto = model::protocol_from_name(q.protocol);
  if (!proto) {
    throw InputError(q.source, "/protocol", "auto, ll, ll128 or simple", "\"" + q.protocol + "\"");
  }
  if (q.launch != "process" && q.launch != "threads") {
    throw InputError(q.source, "/launch", "process or threads", "\"" + q.launch + "\"");
  }
  if (q.gpus_per_process && (*q.gpus_per_process < 1 || *q.gpus_per_process > 1024)) {
    throw InputError(q.source, "/gpus_per_process", "an integer from 1 to 1024",
                     std::to_string(*q.gpus_per_process));
  }
  if (!q.hardware.is_object()) {
    throw InputError(q.source, "/hardware", "a preset name or a hardware section (an object)",
                     q.hardware.type_name());
  }
  json section = q.hardware;
  // How the collectives are launched and which NCCL runs them: keys of the hardware section.
  if (!q.nccl_version.empty()) section["collectives"]["nccl_version"] = q.nccl_version;
  if (q.cuda_graphs) section["collectives"]["cuda_graphs"] = true;
  const json doc = {{"model", {{"mlp", {{"widths", {1, 1}}}}}},
                    {"hardware", section},
                    {"cluster", {{"gpus", q.gpus}}},
                    {"training", {{"per_gpu_batch", 1}}},
                    {"parallelism", {{"algorithm", q.algorithm}}}};
  CollectiveTable t;
  model::Scenario s;
  try {
    s = model::parse_scenario(doc, q.source);
  } catch (const InputError& e) {
    throw at_request_key(e);
  }
  // A collectives profile of several nodes beside the preset: the NIC fitted to it.
  if (use_fitted_fabric(s.hardware)) t.notes = s.hardware.warnings;
  // nccl-tests -g N: one thread drives every GPU of its node (or gpus_per_process of them).
  if (q.gpus_per_process) {
    s.hardware.nccl_kernel.gpus_per_process = *q.gpus_per_process;
  } else if (q.launch == "threads") {
    s.hardware.nccl_kernel.gpus_per_process = std::min(q.gpus, s.hardware.gpus_per_node);
  }
  const auto bw = model::Topology(s.hardware, s.cluster.gpus).bandwidths();
  const model::NcclKernelCosts& k = s.hardware.nccl_kernel;
  t.op = q.op;
  t.gpus = q.gpus;
  t.nodes = bw.nodes;
  t.gpu = s.hardware.gpu.name;
  t.hardware = s.hardware.name;
  t.nccl_version = k.nccl_version;
  t.gpus_per_process = k.gpus_per_process;
  t.cuda_graphs = k.cuda_graphs;
  t.algorithm = q.algorithm;
  t.protocol = q.protocol;
  for (double b = q.min_bytes; b <= q.max_bytes; b *= 2) {
    const CollectiveCost cost =
        collective_cost(*op, bw, s.hardware, b, s.parallelism.algorithm, *proto);
    t.rows.push_back({b, b / 4, model::algorithm_name(cost.algorithm),
                      model::protocol_name(cost.protocol), cost.channels, cost.chunk_bytes,
                      cost.time_s, cost.algbw_gbytes_per_s, cost.busbw_gbytes_per_s});
  }
  return t;
}

json collective_table_json(const CollectiveTable& t) {
  json rows = json::array();
  for (const CollectiveTableRow& r : t.rows) {
    rows.push_back({{"size_bytes", static_cast<std::int64_t>(r.size_bytes)},
                    {"count", r.count},
                    {"type", "float"},
                    {"algorithm", r.algorithm},
                    {"protocol", r.protocol},
                    {"channels", r.channels},
                    {"chunk_bytes", r.chunk_bytes},
                    {"time_s", r.time_s},
                    {"algbw_gbytes_per_s", r.algbw_gbytes_per_s},
                    {"busbw_gbytes_per_s", r.busbw_gbytes_per_s}});
  }
  return {{"op", t.op},
          {"gpus", t.gpus},
          {"nodes", t.nodes},
          {"gpu", t.gpu},
          {"hardware", t.hardware},
          {"nccl_version", t.nccl_version},
          {"gpus_per_process", t.gpus_per_process},
          {"cuda_graphs", t.cuda_graphs},
          {"algorithm", t.algorithm},
          {"protocol", t.protocol},
          {"notes", t.notes},
          {"rows", std::move(rows)}};
}

}  // namespace ddpsim::sim
