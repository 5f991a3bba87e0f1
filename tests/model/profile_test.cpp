// profile_test.cpp: the calibration profile (model/profile/profile.hpp): the piecewise alpha-beta
// fit, strict parsing, the GEMM and collective lookups (detail/profile_lookup.hpp) and reading a
// profile as hardware (model/profile/profile_hardware.hpp).
#include "model/profile/profile.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "model/error.hpp"
#include "model/profile/alpha_beta_fit.hpp"
#include "model/profile/machine_fingerprint.hpp"
#include "model/profile/profile_hardware.hpp"
#include "model/scenario/scenario.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;

// ---- piecewise fit ---------------------------------------------------------------------------

// A synthetic sweep with a known protocol switch: sizes 8 B .. 64 MiB in powers of two,
//   S <= 64 KiB: t = 5 us + S / 2 GB/s;   S > 64 KiB: t = 40 us + S / 10 GB/s.
// Both pieces are exact lines, so the least-squares split must put the breakpoint between
// 64 KiB and 128 KiB (any other split leaves a residual) and recover each line exactly; the BIC
// must prefer two segments over one (one line leaves a large residual) and over three (a third
// segment cannot lower a zero residual and costs three parameters).
TEST(PiecewiseFit, RecoversAKnownBreakpointExactly) {
  std::vector<double> s, t;
  for (int p = 3; p <= 26; ++p) {
    const double b = std::exp2(p);
    s.push_back(b);
    t.push_back(b <= 65536 ? 5e-6 + b / 2e9 : 40e-6 + b / 10e9);
  }
  const PiecewiseFit f = fit_piecewise_alpha_beta(s, t);
  ASSERT_EQ(f.segments.size(), 2u);
  EXPECT_EQ(f.segments[0].max_bytes, 65536.0);
  EXPECT_EQ(f.segments[1].min_bytes, 131072.0);
  EXPECT_EQ(f.segments[0].point_count, 14u);  // 2^3 .. 2^16
  EXPECT_NEAR(f.segments[0].fit.a, 5e-6, 1e-15);
  EXPECT_NEAR(f.segments[0].fit.b, 1 / 2e9, 1e-21);
  EXPECT_NEAR(f.segments[1].fit.a, 40e-6, 1e-14);
  EXPECT_NEAR(f.segments[1].fit.b, 1 / 10e9, 1e-21);
  // Breakpoint: geometric mean of 64 KiB and 128 KiB.
  ASSERT_EQ(f.breakpoints_bytes.size(), 1u);
  EXPECT_DOUBLE_EQ(f.breakpoints_bytes[0], std::sqrt(65536.0 * 131072.0));
  EXPECT_NEAR(f.r_squared, 1.0, 1e-12);
  for (double r : f.relative_residuals) EXPECT_NEAR(r, 0, 1e-9);
  EXPECT_EQ(f.segment_for(65536), 0u);
  EXPECT_EQ(f.segment_for(131072), 1u);
  EXPECT_NEAR(f.predict(1 << 20), 40e-6 + 1048576 / 10e9, 1e-15);
}

// Issue 20: the exact search fitted a line to every pair of boundaries and kept each fit with
// its residuals: a 2,000-size nccl-tests log took 98 s and 21 GB. Past kMaxPiecewiseCuts (126)
// boundaries an evenly spaced subset is searched. 3,000 sizes k x 1 KiB with the switch of
// RecoversAKnownBreakpointExactly after k = 1,500: the candidates are ~23.6 sizes apart, so a
// breakpoint lands within 24 sizes of the switch, and the segments away from it are exact lines
// (at most one segment straddles the switch: the median point's residual is zero).
TEST(PiecewiseFit, ThousandsOfSizesSearchABoundedSetOfBreakpoints) {
  std::vector<double> s, t;
  for (int k = 1; k <= 3000; ++k) {
    const double b = 1024.0 * k;
    s.push_back(b);
    t.push_back(k <= 1500 ? 5e-6 + b / 2e9 : 40e-6 + b / 10e9);
  }
  const PiecewiseFit f = fit_piecewise_alpha_beta(s, t);
  ASSERT_GE(f.segments.size(), 2u);
  bool near_switch = false;
  for (double bp : f.breakpoints_bytes) {
    near_switch |= bp > 1024.0 * (1500 - 24) && bp < 1024.0 * (1501 + 24);
  }
  EXPECT_TRUE(near_switch);
  std::vector<double> rel;
  for (double r : f.relative_residuals) rel.push_back(std::fabs(r));
  std::nth_element(rel.begin(), rel.begin() + 1500, rel.end());
  EXPECT_LT(rel[1500], 1e-9);
}

