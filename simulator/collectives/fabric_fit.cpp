#include "simulator/collectives/fabric_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "model/hardware/cluster.hpp"
#include "model/hardware/nccl_version.hpp"
#include "model/profile/profile.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/collectives/collective.hpp"

namespace ddpsim::sim {

namespace {

struct LogPoint {
  model::CollectiveOp op;
  double bytes = 0;
  double time_s = 0;
};

// The log as it ran: its ranks over its nodes, the rows the fit compares.
struct LogRun {
  model::HardwareSpec hw;  // the scenario's system laid out as the log's nodes
  int ranks = 0, nodes = 0;
  // NCCL_ALGO / NCCL_PROTO as the log printed them ("set by environment to Ring"); else auto.
  model::CollectiveAlgorithm algorithm = model::CollectiveAlgorithm::kAuto;
  model::CollectiveProtocol protocol = model::CollectiveProtocol::kAuto;
  std::vector<LogPoint> points;
  std::string ops;
};

// NCCL_BUFFSIZE, NCCL_NVLS_CHUNKSIZE, NCCL_NVLSTREE_MAX_CHUNKSIZE as the log printed them
// ("set by environment to 8388608"; aws-ofi-nccl sets them on AWS instances); else the system's.
void env_sizes(const nlohmann::json& c, model::NcclKernelCosts& k) {
  if (!c.contains("nccl_env") || !c.at("nccl_env").is_object()) return;
  const nlohmann::json& env = c.at("nccl_env");
  const auto bytes = [&](const char* name, double& into) {
    if (!env.contains(name) || !env.at(name).is_string()) return;
    const std::string text = env.at(name).get<std::string>();
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() && *end == '\0' && v >= 4096 && v <= 1073741824.0) into = v;
  };
  bytes("NCCL_BUFFSIZE", k.buffsize_bytes);
  bytes("NCCL_NVLS_CHUNKSIZE", k.nvls_chunk_bytes);
  bytes("NCCL_NVLSTREE_MAX_CHUNKSIZE", k.nvls_tree_max_chunk_bytes);
}

// "Ring", "NVLSTree", "LL128" as NCCL's environment takes them. A list ("Tree,Ring") or an
// exclusion ("^NVLS") is not one forced choice: auto.
void forced_choice(const nlohmann::json& c, LogRun& run) {
  if (!c.contains("nccl_env") || !c.at("nccl_env").is_object()) return;
  const nlohmann::json& env = c.at("nccl_env");
  if (env.contains("NCCL_ALGO") && env.at("NCCL_ALGO").is_string()) {
    run.algorithm = model::algorithm_from_nccl_env(env.at("NCCL_ALGO").get<std::string>());
  }
  if (env.contains("NCCL_PROTO") && env.at("NCCL_PROTO").is_string()) {
    run.protocol = model::protocol_from_nccl_env(env.at("NCCL_PROTO").get<std::string>());
  }
}

int integer(const nlohmann::json& c, const char* key, int fallback) {
  return c.contains(key) && c.at(key).is_number_integer() ? c.at(key).get<int>() : fallback;
}

std::optional<LogRun> log_run(const model::HardwareSpec& hw) {
  if (!hw.profile || hw.collective_model != model::CollectiveModel::kNccl) return std::nullopt;
  const nlohmann::json& doc = hw.profile->document();
  if (!doc.contains("collectives") || !doc.at("collectives").is_object()) return std::nullopt;
  const nlohmann::json& c = doc.at("collectives");
  LogRun run;
  run.nodes = integer(c, "nodes", 1);
  run.ranks = hw.profile->ranks();
  if (run.nodes < 2 || run.ranks < run.nodes || run.ranks % run.nodes != 0) return std::nullopt;
  for (model::CollectiveOp op :
       {model::CollectiveOp::kAllReduce, model::CollectiveOp::kAllGather,
        model::CollectiveOp::kReduceScatter, model::CollectiveOp::kBroadcast}) {
    const model::CollectiveTable* t = hw.profile->collective(op);
    if (t == nullptr || t->ranks != run.ranks) continue;
    const bool any_out = std::any_of(t->rows.begin(), t->rows.end(),
                                     [](const model::CollectiveRow& r) { return !r.in_place; });
    const std::size_t before = run.points.size();
    for (const model::CollectiveRow& r : t->rows) {
      if (r.in_place == any_out || !(r.time_s > 0) || !(r.size_bytes > 0)) continue;
      run.points.push_back({op, r.size_bytes, r.time_s});
    }
    if (run.points.size() > before) {
      run.ops += (run.ops.empty() ? "" : ", ") + std::string(model::collective_op_name(op));
    }
  }
  if (run.points.size() < 4) return std::nullopt;
  forced_choice(c, run);
  // The system laid out as the log ran: its GPUs per node keep their share of the node's NICs;
  // its NCCL release (when ddpsim models it) and GPUs per launching thread.
  run.hw = hw;
  const int per_node = run.ranks / run.nodes;
  run.hw.nics_per_node = std::max(1, hw.nics_per_node * per_node / std::max(1, hw.gpus_per_node));
  run.hw.gpus_per_node = per_node;
  run.hw.gpus_per_host = 0;
  const std::string version = c.value("version", std::string());
  if (model::nccl_version_known(version)) run.hw.nccl_kernel.nccl_version = version;
  run.hw.nccl_kernel.gpus_per_process = std::max(1, integer(c, "gpus_per_process", 1));
  run.hw.nccl_kernel.cuda_graphs = false;
  env_sizes(c, run.hw.nccl_kernel);
  run.hw.profile = nullptr;
  return run;
}

// sum of squared ln(t_model / t_log) over the log's rows on the NIC (scale, latency).
double squared_log_error(const LogRun& run, double scale, double latency_s) {
  model::HardwareSpec h = run.hw;
  h.inter_tuning.ring_efficiency *= scale;
  h.inter_node.latency = latency_s;
  const model::CollectiveBandwidths bw = model::Topology(h, run.ranks).bandwidths();
  double sum = 0;
  for (const LogPoint& p : run.points) {
    const double t = collective_cost(p.op, bw, h, p.bytes, run.algorithm, run.protocol).time_s;
    const double e = std::log(t / p.time_s);
    sum += e * e;
  }
  return sum;
}

std::string cache_key(const model::HardwareSpec& hw) {
  return fmt::format(
      "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}",
      std::hash<std::string>{}(hw.profile->document().at("collectives").dump()), hw.profile->file(),
      hw.gpu.name, hw.gpu.compute_capability, hw.gpus_per_node, hw.nics_per_node,
      hw.intra_node.bandwidth, hw.intra_node.kind, hw.intra_node_switched, hw.pcie.bandwidth,
      hw.inter_node.bandwidth, hw.inter_node.latency, hw.inter_node.reported_latency,
      hw.oversubscription, hw.nodes_per_leaf, hw.intra_tuning.ring_efficiency,
      hw.inter_tuning.ring_efficiency, hw.intra_tuning.nvls_efficiency, hw.nccl_kernel.simple_slice,
      hw.nccl_kernel.ll128_iteration, hw.nccl_kernel.nvls_chunk, hw.nccl_kernel.host_launch,
      static_cast<int>(hw.cpu_vendor), hw.nccl_kernel.nccl_version, hw.nccl_kernel.buffsize_bytes,
      hw.nccl_kernel.nvls_chunk_bytes, hw.nccl_kernel.nvls_tree_max_chunk_bytes);
}

FabricFit fit(const LogRun& run, const model::HardwareSpec& hw, bool fit_rate, bool fit_latency) {
  // Coarse grid: s = 2^(k/4), k = -16..4 (1/16 .. 2); L = 0.5 us x 2000^(j/23), j = 0..23
  // (0.5 .. 1000 us); then 1/8 of a step, one step either side of the best point. What the log
  // cannot identify stays the preset's (k = 0: s = 1; the preset's latency for every j).
  constexpr double kScaleStep = 0.25;  // log2
  constexpr int kLatencySteps = 23;
  const double latency_step = std::log(2000.0) / kLatencySteps;
  const auto latency_at = [&](double j) {
    return fit_latency ? 0.5e-6 * std::exp(j * latency_step) : hw.inter_node.latency;
  };
  const auto error_at = [&](double k, double j) {
    return squared_log_error(run, std::exp2(k * kScaleStep), latency_at(j));
  };
  const double preset = squared_log_error(run, 1.0, hw.inter_node.latency);
  double best_k = 0, best_j = 0, best = preset;
  bool moved = false;
  for (int k = fit_rate ? -16 : 0; k <= (fit_rate ? 4 : 0); ++k) {
    for (int j = 0; j <= (fit_latency ? kLatencySteps : 0); ++j) {
      const double e = error_at(k, j);
      if (e < best) {
        best = e;
        best_k = k;
        best_j = j;
        moved = true;
      }
    }
  }
  FabricFit f;
  f.bandwidth_scale = 1.0;
  f.latency_s = hw.inter_node.latency;
  f.fitted_rate = fit_rate;
  f.fitted_latency = fit_latency;
  if (moved) {
    // Finer grid around the best point: 1/8 of a coarse step, one coarse step either side.
    const double k0 = best_k, j0 = best_j;
    for (int dk = fit_rate ? -8 : 0; dk <= (fit_rate ? 8 : 0); ++dk) {
      for (int dj = fit_latency ? -8 : 0; dj <= (fit_latency ? 8 : 0); ++dj) {
        const double k = k0 + dk / 8.0, j = j0 + dj / 8.0;
        const double e = error_at(k, j);
        if (e < best) {
          best = e;
          best_k = k;
          best_j = j;
        }
      }
    }
    f.bandwidth_scale = std::exp2(best_k * kScaleStep);
    f.latency_s = latency_at(best_j);
  }
  f.ring_efficiency = hw.inter_tuning.ring_efficiency * f.bandwidth_scale;
  const double n = static_cast<double>(run.points.size());
  f.preset_rms = std::sqrt(preset / n);
  f.fitted_rms = std::sqrt(best / n);
  f.points = static_cast<int>(run.points.size());
  f.ranks = run.ranks;
  f.nodes = run.nodes;
  f.ops = run.ops;
  return f;
}

}  // namespace

