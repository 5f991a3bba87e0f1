#include "calibrate/gpu_criteria.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "model/error.hpp"

namespace ddpsim::calib {

using nlohmann::json;

namespace {

const json& array_at(const json& doc, const char* key) {
  static const json empty = json::array();
  return doc.contains(key) && doc.at(key).is_array() ? doc.at(key) : empty;
}

const json& ops_of(const json& g) { return array_at(g, "ops"); }

double number(const json& row, const char* key, const std::string& file, const std::string& ptr) {
  if (!row.contains(key) || !row.at(key).is_number()) {
    throw InputError(file, ptr + "/" + key, "a number");
  }
  return row.at(key).get<double>();
}

std::string gemm_text(const json& g) {
  std::string t = std::to_string(g.value("m", 0LL)) + "x" + std::to_string(g.value("n", 0LL)) +
                  "x" + std::to_string(g.value("k", 0LL)) + " " +
                  (g.value("transa", false) ? "T" : "N") + (g.value("transb", false) ? "T" : "N");
  if (g.value("count", 1LL) > 1) t += " x" + std::to_string(g.value("count", 1LL));
  // The first user and how many more (a 32-layer model lists 128 users of one shape).
  const json& ops = ops_of(g);
  if (!ops.empty()) {
    t += " [" + ops.front().get<std::string>();
    if (ops.size() > 1) t += " +" + std::to_string(ops.size() - 1) + " more";
    t += "]";
  }
  return t;
}

bool is_bf16(const json& g) { return g.value("dtype", "") == "bf16"; }

// Bytes a GEMM must move at least: both operands read once and C written once (cuBLAS writes C
// in the operand dtype here, calibrate/gpu_kernels.cu).
double gemm_bytes(const json& g) {
  const double m = g.value("m", 0.0), n = g.value("n", 0.0), k = g.value("k", 0.0);
  const double eb = g.value("dtype", "") == "fp32" ? 4 : 2;
  return g.value("count", 1.0) * (m * k + k * n + m * n) * eb;
}

}  // namespace

GpuCriteria gpu_criteria(const std::vector<std::pair<std::string, json>>& profiles, double gemm_min,
                         double copy_min) {
  GpuCriteria r;
  r.gemm_min = gemm_min;
  r.copy_min = copy_min;
  // The peaks: the largest bf16 square GEMM (one instance) of a grid (rows without `ops`: a
  // scenario's own GEMMs are what is judged, never the reference), the fastest device copy.
  long long peak_n = 0;
  std::size_t peak_profile = 0, peak_index = 0;
  for (std::size_t p = 0; p < profiles.size(); ++p) {
    const auto& [file, doc] = profiles[p];
    const json& gs = array_at(doc, "gemms");
    for (std::size_t i = 0; i < gs.size(); ++i) {
      const json& g = gs[i];
      const long long m = g.value("m", 0LL), n = g.value("n", 0LL), k = g.value("k", 0LL);
      if (!is_bf16(g) || !ops_of(g).empty() || m != n || n != k || g.value("count", 1LL) != 1 ||
          m <= peak_n) {
        continue;
      }
      peak_n = m;
      peak_profile = p;
      peak_index = i;
      r.peak_gflops = number(g, "gflops", file, "/gemms/" + std::to_string(i));
      r.peak_what = gemm_text(g) + " (" + file + ")";
    }
    const json& bw = array_at(doc, "memory_bandwidth");
    for (std::size_t i = 0; i < bw.size(); ++i) {
      if (bw[i].value("kernel", "") != "d2d_copy") continue;
      const double v =
          number(bw[i], "gbytes_per_s", file, "/memory_bandwidth/" + std::to_string(i));
      if (v > r.copy_gbytes_per_s) {
        r.copy_gbytes_per_s = v;
        r.copy_what =
            "d2d_copy of " + std::to_string(bw[i].value("bytes", 0LL)) + " B (" + file + ")";
      }
    }
  }
  const std::string names = profiles.empty() ? "(no profile)" : profiles.front().first;
  if (peak_n == 0) {
    throw InputError(names, "/gemms",
                     "a bf16 square GEMM of the grid (m = n = k, count 1, no ops) to take the "
                     "peak from: `ddpsim calibrate --backend cuda` without --scenario times them");
  }
  if (r.copy_gbytes_per_s <= 0) {
    throw InputError(names, "/memory_bandwidth",
                     "a d2d_copy row (`ddpsim calibrate --backend cuda` measures one)");
  }
  // Above this many FLOP per byte a GEMM can reach the peak; below, the copy bandwidth bounds it.
  r.balance_flop_per_byte = r.peak_gflops / r.copy_gbytes_per_s;

  // The GEMMs judged: the scenario's bf16 rows; without any, the grid's from 4096 up.
  bool any_scenario = false;
  for (const auto& [file, doc] : profiles) {
    for (const json& g : array_at(doc, "gemms")) {
      if (is_bf16(g) && !ops_of(g).empty()) any_scenario = true;
    }
  }
  for (std::size_t p = 0; p < profiles.size(); ++p) {
    const auto& [file, doc] = profiles[p];
    const json& gs = array_at(doc, "gemms");
    for (std::size_t i = 0; i < gs.size(); ++i) {
      const json& g = gs[i];
      if (!is_bf16(g) || (p == peak_profile && i == peak_index)) continue;
      const bool scenario_row = !ops_of(g).empty();
      const long long smallest =
          std::min({g.value("m", 0LL), g.value("n", 0LL), g.value("k", 0LL)});
      if (any_scenario ? !scenario_row : smallest < 4096) continue;
      GpuCriteriaRow row;
      row.file = file;
      row.what = gemm_text(g);
      row.value = number(g, "gflops", file, "/gemms/" + std::to_string(i));
      row.fraction = row.value / r.peak_gflops;
      // Roofline: min(peak, FLOP/byte x copy bandwidth).
      row.flop_per_byte = 2.0 * g.value("m", 0.0) * g.value("n", 0.0) * g.value("k", 0.0) *
                          g.value("count", 1.0) / gemm_bytes(g);
      row.bound_gflops = std::min(r.peak_gflops, row.flop_per_byte * r.copy_gbytes_per_s);
      row.of_bound = row.value / row.bound_gflops;
      row.ok = row.of_bound >= gemm_min;
      if (!row.ok) ++r.failures;
      r.gemms.push_back(row);
    }
    const json& ks = array_at(doc, "kernels");
    for (std::size_t i = 0; i < ks.size(); ++i) {
      if (ks[i].value("device", "").rfind("cuda", 0) != 0) continue;
      GpuCriteriaRow row;
      row.file = file;
      row.what = ks[i].value("name", "?");
      row.value = number(ks[i], "gbytes_per_s", file, "/kernels/" + std::to_string(i));
      row.fraction = row.value / r.copy_gbytes_per_s;
      row.of_bound = row.fraction;
      row.ok = row.fraction >= copy_min;
      if (!row.ok) ++r.failures;
      r.kernels.push_back(row);
    }
  }
  return r;
}

std::string format_gpu_criteria(const GpuCriteria& r) {
  std::string s = fmt::format(
      "bf16 GEMM peak: {:.1f} TFLOP/s, {}; device copy: {:.1f} GB/s, {}; balance point {:.0f} "
      "FLOP/B\n\nGEMMs: goal >= {:.0f}% of the roofline min(peak, FLOP/B x copy bandwidth), the "
      "peak itself above the balance point\n\n",
      r.peak_gflops / 1e3, r.peak_what, r.copy_gbytes_per_s, r.copy_what, r.balance_flop_per_byte,
      r.gemm_min * 100);
  s += "| GEMM | profile | TFLOP/s | of peak | FLOP/B | roofline TFLOP/s | of roofline | verdict "
       "|\n|---|---|---:|---:|---:|---:|---:|---|\n";
  int gemm_fail = 0;
  for (const GpuCriteriaRow& g : r.gemms) {
    s += fmt::format("| {} | {} | {:.1f} | {:.1f}% | {:.0f} | {:.1f} | {:.1f}% | {} |\n", g.what,
                     g.file, g.value / 1e3, g.fraction * 100, g.flop_per_byte, g.bound_gflops / 1e3,
                     g.of_bound * 100, g.ok ? "ok" : "FAIL");
    if (!g.ok) ++gemm_fail;
  }
  s += fmt::format("\nKernels: goal >= {:.0f}% of the device copy\n\n", r.copy_min * 100);
  s += "| kernel | profile | GB/s | of copy | verdict |\n|---|---|---:|---:|---|\n";
  int kernel_fail = 0;
  for (const GpuCriteriaRow& k : r.kernels) {
    s += fmt::format("| {} | {} | {:.1f} | {:.1f}% | {} |\n", k.what, k.file, k.value,
                     k.fraction * 100, k.ok ? "ok" : "FAIL");
    if (!k.ok) ++kernel_fail;
  }
  s += fmt::format(
      "\nGEMMs: {} judged, {} below {:.0f}%; kernels: {} judged, {} below {:.0f}%: {}\n",
      r.gemms.size(), gemm_fail, r.gemm_min * 100, r.kernels.size(), kernel_fail, r.copy_min * 100,
      passed(r) ? "PASS" : "FAIL");
  return s;
}

bool passed(const GpuCriteria& r) {
  return r.failures == 0 && !r.gemms.empty() && !r.kernels.empty();
}

}  // namespace ddpsim::calib