TEST(PiecewiseFit, OneLineStaysOneSegment) {
  std::vector<double> s, t;
  for (int p = 10; p <= 30; ++p) {
    s.push_back(std::exp2(p));
    t.push_back(20e-6 + std::exp2(p) / 100e9);
  }
  const PiecewiseFit f = fit_piecewise_alpha_beta(s, t);
  ASSERT_EQ(f.segments.size(), 1u);
  EXPECT_TRUE(f.breakpoints_bytes.empty());
  EXPECT_NEAR(f.segments[0].fit.a, 20e-6, 1e-15);
}

TEST(PiecewiseFit, ResidualsFollowInputOrder) {
  // Unsorted input: residuals belong to the points as given.
  const std::vector<double> s = {4096, 8, 1024, 64, 512, 32};
  std::vector<double> t;
  for (double b : s) t.push_back(1e-6 + b * 1e-9);
  t[0] *= 1.1;  // the 4096 B point is 10% slow
  const PiecewiseFit f = fit_piecewise_alpha_beta(s, t, {{}, 1, 3});
  ASSERT_EQ(f.residuals.size(), s.size());
  EXPECT_LT(f.relative_residuals[0], 0);  // the fit is below the slow point
}

// ---- parsing ---------------------------------------------------------------------------------

json minimal() {
  return {{"format", "ddpsim-profile"}, {"format_version", 1}, {"context", {{"host", "h"}}}};
}

json gemm_row(std::int64_t batch, double time_s) {
  // nn.Linear 512 -> 1024 forward at `batch` rows: M = batch, N = 1024, K = 512, B transposed.
  return {{"ops", {"fc0.fwd"}},
          {"m", batch},
          {"n", 1024},
          {"k", 512},
          {"transa", false},
          {"transb", true},
          {"dtype", "fp32"},
          {"batch", batch},
          {"batch_dim", "m"},
          {"time_s", time_s},
          {"time_min_s", time_s * 0.9},
          {"time_max_s", time_s * 1.2}};
}

json table(std::vector<std::pair<double, double>> size_us) {
  json rows = json::array();
  for (auto [s, us] : size_us) {
    rows.push_back({{"size_bytes", static_cast<std::int64_t>(s)},
                    {"in_place", false},
                    {"time_us", us},
                    {"time_us_min", us * 0.95},
                    {"time_us_max", us * 1.1}});
  }
  return {{"dtype", "float32"}, {"rows", rows}};
}

std::string profile_error(const json& doc) {
  try {
    (void)Profile::from_json(doc, "p.json");
  } catch (const InputError& e) {
    return e.pointer() + " | " + e.what();
  }
  return "no error";
}

TEST(Profile, RejectsUnknownKeysAndBadValuesNamingThePointer) {
  json d = minimal();
  d["gemms"] = json::array({gemm_row(16, 1e-3)});
  d["gemms"][0]["tranpsa"] = true;
  EXPECT_NE(profile_error(d).find("/gemms/0/tranpsa"), std::string::npos) << profile_error(d);

  d = minimal();
  d["gemms"] = json::array({gemm_row(16, 1e-3)});
  d["gemms"][0]["dtype"] = "fp33";
  EXPECT_NE(profile_error(d).find("/gemms/0/dtype"), std::string::npos);

  d = minimal();
  d.erase("format");
  EXPECT_NE(profile_error(d).find("/format"), std::string::npos);

  d = minimal();
  d["collectives"] = {{"ranks", 2}, {"ops", {{"allreduce", table({{8, 10}, {16, 11}})}}}};
  EXPECT_NE(profile_error(d).find("/collectives/ops/allreduce"), std::string::npos);

  d = minimal();
  d["collectives"] = {{"ranks", 2}, {"ops", {{"all_reduce", table({{8, 10}})}}}};
  EXPECT_NE(profile_error(d).find("/collectives/ops/all_reduce/rows"), std::string::npos);

  // A collective row checked and found wrong is refused, naming the row.
  d = minimal();
  d["collectives"] = {{"ranks", 2}, {"ops", {{"all_reduce", table({{8, 10}, {16, 11}})}}}};
  d["collectives"]["ops"]["all_reduce"]["rows"][1]["wrong"] = 4;
  EXPECT_NE(profile_error(d).find("/collectives/ops/all_reduce/rows/1/wrong"), std::string::npos)
      << profile_error(d);
  d["collectives"]["ops"]["all_reduce"]["rows"][1]["wrong"] = 0;
  EXPECT_EQ(profile_error(d), "no error");

  // A batch that does not divide the batch extent cannot be a per-sample shape times a batch.
  d = minimal();
  d["gemms"] = json::array({gemm_row(16, 1e-3)});
  d["gemms"][0]["batch"] = 3;
  EXPECT_NE(profile_error(d).find("/gemms/0/batch"), std::string::npos);

  EXPECT_EQ(profile_error(minimal()), "no error");
}

