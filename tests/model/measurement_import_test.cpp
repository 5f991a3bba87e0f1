// measurement_import_test.cpp: nccl-tests logs and -J JSON into profile sections
// (model/imports/measurement_import.hpp); Kineto traces are kineto_import_test.cpp's.
#include "model/imports/measurement_import.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model/error.hpp"
#include "model/profile/profile.hpp"
#include "model/scenario/scenario.hpp"
#include "tests/test_data_dir.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;

using test_data::kData;
const std::string kLog = kData + "/nccl-tests/all_reduce_azure_h100.log";
const std::string kJson = kData + "/nccl-tests/all_reduce_azure_h100.json";

// The published busbw of the nccl-azure-h100-* row for `size`: the rows are 1K .. 8G in file
// order, i.e. 2^10 .. 2^33 bytes (the source labels 2^16 "65K", 2^17 "132K", ...).
double published_busbw(double size) {
  static const json rows = read_json_file(DDPSIM_PUBLISHED_JSON);
  std::vector<double> values;
  for (const json& r : rows) {
    if (r.at("id").get<std::string>().rfind("nccl-azure-h100-", 0) == 0) {
      values.push_back(r.at("value").get<double>());
    }
  }
  return values.at(static_cast<std::size_t>(std::log2(size)) - 10);
}

void expect_azure_h100_table(const json& c) {
  EXPECT_EQ(c["ranks"].get<int>(), 8);  // eight "#  Rank" device lines
  EXPECT_EQ(c["nodes"].get<int>(), 1);  // one host name
  EXPECT_EQ(c["version"].get<std::string>(), "2.18.5");
  const json& rows = c["ops"]["all_reduce"]["rows"];
  ASSERT_EQ(rows.size(), 48u);  // 24 sizes, out-of-place and in-place
  for (const json& r : rows) {
    const double size = r["size_bytes"].get<double>();
    EXPECT_EQ(r["busbw_gbytes_per_s"].get<double>(), published_busbw(size)) << size;
    EXPECT_EQ(r["repeats"].get<int>(), 20);
    // The time column is size / algbw, printed rounded: it reproduces busbw to the rounding of
    // the printed digits, busbw = size / t x 2(n-1)/n.
    const double busbw = size / (r["time_us"].get<double>() * 1e3) * 2 * 7 / 8;
    EXPECT_NEAR(busbw, published_busbw(size), 0.006 * published_busbw(size) + 0.006) << size;
  }
  EXPECT_EQ(rows[0]["size_bytes"].get<std::int64_t>(), 1024);
  EXPECT_FALSE(rows[0]["in_place"].get<bool>());
  EXPECT_TRUE(rows[1]["in_place"].get<bool>());
  EXPECT_EQ(rows[0]["wrong"].get<int>(), 0);
  EXPECT_EQ(rows[0]["count"].get<int>(), 256);
}

TEST(NcclTestsImport, LogMatchesThePublishedRows) {
  const json c = import_nccl_tests_file(kLog);
  EXPECT_EQ(c["source"].get<std::string>(), "nccl-tests log " + kLog);
  expect_azure_h100_table(c);
}

TEST(NcclTestsImport, JsonOutputGivesTheSameTable) {
  const json a = import_nccl_tests_file(kLog);
  const json b = import_nccl_tests_file(kJson);
  expect_azure_h100_table(b);
  EXPECT_EQ(a["ops"], b["ops"]);
}

TEST(NcclTestsImport, BecomesAProfileWithAFit) {
  const json doc = imported_profile(import_nccl_tests_file(kLog), nullptr, "test");
  const Profile p = Profile::from_json(doc, kLog);
  const CollectiveTable* t = p.collective(CollectiveOp::kAllReduce);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->ranks, 8);
  // NCCL switches protocol with size: more than one segment fits this sweep better.
  EXPECT_GE(t->fit.segments.size(), 2u);
  EXPECT_GT(t->fit.r_squared, 0.99);
  // Inside the table: the 1 GiB row itself.
  const Estimate e = p.collective_time_s(CollectiveOp::kAllReduce, 1073741824.0, 8);
  EXPECT_NEAR(e.time_s, 4029.27e-6, 1e-12);
  // The largest segment's slope is the asymptotic bus bandwidth: within 5% of the published
  // 8 GiB plateau (478.87 GB/s; the segment also spans sizes still ramping up).
  const double busbw = busbw_factor(CollectiveOp::kAllReduce, 8) / t->fit.segments.back().fit.b;
  EXPECT_NEAR(busbw / 1e9, 478.87, 0.05 * 478.87);
}

