#include "calibrate/gpu_criteria.hpp"

#include <cstdio>

#include "model/error.hpp"

namespace ddpsim::calib {

using nlohmann::json;

namespace {

double number(const json& row, const char* key, const std::string& file, const std::string& ptr) {
  if (!row.contains(key) || !row.at(key).is_number()) {
    throw InputError(file, ptr + "/" + key, "a number");
  }
  return row.at(key).get<double>();
}

std::string gemm_text(const json& g) {
  std::string t = std::to_string(g.value("m", 0)) + "x" + std::to_string(g.value("n", 0)) + "x" +
                  std::to_string(g.value("k", 0)) + " " + (g.value("transa", false) ? "T" : "N") +
                  (g.value("transb", false) ? "T" : "N");
  if (g.value("count", 1) > 1) t += " x" + std::to_string(g.value("count", 1));
  std::string ops;
  for (const json& o : g.value("ops", json::array())) {
    ops += (ops.empty() ? "" : ", ") + o.get<std::string>();
  }
  if (!ops.empty()) t += " [" + ops + "]";
  return t;
}

bool is_bf16(const json& g) { return g.value("dtype", "") == "bf16"; }

}  // namespace

GpuCriteria gpu_criteria(const std::vector<std::pair<std::string, json>>& profiles, double gemm_min,
                         double copy_min) {
  GpuCriteria r;
  r.gemm_min = gemm_min;
  r.copy_min = copy_min;
  // The peaks: the largest bf16 square GEMM (one instance), the fastest device copy.
  long long peak_n = 0;
  const json* peak_row = nullptr;
  for (const auto& [file, doc] : profiles) {
    const json& gs = doc.value("gemms", json::array());
    for (std::size_t i = 0; i < gs.size(); ++i) {
      const json& g = gs[i];
      const long long m = g.value("m", 0LL), n = g.value("n", 0LL), k = g.value("k", 0LL);
      if (!is_bf16(g) || m != n || n != k || g.value("count", 1) != 1 || m <= peak_n) continue;
      peak_n = m;
      peak_row = &g;
      r.peak_gflops = number(g, "gflops", file, "/gemms/" + std::to_string(i));
      r.peak_what = gemm_text(g) + " (" + file + ")";
    }
    const json& bw = doc.value("memory_bandwidth", json::array());
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
  if (peak_row == nullptr) {
    throw InputError(names, "/gemms",
                     "a bf16 square GEMM (m = n = k, count 1) to take the peak from: "
                     "`ddpsim calibrate --backend cuda` without --scenario measures them");
  }
  if (r.copy_gbytes_per_s <= 0) {
    throw InputError(names, "/memory_bandwidth",
                     "a d2d_copy row (`ddpsim calibrate --backend cuda` measures one)");
  }

  // The GEMMs judged: the scenario's bf16 rows; without any, the grid's from 4096 up.
  bool any_scenario = false;
  for (const auto& [file, doc] : profiles) {
    for (const json& g : doc.value("gemms", json::array())) {
      if (is_bf16(g) && !g.value("ops", json::array()).empty()) any_scenario = true;
    }
  }
  for (const auto& [file, doc] : profiles) {
    const json& gs = doc.value("gemms", json::array());
    for (std::size_t i = 0; i < gs.size(); ++i) {
      const json& g = gs[i];
      if (!is_bf16(g) || &g == peak_row) continue;
      const bool scenario_row = !g.value("ops", json::array()).empty();
      if (any_scenario
              ? !scenario_row
              : std::min({g.value("m", 0LL), g.value("n", 0LL), g.value("k", 0LL)}) < 4096) {
        continue;
      }
      GpuCriteriaRow row;
      row.file = file;
      row.what = gemm_text(g);
      row.value = number(g, "gflops", file, "/gemms/" + std::to_string(i));
      row.fraction = row.value / r.peak_gflops;
      row.ok = row.fraction >= gemm_min;
      if (!row.ok) ++r.failures;
      r.gemms.push_back(row);
    }
    const json& ks = doc.value("kernels", json::array());
    for (std::size_t i = 0; i < ks.size(); ++i) {
      if (ks[i].value("device", "").rfind("cuda", 0) != 0) continue;
      GpuCriteriaRow row;
      row.file = file;
      row.what = ks[i].value("name", "?");
      row.value = number(ks[i], "gbytes_per_s", file, "/kernels/" + std::to_string(i));
      row.fraction = row.value / r.copy_gbytes_per_s;
      row.ok = row.fraction >= copy_min;
      if (!row.ok) ++r.failures;
      r.kernels.push_back(row);
    }
  }
  return r;
}

std::string format_gpu_criteria(const GpuCriteria& r) {
  char buf[512];
  std::string s;
  std::snprintf(buf, sizeof buf,
                "bf16 GEMM peak: %.1f TFLOP/s, %s; goal: every judged GEMM >= %.0f%% of it\n\n",
                r.peak_gflops / 1e3, r.peak_what.c_str(), r.gemm_min * 100);
  s += buf;
  s += "| GEMM | profile | TFLOP/s | of peak | verdict |\n|---|---|---:|---:|---|\n";
  int gemm_fail = 0;
  for (const GpuCriteriaRow& g : r.gemms) {
    std::snprintf(buf, sizeof buf, "| %s | %s | %.1f | %.1f%% | %s |\n", g.what.c_str(),
                  g.file.c_str(), g.value / 1e3, g.fraction * 100, g.ok ? "ok" : "FAIL");
    s += buf;
    if (!g.ok) ++gemm_fail;
  }
  std::snprintf(buf, sizeof buf,
                "\ndevice copy: %.1f GB/s, %s; goal: every CUDA kernel >= %.0f%% of it\n\n",
                r.copy_gbytes_per_s, r.copy_what.c_str(), r.copy_min * 100);
  s += buf;
  s += "| kernel | profile | GB/s | of copy | verdict |\n|---|---|---:|---:|---|\n";
  int kernel_fail = 0;
  for (const GpuCriteriaRow& k : r.kernels) {
    std::snprintf(buf, sizeof buf, "| %s | %s | %.1f | %.1f%% | %s |\n", k.what.c_str(),
                  k.file.c_str(), k.value, k.fraction * 100, k.ok ? "ok" : "FAIL");
    s += buf;
    if (!k.ok) ++kernel_fail;
  }
  std::snprintf(buf, sizeof buf,
                "\nGEMMs: %zu judged, %d below %.0f%%; kernels: %zu judged, %d below %.0f%%: %s\n",
                r.gemms.size(), gemm_fail, r.gemm_min * 100, r.kernels.size(), kernel_fail,
                r.copy_min * 100,
                r.failures == 0 && !r.gemms.empty() && !r.kernels.empty() ? "PASS" : "FAIL");
  s += buf;
  return s;
}

}  // namespace ddpsim::calib