// Issue 20: integers read into int stop at INT32_MAX instead of wrapping (a `ranks` of 2^32 + 2
// was read as 2, 2^32 as 0); GEMM extents too (cuBLAS's m, n, k are int), and byte counts at
// 2^53 (exact in a double).
TEST(Profile, IntegersPastTheirTypeAreRefusedNotWrapped) {
  json d = minimal();
  d["ranks"] = (std::int64_t{1} << 32) + 2;
  EXPECT_EQ(profile_error(d),
            "/ranks | p.json: /ranks: expected an integer >= 1 and <= 2147483647, got 4294967298");
  d["ranks"] = 2147483647;
  EXPECT_EQ(profile_error(d), "no error");

  d = minimal();
  d["gemms"] = json::array({gemm_row(16, 1e-3)});
  d["gemms"][0]["m"] = std::int64_t{1} << 62;
  d["gemms"][0]["n"] = std::int64_t{1} << 62;
  EXPECT_NE(profile_error(d).find("/gemms/0/m | "), std::string::npos) << profile_error(d);

  d = minimal();
  d["collectives"] = {{"ranks", (std::int64_t{1} << 32) + 2},
                      {"ops", {{"all_reduce", table({{8, 10}, {16, 11}})}}}};
  EXPECT_NE(profile_error(d).find("/collectives/ranks | "), std::string::npos) << profile_error(d);

  d = minimal();
  d["collectives"] = {{"ranks", 2}, {"ops", {{"all_reduce", table({{8, 10}, {16, 11}})}}}};
  d["collectives"]["ops"]["all_reduce"]["rows"][1]["size_bytes"] = (std::int64_t{1} << 53) + 2;
  EXPECT_NE(profile_error(d).find("/collectives/ops/all_reduce/rows/1/size_bytes | "),
            std::string::npos)
      << profile_error(d);
}

json interference_block(double alone_s, double concurrent_s) {
  return {{"factor", std::max(1.0, concurrent_s / alone_s)},
          {"ratio", concurrent_s / alone_s},
          {"op", "all_reduce"},
          {"collective_bytes", 16 << 20},
          {"ranks", 2},
          {"gemm", {{"m", 256}, {"n", 256}, {"k", 256}, {"dtype", "fp32"}}},
          {"alone", {{"repeats", 9}, {"time_s", alone_s}, {"time_p10_s", alone_s * 0.95}}},
          {"concurrent", {{"repeats", 9}, {"time_s", concurrent_s}}}};
}