// A user's own cluster log corrects a preset: the imported profile (collectives only) sits
// beside "preset" and replaces only its collectives; `predict --profile` puts it there. The
// Together log ran -g 8 (one thread, 8 GPUs): a warning says its small calls carry 8 launches.
TEST(NcclTestsImport, AProfileOfALogSitsBesideAPreset) {
  const std::string log =
      kData + "/../../scenarios/data/nccl-tests/all_reduce_together_h100_nvlink_1x8_g8_ring.log";
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ddpsim-beside-" + std::to_string(static_cast<long>(::getpid())));
  std::filesystem::create_directories(dir);
  const std::string prof = (dir / "cluster.json").string();
  std::ofstream(prof) << imported_profile(import_nccl_tests_file(log), nullptr, "test").dump();
  json doc = {{"model", {{"mlp", {{"widths", {64, 64}}}}}},
              {"hardware", {{"preset", "dgx-h100"}}},
              {"cluster", {{"gpus", 8}}},
              {"training", {{"per_gpu_batch", 1}}}};
  use_profile_as_hardware(doc, prof);
  EXPECT_EQ(doc["hardware"]["preset"], "dgx-h100");
  EXPECT_EQ(doc["hardware"]["profile"], prof);
  const Scenario s = parse_scenario(doc, (dir / "s.json").string());
  EXPECT_EQ(s.hardware.name, "dgx-h100");  // the preset's GPU, links and NCCL model stay
  EXPECT_EQ(s.hardware.gpu.name, "h100-sxm");
  ASSERT_NE(s.hardware.profile, nullptr);
  ASSERT_NE(s.hardware.profile->collective(CollectiveOp::kAllReduce), nullptr);
  ASSERT_EQ(s.hardware.warnings.size(), 1u);
  EXPECT_NE(s.hardware.warnings[0].find("8 GPUs (nccl-tests -g)"), std::string::npos);
  // Beside "this-machine" or a file it is refused, naming the key.
  doc["hardware"] = {{"preset", "this-machine"}, {"profile", prof}};
  try {
    (void)parse_scenario(doc, (dir / "s.json").string());
    ADD_FAILURE() << "a profile beside this-machine";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/hardware/profile");
  }
  std::filesystem::remove_all(dir);
}

TEST(NcclTestsImport, OlderLogNeedsTheOpAndParsesNa) {
  // nccl-tests before the "Collective test starting" line, validation off (#wrong N/A),
  // no device lines: ranks = nThread x nGpus.
  const std::string log =
      "# nThread 1 nGpus 4 minBytes 8 maxBytes 64 step: 2(factor) warmup iters: 5 iters: 10 "
      "validation: 0\n"
      "#\n"
      "#                                                       out-of-place                       "
      "in-place\n"
      "#       size         count      type   redop     time   algbw   busbw  error     time   "
      "algbw   busbw  error\n"
      "#        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  "
      "(GB/s)  (GB/s)\n"
      "           8             2     float     sum    10.00    0.00    0.00    N/A    10.00    "
      "0.00    0.00    N/A\n"
      "          64            16     float     sum    11.00    0.01    0.01    N/A    11.50    "
      "0.01    0.01    N/A\n";
  // This old header names the error column "error": the time/algbw/busbw groups still parse.
  EXPECT_THROW(import_nccl_tests_log(log, "old.log"), InputError);  // no op in the log
  const json c = import_nccl_tests_log(log, "old.log", "reduce_scatter");
  EXPECT_EQ(c["ranks"].get<int>(), 4);
  const json& rows = c["ops"]["reduce_scatter"]["rows"];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[3]["time_us"].get<double>(), 11.5);
  EXPECT_EQ(rows[3]["repeats"].get<int>(), 10);
  EXPECT_FALSE(rows[3].contains("wrong"));
}

