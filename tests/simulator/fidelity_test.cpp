// The fidelity report: rows predicted through the run API in the row's unit, summaries by hand,
// nccl-tests sweeps found by their fields, provenance flags, and strict errors on bad rows.
#include "simulator/fidelity/fidelity.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/fidelity/detail/sweep_bands.hpp"
#include "simulator/run.hpp"

namespace ddpsim::sim {
namespace {

using nlohmann::json;

const std::filesystem::path kHardware = std::filesystem::path(DDPSIM_SCENARIO_DIR) / "hardware";
const std::string kFile = std::string(DDPSIM_SCENARIO_DIR) + "/data/published-training.json";

json small_scenario_json() {
  return {{"model", {{"mlp", {{"widths", {256, 1024, 256}}}}}},
          {"hardware", {{"preset", "dgx-a100"}}},
          {"cluster", {{"gpus", 8}}},
          {"training", {{"per_gpu_batch", 32}, {"grad_accumulation", 2}}}};
}

json row(const std::string& id, bool held_out) {
  return {{"id", id},
          {"source", "a test"},
          {"quantity", "samples_per_s"},
          {"value", 1000.0},
          {"unit", "samples/s"},
          {"held_out", held_out},
          {"scenario", small_scenario_json()}};
}

TEST(Fidelity, PredictsEachRowThroughTheRunApiInTheRowsUnit) {
  const FidelityReport r =
      compare_fidelity(json::array({row("a", false)}), kFile, json::array(), kHardware);
  ASSERT_EQ(r.rows.size(), 1u);
  const Prediction p = predict_point(model::parse_scenario(small_scenario_json(), kFile));
  // 32 x 2 x 8 = 512 samples per step.
  EXPECT_DOUBLE_EQ(r.rows[0].step_time_s, p.step_time_s);
  EXPECT_DOUBLE_EQ(r.rows[0].ddpsim, 512.0 / p.step_time_s);
  EXPECT_DOUBLE_EQ(r.rows[0].relative_error, (512.0 / p.step_time_s - 1000.0) / 1000.0);
  EXPECT_EQ(r.rows[0].strategy, "ddp");
  EXPECT_EQ(r.rows[0].gpu, "a100-sxm-80gb");
}

TEST(Fidelity, SummaryIsMedianAndMaxOfAbsoluteErrorsPerGroup) {
  std::vector<TrainingComparison> rows(4);
  const double errors[] = {-0.1, 0.3, -0.2, 0.9};
  for (int i = 0; i < 4; ++i) {
    rows[i].gpu = i == 0 ? "v100-sxm2" : "h100-sxm";
    rows[i].strategy = "ddp";
    rows[i].relative_error = errors[i];
    rows[i].held_out = i == 3;
  }
  // Visible: |e| = 0.1, 0.3, 0.2 -> median 0.2, max 0.3; h100 alone: 0.3, 0.2 -> median 0.25.
  const auto v = summarize(rows, false);
  ASSERT_EQ(v.size(), 4u);  // all, GPU h100-sxm, GPU v100-sxm2, strategy ddp
  EXPECT_EQ(v[0].group, "all");
  EXPECT_EQ(v[0].count, 3u);
  EXPECT_DOUBLE_EQ(v[0].median_abs, 0.2);
  EXPECT_DOUBLE_EQ(v[0].max_abs, 0.3);
  EXPECT_EQ(v[1].group, "GPU h100-sxm");
  EXPECT_DOUBLE_EQ(v[1].median_abs, 0.25);
  const auto h = summarize(rows, true);
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(h[0].count, 1u);
  EXPECT_DOUBLE_EQ(h[0].max_abs, 0.9);
}

TEST(Fidelity, BusbwBandsAtTheirEdges) {
  EXPECT_STREQ(busbw_band(65535), "< 64 KiB");
  EXPECT_STREQ(busbw_band(65536), "64 KiB - 1 MiB");
  EXPECT_STREQ(busbw_band(1048576), "1 - 64 MiB");
  EXPECT_STREQ(busbw_band(64.0 * 1048576 - 1), "1 - 64 MiB");
  EXPECT_STREQ(busbw_band(64.0 * 1048576), ">= 64 MiB");
}

// Hand values. Band "< 64 KiB" holds -0.5, +0.1, +0.2: geomean |error| (0.5 x 0.1 x 0.2)^(1/3) =
// 0.01^(1/3) = 0.21544, max 0.5, median +0.1 (the middle of three). Band "1 - 64 MiB" holds
// +0.3, -0.1, +0.05, -0.2: sorted -0.2, -0.1, +0.05, +0.3, median (-0.1 + 0.05) / 2 = -0.025.
// Band "64 KiB - 1 MiB" has no point and is left out.
TEST(Fidelity, SweepBandsGiveGeomeanMaxAndSignedMedianPerBand) {
  const std::vector<detail::SweepPoint> points = {{1024, -0.5},    {2048, 0.1},     {8, 0.2},
                                                  {2 << 20, 0.3},  {4 << 20, -0.1}, {8 << 20, 0.05},
                                                  {16 << 20, -0.2}};
  const auto bands = detail::sweep_bands("s", "dgx-a100", points);
  ASSERT_EQ(bands.size(), 2u);
  EXPECT_EQ(bands[0].band, "< 64 KiB");
  EXPECT_EQ(bands[0].count, 3u);
  EXPECT_NEAR(bands[0].geomean_abs_error, 0.215443, 1e-6);
  EXPECT_DOUBLE_EQ(bands[0].max_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(bands[0].median_error, 0.1);
  EXPECT_EQ(bands[1].band, "1 - 64 MiB");
  EXPECT_EQ(bands[1].count, 4u);
  EXPECT_DOUBLE_EQ(bands[1].max_abs_error, 0.3);
  EXPECT_NEAR(bands[1].median_error, -0.025, 1e-12);
}

TEST(Fidelity, FindsSweepsByTheirFieldsNotTheirIds) {
  auto sweep_row = [](const std::string& id, const std::string& size, double busbw) {
    return json{{"id", id},
                {"source", "somebody's sweep"},
                {"quantity", "AllReduce bus bandwidth at message size " + size},
                {"value", busbw},
                {"num_gpus", 8},
                {"gpu_type", "A100-SXM4-80GB"}};
  };
  const json m = json::array({sweep_row("x1", "1KB", 0.04),
                              sweep_row("x2", "2KB", 0.08),
                              sweep_row("x3", "1GB", 228.1),
                              {{"id", "not-a-sweep"}, {"quantity", "peak busbw"}, {"value", 1}}});
  const FidelityReport r = compare_fidelity(json::array(), kFile, m, kHardware);
  ASSERT_EQ(r.bands.size(), 2u);
  EXPECT_EQ(r.bands[0].sweep, "all_reduce | somebody's sweep | A100-SXM4-80GB | 8 GPUs");
  EXPECT_EQ(r.bands[0].band, "< 64 KiB");
  EXPECT_EQ(r.bands[0].count, 2u);
  EXPECT_EQ(r.bands[0].preset, "dgx-a100");
  EXPECT_EQ(r.bands[1].band, ">= 64 MiB");
  EXPECT_EQ(r.bands[1].count, 1u);
  EXPECT_GT(r.bands[1].geomean_abs_error, 0.0);
}

TEST(Fidelity, SweepsOfOtherOpsAndPlainByteSizesAreTheirOwnSweeps) {
  const json m =
      json::array({{{"id", "g1"},
                    {"source", "s"},
                    {"quantity", "AllGather bus bandwidth at message size 1048576 (busbw)"},
                    {"value", 50.0},
                    {"num_gpus", 16},
                    {"gpus_per_node", 8},
                    {"gpu_type", "H100 SXM"}},
                   {{"id", "r1"},
                    {"source", "s"},
                    {"quantity", "AllReduce bus bandwidth at message size 8MB"},
                    {"value", 100.0},
                    {"num_gpus", 16},
                    {"gpu_type", "H100 SXM"}},
                   {{"id", "x"},
                    {"quantity", "Alltoall bus bandwidth at message size 8MB"},
                    {"value", 1.0},
                    {"num_gpus", 8},
                    {"gpu_type", "H100"}}});
  const FidelityReport r = compare_fidelity(json::array(), kFile, m, kHardware);
  ASSERT_EQ(r.bands.size(), 2u);  // Alltoall is not a sweep ddpsim predicts
  EXPECT_EQ(r.bands[0].sweep, "all_gather | s | H100 SXM | 16 GPUs");
  EXPECT_EQ(r.bands[0].band, "1 - 64 MiB");  // 1048576 bytes exactly
  EXPECT_EQ(r.bands[1].sweep, "all_reduce | s | H100 SXM | 16 GPUs");
  EXPECT_EQ(r.bands[1].preset, "dgx-h100");
  json bad = m;
  bad[1]["quantity"] = "AllReduce bus bandwidth at message size big";
  try {
    compare_fidelity(json::array(), kFile, bad, kHardware);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row r1"), std::string::npos) << e.what();
  }
}

TEST(Fidelity, FlagsPresetsThatCiteEndToEndTrainingData) {
  const auto dir = std::filesystem::temp_directory_path() / "ddpsim_fidelity_test_hw";
  std::filesystem::create_directories(dir / "gpus");
  std::ofstream(dir / "gpus" / "kernel.json")
      << R"({"name": "kernel", "source": "cuBLAS GEMM sweep", "efficiency": {"bf16": 0.7}})";
  std::ofstream(dir / "gpus" / "e2e.json")
      << R"({"name": "e2e", "source": "0.40 from 38-43% BF16 MFU in pre-training", "x": 1})";
  std::ofstream(dir / "sys.json")
      << R"({"name": "sys", "collectives": {"fitted_from": ["a", "nccl-1"]}})";
  const FidelityReport r =
      compare_fidelity(json::array({row("a", false)}), kFile, json::array(), dir);
  ASSERT_EQ(r.constants.size(), 3u);
  EXPECT_EQ(r.constants[0].file, "gpus/e2e.json");
  EXPECT_TRUE(r.constants[0].end_to_end);
  EXPECT_EQ(r.constants[0].constants, "x=1");
  EXPECT_EQ(r.constants[1].file, "gpus/kernel.json");
  EXPECT_FALSE(r.constants[1].end_to_end);
  EXPECT_EQ(r.constants[1].constants, "efficiency.bf16=0.7");
  EXPECT_EQ(r.constants[2].file, "sys.json");
  EXPECT_TRUE(r.constants[2].end_to_end);  // fitted_from names training row "a"
  EXPECT_EQ(r.constants[2].fitted_from, "a, nccl-1");
  std::filesystem::remove_all(dir);
}

std::string rows_error(const json& rows) {
  try {
    compare_fidelity(rows, kFile, json::array(), kHardware);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Fidelity, BadRowsAreOneLineInputErrorsNamingThePointer) {
  json both = row("a", false);
  both["not_predicted"] = "why";
  EXPECT_NE(rows_error(json::array({both})).find("/0: expected exactly one of"), std::string::npos)
      << rows_error(json::array({both}));
  json bad_value = row("a", false);
  bad_value["value"] = -1;
  EXPECT_NE(rows_error(json::array({bad_value})).find("/0/value"), std::string::npos);
  json bad_scenario = row("b", false);
  bad_scenario["scenario"]["cluster"]["gpus"] = 0;
  const std::string e = rows_error(json::array({row("a", false), bad_scenario}));
  EXPECT_NE(e.find("/1/scenario/cluster/gpus"), std::string::npos) << e;
  EXPECT_NE(rows_error(json::array({row("a", false), row("a", true)})).find("unique id"),
            std::string::npos);
}

TEST(Fidelity, TheShippedRowsAreAllPredictedOrExplained) {
  const FidelityReport r = compare_fidelity();
  EXPECT_EQ(r.rows.size() + r.not_predicted.size(), r.training_rows);
  EXPECT_GE(r.training_rows, 20u);
  EXPECT_FALSE(r.visible.empty());
  EXPECT_FALSE(r.held_out.empty());
  EXPECT_FALSE(r.bands.empty());
  const json doc = fidelity_json(r);
  EXPECT_EQ(doc.at("rows").size(), r.rows.size());
  EXPECT_NE(fidelity_markdown(r).find("## What set each constant"), std::string::npos);
}

}  // namespace
}  // namespace ddpsim::sim