TEST(Profile, InterferenceFactorIsReadStrictly) {
  // Absent: nullopt (the simulator keeps simulation.interference's own default).
  EXPECT_FALSE(Profile::from_json(minimal(), "p.json").interference_factor().has_value());

  // 1.2 ms alone, 1.5 ms while an all-reduce runs: factor 1.5 / 1.2 = 1.25.
  json d = minimal();
  d["interference"] = interference_block(1.2e-3, 1.5e-3);
  const auto f = Profile::from_json(d, "p.json").interference_factor();
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(*f, 1.25, 1e-12);

  // A measured speed-up (ratio 0.98, noise) is stored as factor 1.
  d["interference"] = interference_block(1.0e-3, 0.98e-3);
  EXPECT_DOUBLE_EQ(*Profile::from_json(d, "p.json").interference_factor(), 1.0);

  // Bad values name the pointer.
  d["interference"] = interference_block(1.2e-3, 1.5e-3);
  d["interference"]["factor"] = 0.9;  // a speed-up is not interference
  EXPECT_NE(profile_error(d).find("/interference/factor"), std::string::npos) << profile_error(d);
  d["interference"]["factor"] = "1.2";
  EXPECT_NE(profile_error(d).find("/interference/factor"), std::string::npos) << profile_error(d);
  d["interference"] = interference_block(1.2e-3, 1.5e-3);
  d["interference"]["ratio"] = 1.5;  // disagrees with 1.5 / 1.2
  EXPECT_NE(profile_error(d).find("/interference/ratio"), std::string::npos) << profile_error(d);
  // With means (profiles from 2026-12-03 on) the ratio is the ratio of the means: medians 1.2
  // and 1.25 ms but means 1.3 and 1.95 ms (a heavy tail while the collective runs) give
  // ratio 1.95 / 1.3 = 1.5, and the median ratio 1.25 / 1.2 is refused.
  d["interference"] = interference_block(1.2e-3, 1.25e-3);
  d["interference"]["alone"]["time_mean_s"] = 1.3e-3;
  d["interference"]["concurrent"]["time_mean_s"] = 1.95e-3;
  EXPECT_NE(profile_error(d).find("/interference/ratio"), std::string::npos) << profile_error(d);
  d["interference"]["ratio"] = 1.5;
  d["interference"]["factor"] = 1.5;
  d["interference"]["ratio_median"] = 1.25 / 1.2;
  EXPECT_NEAR(*Profile::from_json(d, "p.json").interference_factor(), 1.5, 1e-12);
  d["interference"] = interference_block(1.2e-3, 1.5e-3);
  d["interference"]["alone"]["time_s"] = -1.0;
  EXPECT_NE(profile_error(d).find("/interference/alone/time_s"), std::string::npos)
      << profile_error(d);
  d["interference"] = interference_block(1.2e-3, 1.5e-3);
  d["interference"]["alone"]["time_p10_s"] = 2e-3;  // p10 above the median
  EXPECT_NE(profile_error(d).find("/interference/alone"), std::string::npos) << profile_error(d);
  d["interference"] = interference_block(1.2e-3, 1.5e-3);
  d["interference"].erase("collective_bytes");
  EXPECT_NE(profile_error(d).find("/interference/collective_bytes"), std::string::npos)
      << profile_error(d);
  d["interference"] = interference_block(1.2e-3, 1.5e-3);
  d["interference"]["op"] = "allreduce";
  EXPECT_NE(profile_error(d).find("/interference/op"), std::string::npos) << profile_error(d);
  d["interference"] = interference_block(1.2e-3, 1.5e-3);
  d["interference"]["gemm"]["mm"] = 3;
  EXPECT_NE(profile_error(d).find("/interference/gemm/mm"), std::string::npos) << profile_error(d);
}

// ---- GEMM lookups ----------------------------------------------------------------------------

TEST(Profile, GemmTimeInterpolatesLinearlyInFlopsAndFlagsExtrapolation) {
  json d = minimal();
  d["gemms"] = json::array({gemm_row(16, 1.0e-3), gemm_row(32, 1.5e-3)});
  const Profile p = Profile::from_json(d, "p.json");
  Gemm g{"fc0.fwd", GemmRole::kForward, {1, 1024, 512, 1, false, true}, BatchDim::kM};

  auto at = [&](std::int64_t b) { return *p.gemm_time_s(g, DType::kFp32, b); };
  // Exact batch: the row, with the min/max spread as interval.
  EXPECT_DOUBLE_EQ(at(16).time_s, 1.0e-3);
  EXPECT_DOUBLE_EQ(at(16).low_s, 0.9e-3);
  EXPECT_DOUBLE_EQ(at(16).high_s, 1.2e-3);
  EXPECT_FALSE(at(16).extrapolated);
  // Batch 24: FLOPs halfway between batch 16 and 32 -> time halfway, 1.25 ms.
  EXPECT_NEAR(at(24).time_s, 1.25e-3, 1e-15);
  EXPECT_NEAR(at(24).high_s, 1.5e-3, 1e-15);  // (1.2 + 1.8) / 2 ms
  EXPECT_FALSE(at(24).extrapolated);
  // Batch 64: above the table, batch 32's throughput: 1.5 ms x 64/32 = 3 ms.
  EXPECT_NEAR(at(64).time_s, 3.0e-3, 1e-15);
  EXPECT_TRUE(at(64).extrapolated);
  EXPECT_FALSE(at(64).note.empty());
  // Batch 8: the line through (16, 1 ms) and (32, 1.5 ms) gives 0.75 ms, more than batch 16's
  // throughput would (0.5 ms): 0.75 ms.
  EXPECT_NEAR(at(8).time_s, 0.75e-3, 1e-15);
  EXPECT_TRUE(at(8).extrapolated);
  // Another dtype or shape: not measured.
  EXPECT_FALSE(p.gemm_time_s(g, DType::kBf16, 16).has_value());
  Gemm other = g;
  other.per_sample.n = 2048;
  EXPECT_FALSE(p.gemm_time_s(other, DType::kFp32, 16).has_value());
  // Exact-shape lookup and the best throughput: 2*32*1024*512 / 1.5 ms.
  EXPECT_TRUE(p.gemm_time_s(GemmShape{32, 1024, 512, 1, false, true}, DType::kFp32).has_value());
  EXPECT_NEAR(p.best_gemm_flops(DType::kFp32), 2.0 * 32 * 1024 * 512 / 1.5e-3, 1);
}

