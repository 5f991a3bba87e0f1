// collective_verb.cpp: `ddpsim collective` (collective_verb.hpp).
#include "simulator/cli/collective_verb.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "model/units.hpp"
#include "simulator/collectives/collective.hpp"
#include "simulator/collectives/fabric_fit.hpp"

namespace ddpsim::cli {

using nlohmann::json;

namespace {

constexpr double kMaxCollectiveBytes = 1125899906842624.0;  // 2^50

double parse_size(const std::string& text, const char* option) {
  // 8, 64K, 32M, 8G (powers of 1024, as nccl-tests' -b/-e accept).
  if (text.empty()) throw Error(std::string(option) + ": expected a positive size, got nothing");
  double mult = 1;
  std::string digits = text;
  switch (text.back()) {
    case 'K':
    case 'k':
      mult = kKiB;
      digits.pop_back();
      break;
    case 'M':
    case 'm':
      mult = kMiB;
      digits.pop_back();
      break;
    case 'G':
    case 'g':
      mult = kGiB;
      digits.pop_back();
      break;
    default:
      break;
  }
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(digits, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  // Whole bytes from 1 to 2^50 (1 PiB, ~7,000x an H200's memory): the sweep doubles from min to
  // max, so this also bounds it to 51 rows (inf, 1e308G or 1e-300 would never end or print
  // rows of size 0).
  const double bytes = v * mult;
  if (used != digits.size() || !(bytes >= 1) || !(bytes <= kMaxCollectiveBytes) ||
      bytes != std::floor(bytes)) {
    throw Error(std::string(option) +
                ": expected a whole number of bytes from 1 to 2^50 (1048576G), like 8, 64K, 32M or "
                "8G, got \"" +
                text + "\"");
  }
  return bytes;
}

}  // namespace

int run_collective(const CollectiveOptions& o) {
  const double lo = parse_size(o.min_b, "--min-bytes");
  const double hi = parse_size(o.max_b, "--max-bytes");
  if (lo > hi) {
    throw Error("--min-bytes (" + o.min_b + ") must not exceed --max-bytes (" + o.max_b + ")");
  }
  json section;
  if (!o.hw.empty() && o.hw.front() == '{') {
    try {
      section = json::parse(o.hw);
    } catch (const json::exception&) {
      throw Error(
          "--hardware: expected a preset name or a JSON hardware section, got invalid JSON");
    }
  } else {
    section = {{"preset", o.hw}};
  }
  if (!section.is_object()) throw Error("--hardware: expected a preset name or a JSON object");
  // How the collectives are launched and which NCCL runs them: keys of the hardware section.
  if (!o.nccl_version.empty()) section["collectives"]["nccl_version"] = o.nccl_version;
  if (o.graphs) section["collectives"]["cuda_graphs"] = true;
  json doc = {{"model", {{"mlp", {{"widths", {1, 1}}}}}},
              {"hardware", section},
              {"cluster", {{"gpus", o.gpus}}},
              {"training", {{"per_gpu_batch", 1}}},
              {"parallelism", {{"algorithm", o.algo}}}};
  model::Scenario s = model::parse_scenario(doc, "<command line>");
  // A collectives profile of several nodes beside the preset: the NIC fitted to it.
  const std::optional<sim::FabricFit> fitted = sim::use_fitted_fabric(s.hardware);
  // nccl-tests -g N: one thread drives every GPU of its node (or --gpus-per-process of them).
  if (o.gpus_per_process) {
    s.hardware.nccl_kernel.gpus_per_process = *o.gpus_per_process;
  } else if (o.launch == "threads") {
    s.hardware.nccl_kernel.gpus_per_process = std::min(o.gpus, s.hardware.gpus_per_node);
  }
  const auto bw = model::Topology(s.hardware, s.cluster.gpus).bandwidths();
  const model::CollectiveOp c = *model::parse_collective_op(o.op);  // CLI11 checked it
  // --proto is one of protocol_name's words (CLI11 checked it).
  const model::CollectiveProtocol proto =
      model::protocol_from_name(o.proto).value_or(model::CollectiveProtocol::kAuto);
  // --redop is sum, avg or max (CLI11 checked it); the table's type is fp32.
  const model::Reduction redop = o.redop == "avg"   ? model::Reduction::kAverage
                                 : o.redop == "max" ? model::Reduction::kMaxFloat32
                                                    : model::Reduction::kSum;
  const model::NcclKernelCosts& k = s.hardware.nccl_kernel;
  std::printf("# %s on %d x %s (%s), %d node(s), model prediction\n", o.op.c_str(), o.gpus,
              one_line(s.hardware.gpu.name).c_str(), one_line(s.hardware.name).c_str(), bw.nodes);
  std::printf(
      "# NCCL %s, %d GPU(s) per launching thread%s, algorithm %s, protocol %s, reduction %s\n",
      one_line(k.nccl_version).c_str(), k.gpus_per_process, k.cuda_graphs ? ", CUDA graphs" : "",
      o.algo.c_str(), o.proto.c_str(), o.redop.c_str());
  if (fitted) std::printf("# %s\n", one_line(sim::describe(*fitted)).c_str());
  std::printf("# %12s %12s %8s %13s %8s %8s %10s %10s %8s %8s\n", "size(B)", "count", "type",
              "algorithm", "protocol", "channels", "chunk(B)", "time(us)", "algbw", "busbw");
  for (double b = lo; b <= hi; b *= 2) {
    const auto cost =
        sim::collective_cost(c, bw, s.hardware, b, s.parallelism.algorithm, proto, redop);
    std::printf("  %12.0f %12.0f %8s %13s %8s %8d %10.0f %10.2f %8.2f %8.2f\n", b, b / 4, "float",
                model::algorithm_name(cost.algorithm), model::protocol_name(cost.protocol),
                cost.channels, cost.chunk_bytes, cost.time_s * 1e6, cost.algbw_gbytes_per_s,
                cost.busbw_gbytes_per_s);
  }
  return 0;
}

}  // namespace ddpsim::cli