std::optional<FabricFit> fit_fabric(const model::HardwareSpec& hw) {
  const std::optional<LogRun> run = log_run(hw);
  if (!run) return std::nullopt;
  // A sweep or a plan builds a Predictor per system and point: the grid runs once per system.
  static std::mutex mutex;
  static std::map<std::string, FabricFit> cache;
  const std::string key = cache_key(hw);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  // The latency shows in small messages, the rate in large ones: at least 3 rows of each
  // (<= 1 MiB, >= 16 MiB), or that constant stays the preset's.
  const auto rows = [&](auto pred) {
    return std::count_if(run->points.begin(), run->points.end(), pred);
  };
  const bool fit_rate = rows([](const LogPoint& p) { return p.bytes >= 16.0 * (1 << 20); }) >= 3;
  const bool fit_latency = rows([](const LogPoint& p) { return p.bytes <= 1.0 * (1 << 20); }) >= 3;
  if (!fit_rate && !fit_latency) return std::nullopt;
  const FabricFit f = fit(*run, hw, fit_rate, fit_latency);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= 64) cache.clear();
  return cache.emplace(key, f).first->second;
}

void apply_fabric_fit(model::HardwareSpec& hw, const FabricFit& f) {
  hw.inter_tuning.ring_efficiency *= f.bandwidth_scale;
  hw.inter_node.latency = f.latency_s;
}

std::string describe(const FabricFit& f) {
  const char* kept = !f.fitted_rate ? " (too few sizes >= 16 MiB: the rate stays the preset's)"
                     : !f.fitted_latency
                         ? " (too few sizes <= 1 MiB: the latency stays the preset's)"
                         : "";
  return fmt::format(
      "collectives run on the inter-node fabric fitted to the profile's nccl-tests log ({} on {} "
      "ranks over {} nodes, {} sizes): NCCL reaches {:.3g} x the preset's share of the NIC rate "
      "(collectives.inter_node.ring_efficiency {:.3g}), NIC latency {:.3g} us; rms |ln(model / "
      "log)| {:.3f} with the preset's NIC, {:.3f} fitted{}",
      f.ops, f.ranks, f.nodes, f.points, f.bandwidth_scale, f.ring_efficiency, f.latency_s * 1e6,
      f.preset_rms, f.fitted_rms, kept);
}

std::optional<FabricFit> use_fitted_fabric(model::HardwareSpec& hw) {
  std::optional<FabricFit> f = fit_fabric(hw);
  if (f) {
    apply_fabric_fit(hw, *f);
    hw.warnings.push_back(describe(*f));
  }
  return f;
}

}  // namespace ddpsim::sim