// ---- collective lookups ----------------------------------------------------------------------

TEST(Profile, CollectiveTimeInterpolatesLogLogInsideAndUsesTheFitOutside) {
  json d = minimal();
  // t = 10 us + S / 1 GB/s exactly at 1 KiB .. 1 MiB (one segment).
  std::vector<std::pair<double, double>> rows;
  for (int p = 10; p <= 20; ++p) rows.push_back({std::exp2(p), 10 + std::exp2(p) / 1e3});
  d["collectives"] = {{"backend", "gloo"}, {"ranks", 2}, {"ops", {{"all_reduce", table(rows)}}}};
  const Profile p = Profile::from_json(d, "p.json");
  const CollectiveTable* t = p.collective(CollectiveOp::kAllReduce);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->fit.segments.size(), 1u);
  EXPECT_NEAR(t->fit.segments[0].fit.a, 10e-6, 1e-15);
  // The stored fit in the document says the same (alpha, busbw = 2(n-1)/n / beta = 1 GB/s).
  const json& seg = p.document()["collectives"]["ops"]["all_reduce"]["fit"]["segments"][0];
  EXPECT_NEAR(seg["alpha_s"].get<double>(), 10e-6, 1e-15);
  EXPECT_NEAR(seg["busbw_gbytes_per_s"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(seg["latency_per_step_us"].get<double>(), 5.0, 1e-9);  // 10 us / 2(n-1)

  // 1.5 KiB... use a size halfway on the log axis between 1 KiB and 2 KiB: 1024*sqrt(2).
  const double s = 1024 * std::sqrt(2.0);
  const double t1 = 10 + 1024 / 1e3, t2 = 10 + 2048 / 1e3;
  const Estimate in = p.collective_time_s(CollectiveOp::kAllReduce, s, 2);
  EXPECT_NEAR(in.time_s, std::sqrt(t1 * t2) * 1e-6, 1e-15);  // geometric mean
  EXPECT_FALSE(in.extrapolated);
  EXPECT_NEAR(in.high_s, std::sqrt(t1 * t2) * 1.1e-6, 1e-15);

  // 16 MiB: outside, from the fit: 10 us + 16 MiB / 1 GB/s.
  const Estimate out = p.collective_time_s(CollectiveOp::kAllReduce, 16 << 20, 2);
  EXPECT_TRUE(out.extrapolated);
  EXPECT_NEAR(out.time_s, 10e-6 + 16777216 / 1e9, 1e-12);
  EXPECT_NE(out.note.find("outside"), std::string::npos);

  // 4 ranks: latency x 2(4-1)/2(2-1) = 3, per-byte cost x (2*3/4)/(2*1/2) = 1.5.
  const Estimate four = p.collective_time_s(CollectiveOp::kAllReduce, 1 << 20, 4);
  EXPECT_TRUE(four.extrapolated);
  EXPECT_NEAR(four.time_s, 30e-6 + 1.5 * 1048576 / 1e9, 1e-12);

  EXPECT_EQ(p.collective_time_s(CollectiveOp::kAllReduce, 0, 2).time_s, 0);
  EXPECT_THROW(p.collective_time_s(CollectiveOp::kBroadcast, 8, 2), Error);
}

// ---- as hardware -----------------------------------------------------------------------------

json cpu_profile() {
  json d = minimal();
  d["context"]["host_memory_bytes"] = 8.0 * (1 << 30);
  d["context"]["cpu_model"] = "Test CPU";
  d["backend"] = "cpu";
  d["ranks"] = 2;
  d["gemms"] = json::array({gemm_row(16, 1.0e-3), gemm_row(32, 1.5e-3)});
  d["memory_bandwidth"] = json::array(
      {{{"kernel", "triad"}, {"gbytes_per_s", 10.0}, {"time_s", 1e-3}, {"ranks_concurrent", 2}}});
  std::vector<std::pair<double, double>> rows;
  for (int p = 10; p <= 20; ++p) rows.push_back({std::exp2(p), 100 + std::exp2(p) / 1e3});
  d["collectives"] = {{"backend", "gloo"},
                      {"transport", "tcp"},
                      {"ranks", 2},
                      {"ops", {{"all_reduce", table(rows)}}}};
  return d;
}

TEST(Profile, ReadsAsHardware) {
  const Profile p = Profile::from_json(cpu_profile(), "p.json");
  const json hw = hardware_json_from_profile(p, "s.json", "/hardware");
  // Peak = best measured GEMM: 2*32*1024*512 / 1.5 ms = 22.37 GFLOP/s, efficiency 1.
  EXPECT_NEAR(hw["gpu"]["peak_tflops"]["fp32"].get<double>(), 2.0 * 32 * 1024 * 512 / 1.5e-3 / 1e12,
              1e-12);
  EXPECT_EQ(hw["gpu"]["efficiency"]["fp32"].get<double>(), 1.0);
  EXPECT_EQ(hw["gpu"]["memory_gib"].get<double>(), 4.0);  // 8 GiB host / 2 ranks
  EXPECT_EQ(hw["gpus_per_node"].get<int>(), 2);
  // Ring all-reduce of 2 ranks: a = 2(n-1) alpha -> alpha = 100 us / 2 = 50 us;
  // b = (2(n-1)/n) / B -> B = 1 / 1e-9 B/s = 1 GB/s.
  EXPECT_NEAR(hw["intra_node"]["latency_us"].get<double>(), 50.0, 1e-6);
  EXPECT_NEAR(hw["intra_node"]["bandwidth_gbytes_per_s"].get<double>(), 1.0, 1e-9);
}

// Latency-bound rows whose time falls slightly with size (noise): the non-negative fit gives
// beta = 0 and 1/beta no bandwidth, so the largest row's bus bandwidth is used:
// 2(n-1)/n x S / t = 1 x 2^20 B / 99 us = 10.5917 GB/s (2 ranks).
TEST(Profile, ReadsAsHardwareWhenTheFitHasNoPerByteCost) {
  json d = cpu_profile();
  std::vector<std::pair<double, double>> rows;
  for (int p = 10; p <= 20; ++p) rows.push_back({std::exp2(p), 109.0 - 0.5 * (p - 10) * 2});
  d["collectives"]["ops"]["all_reduce"] = table(rows);
  const Profile p = Profile::from_json(d, "p.json");
  for (const auto& seg : p.collective(CollectiveOp::kAllReduce)->fit.segments) {
    EXPECT_EQ(seg.fit.b, 0.0);
  }
  const json hw = hardware_json_from_profile(p, "s.json", "/hardware");
  EXPECT_NEAR(hw["intra_node"]["bandwidth_gbytes_per_s"].get<double>(), std::exp2(20) / 99e-6 / 1e9,
              1e-9);
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("ddpsim-profile-test-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void write(const std::filesystem::path& p, const json& j) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << j.dump(1);
}

json mlp_scenario(json hardware) {
  return {{"model", {{"mlp", {{"widths", {512, 1024}}}}}},
          {"hardware", std::move(hardware)},
          {"cluster", {{"gpus", 2}}},
          {"training", {{"per_gpu_batch", 16}, {"precision", "fp32"}}}};
}

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

TEST(Profile, ScenarioHardwareProfileAndThisMachine) {
  TempDir dir;
  write(dir.path() / "prof.json", cpu_profile());
  const auto scen = dir.path() / "a" / "s.json";
  write(scen, mlp_scenario({{"profile", "../prof.json"}}));
  const Scenario s = load_scenario(scen.string());
  ASSERT_NE(s.hardware.profile, nullptr);
  EXPECT_EQ(s.hardware.gpus_per_node, 2);
  EXPECT_NEAR(s.hardware.intra_node.latency, 50e-6, 1e-12);
  EXPECT_NEAR(s.hardware.gpu.peak_flops.at(DType::kFp32), 2.0 * 32 * 1024 * 512 / 1.5e-3, 1);

  // Keys beside the profile override it, as beside a preset.
  write(scen,
        mlp_scenario({{"profile", "../prof.json"}, {"inter_node", {{"preset", "eth-100g"}}}}));
  EXPECT_NEAR(load_scenario(scen.string()).hardware.inter_node.bandwidth, 100e9 / 8, 1);

  // "this-machine": results/profile-<host>.json above the scenario, else beside the data dir;
  // absent from both, a clear error. The data dir is pointed at an empty folder of the test
  // (the source tree may hold a recorded profile of this very host).
  const auto data = dir.path() / "data" / "scenarios";
  std::filesystem::create_directories(data / "models");  // what makes a data dir (paths.hpp)
  std::filesystem::create_directories(data / "hardware");
  ASSERT_EQ(setenv("DDPSIM_DATA_DIR", data.c_str(), 1), 0);
  write(scen, mlp_scenario({{"preset", "this-machine"}}));
  try {
    (void)load_scenario(scen.string());
    ADD_FAILURE() << "no profile yet: expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/hardware/preset");
    EXPECT_NE(std::string(e.what()).find("ddpsim calibrate"), std::string::npos) << e.what();
  }
  // "this-machine" takes only a profile whose fingerprint is this machine's
  // (machine_match.hpp).
  json mine = cpu_profile();
  mine["machine"] = to_json(probe_machine());
  write(dir.path() / "data" / "results" / ("profile-" + hostname() + ".json"), mine);
  EXPECT_NE(load_scenario(scen.string()).hardware.profile, nullptr);  // beside the data dir
  std::filesystem::remove(dir.path() / "data" / "results" / ("profile-" + hostname() + ".json"));
  const auto own = dir.path() / "results" / ("profile-" + hostname() + ".json");
  write(own, mine);
  const Scenario here = load_scenario(scen.string());
  ASSERT_NE(here.hardware.profile, nullptr);
  EXPECT_EQ(here.hardware.gpu.name, "Test CPU (one rank)");
  EXPECT_TRUE(here.hardware.warnings.empty()) << here.hardware.warnings.front();

  // Another machine's profile under this host's name is refused, naming the file, the field and
  // both values; one written before fingerprints is an unknown machine's.
  json other = mine;
  other["machine"]["cpu_model"] = "Imaginary CPU 9000";
  write(own, other);
  try {
    (void)load_scenario(scen.string());
    ADD_FAILURE() << "another machine's profile: expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), own.string());
    EXPECT_EQ(e.pointer(), "/machine/cpu_model");
    EXPECT_NE(e.got().find("Imaginary CPU 9000"), std::string::npos) << e.what();
    EXPECT_NE(e.expected().find(probe_machine().cpu_model), std::string::npos) << e.what();
  }
  write(own, cpu_profile());
  try {
    (void)load_scenario(scen.string());
    ADD_FAILURE() << "a profile without a fingerprint: expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/machine");
  }
  unsetenv("DDPSIM_DATA_DIR");
  // Named explicitly, the same profile is used, with a warning that names the difference.
  write(dir.path() / "other.json", other);
  write(scen, mlp_scenario({{"profile", "../other.json"}}));
  const Scenario named = load_scenario(scen.string());
  ASSERT_EQ(named.hardware.warnings.size(), 1u);
  EXPECT_NE(named.hardware.warnings[0].find("cpu_model: profile \"Imaginary CPU 9000\""),
            std::string::npos)
      << named.hardware.warnings[0];

  // A profile without GEMMs (e.g. an imported nccl-tests log) cannot describe a device.
  json no_gemms = cpu_profile();
  no_gemms.erase("gemms");
  write(dir.path() / "prof.json", no_gemms);
  write(scen, mlp_scenario({{"profile", "../prof.json"}}));
  try {
    (void)load_scenario(scen.string());
    ADD_FAILURE() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/hardware/profile");
  }
}

}  // namespace
}  // namespace ddpsim::model
