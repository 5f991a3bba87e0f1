// A calibration profile read as a hardware description (profile_hardware.hpp).
#include "model/profile/profile_hardware.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "model/error.hpp"

namespace ddpsim::model {

using nlohmann::json;

json hardware_json_from_profile(const Profile& p, const std::string& file,
                                const std::string& pointer) {
  const std::string where = pointer + "/profile";
  if (p.gemms().empty()) {
    throw InputError(file, where,
                     "a profile with GEMM measurements (\"gemms\") to describe a device",
                     p.file() + " has none");
  }
  const json ctx = p.document().value("context", json::object());
  const bool gpu = p.backend() == "cuda";
  json hw;
  const std::string host = p.host().empty() ? "unknown host" : p.host();
  hw["name"] = "profile " + host;
  hw["source"] =
      "calibration profile " + p.file() + " (" + host + ", " +
      (ctx.contains("date") && ctx.at("date").is_string() ? ctx.at("date").get<std::string>()
                                                          : std::string("undated")) +
      "); inter_node is the measured intra-host link unless overridden";
  json g;
  double mem_bytes = 0;
  if (gpu) {
    const json gi = ctx.value("gpu", json::object());
    g["name"] = gi.value("name", std::string("cuda device"));
    mem_bytes = gi.value("memory_bytes", 0.0);
  } else {
    g["name"] = ctx.value("cpu_model", std::string("cpu")) + " (one rank)";
    mem_bytes = ctx.value("host_memory_bytes", 0.0) / std::max(1, p.ranks());
  }
  if (mem_bytes <= 0) {
    throw InputError(file, where, "a profile whose context gives the device memory",
                     p.file() + " has none");
  }
  g["memory_gib"] = mem_bytes / (1024.0 * 1024.0 * 1024.0);
  const auto bw =
      gpu ? p.memory_bandwidth_bytes_per_s("d2d_copy") : p.memory_bandwidth_bytes_per_s("triad");
  if (!bw) {
    throw InputError(
        file, where,
        std::string("a profile with a \"") + (gpu ? "d2d_copy" : "triad") + "\" memory bandwidth",
        p.file() + " has none");
  }
  g["memory_bandwidth_gbytes_per_s"] = *bw / 1e9;
  g["memory_efficiency"] = 1.0;
  json peak = json::object(), eff = json::object();
  for (DType d : {DType::kFp32, DType::kFp16, DType::kBf16}) {
    const double f = p.best_gemm_flops(d);
    if (f > 0) {
      // The best measured throughput is the peak the model scales from; efficiency 1 because
      // it was reached, not quoted.
      peak[dtype_name(d)] = f / 1e12;
      eff[dtype_name(d)] = 1.0;
    }
  }
  g["peak_tflops"] = peak;
  g["efficiency"] = eff;
  g["source"] = "best measured GEMM throughput per dtype in " + p.file();
  hw["gpu"] = g;
  hw["gpus_per_node"] = std::max(1, p.ranks());

  if (const CollectiveTable* ar = p.collective(CollectiveOp::kAllReduce); ar && ar->ranks >= 2) {
    // Ring all-reduce: t = 2(n-1) alpha + 2(n-1)/n S / B. The largest-size segment gives the
    // bus bandwidth, the smallest-size segment the per-step latency.
    const int n = ar->ranks;
    // A segment fitted to noisy latency-bound rows can come out with beta = 0; then the
    // largest segment with a per-byte cost gives the bandwidth, else the largest row itself
    // (its bus bandwidth, nccl-tests' definition).
    const FitSegment& small = ar->fit.segments.front();
    double busbw_gbytes = 0;
    for (auto it = ar->fit.segments.rbegin(); it != ar->fit.segments.rend(); ++it) {
      if (it->fit.b > 0) {
        busbw_gbytes = busbw_factor(CollectiveOp::kAllReduce, n) / it->fit.b / 1e9;
        break;
      }
    }
    if (!(busbw_gbytes > 0) && !ar->rows.empty() && ar->rows.back().time_s > 0) {
      const CollectiveRow& r = ar->rows.back();
      busbw_gbytes = busbw_factor(CollectiveOp::kAllReduce, n) * r.size_bytes / r.time_s / 1e9;
    }
    if (!(busbw_gbytes > 0) || !std::isfinite(busbw_gbytes)) {
      throw InputError(file, where, "an all_reduce fit or row with a per-byte cost > 0",
                       "no bandwidth in " + p.file());
    }
    const double step_us = small.fit.a / ring_steps(CollectiveOp::kAllReduce, n) * 1e6;
    const json& coll = p.document().at("collectives");
    const std::string lname = "measured " + coll.value("backend", std::string("collectives")) +
                              "/" + coll.value("transport", std::string("unknown transport"));
    hw["intra_node"] = {{"name", lname},
                        {"kind", "intra_node"},
                        {"bandwidth_gbytes_per_s", busbw_gbytes},
                        {"latency_us", step_us}};
    hw["inter_node"] = {{"name", lname},
                        {"kind", "nic"},
                        {"bandwidth_gbps", busbw_gbytes * 8},
                        {"latency_us", step_us}};
    const json tune = {{"ring_efficiency", 1.0}, {"tree_efficiency", 1.0}, {"latency_us", step_us}};
    // The measured line itself, not NCCL's model: the profile may time Gloo or any backend.
    hw["collectives"] = {{"model", "alpha_beta"}, {"intra_node", tune}, {"inter_node", tune}};
  }
  return hw;
}

}  // namespace ddpsim::model