TEST(NcclTestsImport, BadRowsNameTheLine) {
  const std::string log =
      "# Collective test starting: all_gather_perf\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      "           8             2     float    none      -1    10.00    0.00    0.00      0\n"
      "          16             4     float    none      -1    ten      0.00    0.00      0\n";
  try {
    (void)import_nccl_tests_log(log, "bad.log");
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "line 4");
    EXPECT_NE(std::string(e.what()).find("\"ten\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(import_nccl_tests_log("# nothing here\n", "empty.log", "all_reduce"), InputError);
  EXPECT_THROW(import_nccl_tests_json(json::object(), "x.json"), InputError);
}

// Counts past 2^53 cannot be stored exactly as int64 sizes (a fuzz finding: a count of 4.4e113
// was cast to int64, undefined behaviour); they are refused naming the line, and absurd header
// counts are clamped instead of overflowing.
TEST(NcclTestsImport, HugeCountsAreRefusedNotCast) {
  const std::string head =
      "# nThread 99999999999999999999 nGpus 99999999999999999999 iters: 99999999999999999999\n"
      "# Collective test starting: all_gather_perf\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n";
  try {
    (void)import_nccl_tests_log(
        head + "           8   4.4e113     float    none      -1    10.00    0.00    0.00      0\n",
        "huge.log");
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "line 4");
    EXPECT_NE(std::string(e.what()).find("2^53"), std::string::npos) << e.what();
  }
  const json c = import_nccl_tests_log(
      head +
          "           8             2     float    none      -1    10.00    0.00    0.00      0\n",
      "ok.log");
  EXPECT_EQ(c["ranks"].get<int>(), 1000000);  // 1e6 x 1e6 clamped to 1e6, not overflowed
  json j = {
      {"config", {{"nthreads", 1e300}, {"ngpus", 1e300}, {"iterations", 1e300}}},
      {"args", {"all_gather_perf"}},
      {"results",
       {{{"size", 8u},
         {"out_of_place", {{"time", 1.0}, {"alg_bw", 0.0}, {"bus_bw", 0.0}, {"nwrong", 1e300}}}}}}};
  try {
    (void)import_nccl_tests_json(j, "huge.json");
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/results/0/out_of_place/nwrong") << e.what();
  }
}

// Issue 20: a time of 0 (a fit divides by it) or 1e300 us (a 300-digit step time downstream)
// is refused at its line, not at "/" or as an internal error; an hour per call is the ceiling.
TEST(NcclTestsImport, TimesOutsideZeroToAnHourAreRefusedAtTheirRow) {
  const std::string head =
      "# Collective test starting: all_gather_perf\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      "           8             2     float    none      -1    10.00    0.00    0.00      0\n";
  for (const char* t : {"    0.00", "   1e300", " 3.7e+09"}) {
    try {
      (void)import_nccl_tests_log(head + "          16             4     float    none      -1 " +
                                      t + "    0.00    0.00      0\n",
                                  "t.log");
      ADD_FAILURE() << "accepted " << t;
    } catch (const InputError& e) {
      EXPECT_EQ(e.pointer(), "line 4") << e.what();
      EXPECT_NE(std::string(e.what()).find("at most 3.6e9 us"), std::string::npos) << e.what();
    }
  }
  json j = {
      {"args", {"all_gather_perf"}},
      {"results",
       {{{"size", 8u}, {"out_of_place", {{"time", 0.0}, {"alg_bw", 0.0}, {"bus_bw", 0.0}}}}}}};
  try {
    (void)import_nccl_tests_json(j, "t.json", "all_gather");
    ADD_FAILURE() << "accepted a time of 0";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/results/0/out_of_place/time") << e.what();
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every line of `text` with `tag` in front, as a launcher writes it.
std::string tagged(const std::string& text, const std::string& tag) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) out += tag + line + "\n";
  return out;
}

std::string refusal_of(const std::string& log, const std::string& op = "") {
  try {
    (void)import_nccl_tests_log(log, "x.log", op);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(imported)";
}

// A gzip-compressed -J file reads like the plain one (by its magic bytes).
TEST(NcclTestsImport, GzipJsonByMagicBytes) {
  EXPECT_EQ(import_nccl_tests_file(kJson + ".gz")["ops"], import_nccl_tests_file(kJson)["ops"]);
}

// `mpirun --tag-output` and `srun --label` prefix every line; the table is the same.
TEST(NcclTestsImport, LauncherTagsAreStripped) {
  const std::string log = read_text(kLog);
  const json plain = import_nccl_tests_log(log, "a.log");
  const json mpi = import_nccl_tests_log(tagged(log, "[1,0]<stdout>:"), "a.log");
  const json srun = import_nccl_tests_log(tagged(log, "0: "), "a.log");
  EXPECT_EQ(mpi["ops"], plain["ops"]);
  EXPECT_EQ(srun["ops"], plain["ops"]);
  EXPECT_EQ(mpi["ranks"].get<int>(), 8);
}

// Layouts of the public logs in scenarios/data/nccl-tests: OpenMPI tags inside a row that
// nccl-tests printed in several writes (aws p5 logs), SkyPilot's "(head, rank=0, pid=N)" before
// the tag, and a docs rendering that replaced every leading '#' by a space (dstack). Each reads
// whole; "# nThread 1 nGpus 8" becomes gpus_per_process (one thread drove 8 GPUs).
TEST(NcclTestsImport, PublicLogLayouts) {
  const std::string dir = kData + "/../../scenarios/data/nccl-tests/";
  const json p5 = import_nccl_tests_file(dir + "all_reduce_p5_h100_efa_2x8_nccl2.22.3.log");
  EXPECT_EQ(p5["ranks"].get<int>(), 16);
  EXPECT_EQ(p5["version"], "2.22.3");
  // 8 B .. 16 GiB: 32 sizes, out-of-place and in-place; the 8-byte row's time is 85.70 us.
  ASSERT_EQ(p5["ops"]["all_reduce"]["rows"].size(), 64u);
  EXPECT_NEAR(p5["ops"]["all_reduce"]["rows"][0]["time_us"].get<double>(), 85.70, 1e-9);
  // Its INFO lines: AWS's 8 MiB NCCL_BUFFSIZE (Simple chunks twice the default), "set by
  // environment to 8388608." kept as printed without the full stop.
  EXPECT_EQ(p5["nccl_env"]["NCCL_BUFFSIZE"], "8388608");
  const json sky =
      import_nccl_tests_file(dir + "all_gather_gcp_a3ultra_h200_roce_2x8_skypilot.log");
  EXPECT_EQ(sky["ranks"].get<int>(), 16);
  EXPECT_TRUE(sky["ops"].contains("all_gather"));
  // No rank lines survive there: the table reads (29 sizes x 2), the ranks must come from
  // elsewhere (a profile needs them: import_nccl_tests_file refuses it, naming the rank count).
  const std::string dstack = dir + "all_reduce_lambda_b200_ib_2x8_dstackdoc.log";
  EXPECT_EQ(import_nccl_tests_log(read_text(dstack), dstack)["ops"]["all_reduce"]["rows"].size(),
            58u);
  try {
    (void)import_nccl_tests_file(dstack);
    ADD_FAILURE() << "a log without ranks makes no profile";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("got 1 rank"), std::string::npos) << e.what();
  }
  EXPECT_EQ(import_nccl_tests_file(
                dir + "all_reduce_together_h100_nvlink_1x8_g8_ring.log")["gpus_per_process"]
                .get<int>(),
            8);
}

// A table cut out of a larger log (no rank lines, no header) states neither its ranks nor its
// nodes: --ranks and --nodes supply them, the op is then inferred (busbw/algbw 1.875 = 2(n-1)/n
// at n = 16: all_reduce), and a profile of 2 nodes can be fitted. Where the log states them the
// two must agree, and the nodes must divide the ranks.
TEST(NcclTestsImport, RanksAndNodesOfAnExcerptFromTheCommandLine) {
  const std::string dir = kData + "/../../scenarios/data/nccl-tests/";
  const std::string excerpt = dir + "all_reduce_p4de_a100_efa_2x8_table.log";
  const json c = import_nccl_tests_file(excerpt, "", NcclTestsLayout{16, 2});
  EXPECT_EQ(c["ranks"].get<int>(), 16);
  EXPECT_EQ(c["nodes"].get<int>(), 2);
  EXPECT_TRUE(c["ops"].contains("all_reduce"));
  // The p5 log has 16 rank lines on 2 hosts: the same layout passes, another is refused.
  const std::string p5 = dir + "all_reduce_p5_h100_efa_2x8_nccl2.22.3.log";
  EXPECT_EQ(import_nccl_tests_file(p5, "", NcclTestsLayout{16, 2})["nodes"].get<int>(), 2);
  const auto refusal = [](const std::string& path, NcclTestsLayout layout) -> std::string {
    try {
      (void)import_nccl_tests_file(path, "", layout);
    } catch (const InputError& e) {
      return e.what();
    }
    return "(imported)";
  };
  EXPECT_NE(refusal(p5, {32, 0}).find("--ranks as the log's rank lines state it (16), got 32"),
            std::string::npos)
      << refusal(p5, {32, 0});
  EXPECT_NE(refusal(p5, {0, 4}).find("--nodes as the log's hosts on its rank lines state it (2)"),
            std::string::npos)
      << refusal(p5, {0, 4});
  EXPECT_NE(refusal(excerpt, {16, 3}).find("a node count that divides the rank count"),
            std::string::npos)
      << refusal(excerpt, {16, 3});
}

// A real 16-rank, 2-node H100 log without the "Collective test starting" line: busbw/algbw =
// 338.82/180.71 = 1.875 = 2(n-1)/n with n = 16, redop sum, root -1: all_reduce.
TEST(NcclTestsImport, OpInferredFromTheBusBandwidthFactor) {
  const std::string path =
      kData + "/../../scenarios/data/nccl-tests/all_reduce_a3mega_h100_16ranks.log";
  const json c = import_nccl_tests_file(path);
  EXPECT_EQ(c["ranks"].get<int>(), 16);
  EXPECT_EQ(c["nodes"].get<int>(), 2);
  ASSERT_TRUE(c["ops"].contains("all_reduce"));
  EXPECT_EQ(c["ops"]["all_reduce"]["rows"].size(), 62u);  // 31 sizes, out-of-place and in-place
  // The Azure log with its op line removed: 2 x 7/8 = 1.75, all_reduce again.
  std::string log = read_text(kLog);
  const auto at = log.find("# Collective test starting");
  log.erase(at, log.find('\n', at) + 1 - at);
  EXPECT_TRUE(import_nccl_tests_log(log, "a.log")["ops"].contains("all_reduce"));
  // (n-1)/n with redop "none": all_gather; with a reduction: reduce_scatter.
  const std::string head =
      "# nThread 1 nGpus 4 minBytes 8 maxBytes 64 step: 2(factor) warmup iters: 5 iters: 10\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n";
  const std::string rows_none =
      "     1048576        65536     float    none      -1    100.0   10.49    7.86      0\n"
      "     2097152       131072     float    none      -1    190.0   11.04    8.28      0\n";
  EXPECT_TRUE(import_nccl_tests_log(head + rows_none, "g.log")["ops"].contains("all_gather"));
  std::string rows_sum = rows_none;
  for (std::size_t p; (p = rows_sum.find("none")) != std::string::npos;) {
    rows_sum.replace(p, 4, " sum");
  }
  EXPECT_TRUE(import_nccl_tests_log(head + rows_sum, "r.log")["ops"].contains("reduce_scatter"));
  // A factor no op has: the error asks for --op.
  const std::string odd =
      "     1048576        65536     float     sum      -1    100.0   10.49   13.00      0\n";
  EXPECT_NE(refusal_of(head + odd).find("--op"), std::string::npos) << refusal_of(head + odd);
  EXPECT_NE(refusal_of(head + odd).find("no known op"), std::string::npos);
  EXPECT_EQ(refusal_of(head + odd, "all_reduce"), "(imported)");
}

// The one-line error of importing `text` as a file, or "(imported)".
std::string file_refusal(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  try {
    (void)import_nccl_tests_file(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(imported)";
}

// A one-size or one-GPU log cannot be fitted: one line saying so, not the fit's internals.
TEST(NcclTestsImport, OneSizeOrOneGpuIsAClearInputError) {
  const std::string one_size = file_refusal(
      "one_size.log",
      "# nThread 1 nGpus 8 iters: 20\n# Collective test starting: all_reduce_perf\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      "   1048576        262144     float     sum      -1    50.00   20.97   36.70      0\n");
  EXPECT_NE(one_size.find("one size (1048576 bytes)"), std::string::npos) << one_size;
  const std::string one_gpu = file_refusal(
      "one_gpu.log",
      "# nThread 1 nGpus 1 iters: 20\n# Collective test starting: all_reduce_perf\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      "   1048576        262144     float     sum      -1     5.00  209.72    0.00      0\n"
      "   2097152        524288     float     sum      -1     9.00  233.02    0.00      0\n");
  EXPECT_NE(one_gpu.find("2 or more ranks"), std::string::npos) << one_gpu;
}

}  // namespace
}  // namespace ddpsim::model
