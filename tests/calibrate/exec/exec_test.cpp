// Tests of the DDP executor (calibrate/exec) through the ddpsim-exec binary: data-parallel
// training is equivalent to one rank with the whole batch, the measurements are consistent, a
// dead rank fails the run, and scenarios the executor cannot run are refused up front.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct RunResult {
  int code = -1;
  std::string err;
};

class Exec : public testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() / ("ddpsim-exec-test-" + std::to_string(::getpid()) + "-" +
                                     testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::ifstream f(fs::path(DDPSIM_TEST_DATA_DIR) / "exec" / "mlp-small.json");
    base_ = json::parse(f);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string scenario(const json& patch = json::object(), const std::string& name = "s.json") {
    json doc = base_;
    if (!patch.is_null()) doc.merge_patch(patch);
    const fs::path p = dir_ / name;
    std::ofstream(p) << doc.dump(1);
    return p.string();
  }
  RunResult run(const std::string& args, const std::string& env = "") {
    const fs::path err = dir_ / "stderr.txt";
    const std::string cmd =
        env + " " + DDPSIM_EXEC_BIN + " " + args + " > /dev/null 2> " + err.string();
    const int status = std::system(cmd.c_str());
    RunResult r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream f(err);
    std::stringstream ss;
    ss << f.rdbuf();
    r.err = ss.str();
    return r;
  }
  std::vector<float> params(const std::string& args, const std::string& name) {
    const fs::path out = dir_ / name;
    const RunResult r = run(args + " --dump-params " + out.string());
    EXPECT_EQ(r.code, 0) << r.err;
    std::ifstream f(out, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), {});
    std::vector<float> v(bytes.size() / sizeof(float));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    return v;
  }
  static double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    EXPECT_EQ(a.size(), b.size());
    double d = 0;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
      d = std::max(d, static_cast<double>(std::abs(a[i] - b[i])));
    }
    return d;
  }

  /// The tiny GPT-2 scenario (tests/data/exec/gpt2-tiny.json) with `patch`, beside its config.
  std::string gpt2_scenario(const json& patch = json::object()) {
    const fs::path data = fs::path(DDPSIM_TEST_DATA_DIR) / "exec";
    fs::copy_file(data / "gpt2-tiny-config.json", dir_ / "gpt2-tiny-config.json",
                  fs::copy_options::overwrite_existing);
    std::ifstream f(data / "gpt2-tiny.json");
    json doc = json::parse(f);
    doc.merge_patch(patch);
    const fs::path p = dir_ / "gpt2.json";
    std::ofstream(p) << doc.dump(1);
    return p.string();
  }

  fs::path dir_;
  json base_;
};

// 32*256 + 256 + 256*256 + 256 + 256*8 + 8 parameters of mlp-small.json.
constexpr std::size_t kParams = 76296;

TEST_F(Exec, TwoRanksMatchOneRankWithTwiceTheBatch) {
  // DDP averages the two ranks' gradients of 16 samples each; one rank with 32 samples (the
  // same samples: DistributedSampler interleaves them) computes the same mean gradient up to
  // float summation order. Momentum SGD for 4 steps keeps the difference at rounding level.
  const std::string s = scenario();
  const auto one = params(s + " --nproc 1 --per-gpu-batch 32 --steps 3", "one.bin");
  ASSERT_EQ(one.size(), kParams);
  const auto two = params(s + " --nproc 2 --per-gpu-batch 16 --steps 3", "two.bin");
  const auto two_serial =
      params(s + " --nproc 2 --per-gpu-batch 16 --steps 3 --overlap false", "two-serial.bin");
  const auto two_accum =
      params(s + " --nproc 2 --per-gpu-batch 8 --grad-accumulation 2 --steps 3", "accum.bin");
  EXPECT_LT(max_abs_diff(one, two), 1e-5);
  EXPECT_LT(max_abs_diff(one, two_serial), 1e-5);
  EXPECT_LT(max_abs_diff(one, two_accum), 1e-5);
  // The comparison is not vacuous: one more step moves the parameters far more than that.
  const auto more = params(s + " --nproc 1 --per-gpu-batch 32 --steps 4", "more.bin");
  EXPECT_GT(max_abs_diff(one, more), 1e-3);
}

TEST_F(Exec, Gpt2TwoRanksMatchOneRankWithTwiceTheBatch) {
  // The transformer under DDP: 2 ranks of 4 sequences (several buckets at a 0.1 MB cap, the
  // tied wte in the last one) equal 1 rank of 8 after 3 momentum-SGD steps, with overlap, without,
  // and with 2 micro-batches under no_sync; ZeRO-1 likewise.
  const std::string s = gpt2_scenario();
  const auto one = params(s + " --nproc 1 --per-gpu-batch 8 --steps 3", "one.bin");
  ASSERT_EQ(one.size(), 6144u + 2048u + 2u * (49152u + 832u) + 128u);
  const auto two = params(s + " --nproc 2 --per-gpu-batch 4 --steps 3", "two.bin");
  const auto two_serial =
      params(s + " --nproc 2 --per-gpu-batch 4 --steps 3 --overlap false", "serial.bin");
  const auto two_accum =
      params(s + " --nproc 2 --per-gpu-batch 2 --grad-accumulation 2 --steps 3", "accum.bin");
  const auto zero1 = params(gpt2_scenario({{"parallelism", {{"strategy", "zero1"}}}}) +
                                " --nproc 2 --per-gpu-batch 4 --steps 3",
                            "zero1.bin");
  EXPECT_LT(max_abs_diff(one, two), 1e-5);
  EXPECT_LT(max_abs_diff(one, two_serial), 1e-5);
  EXPECT_LT(max_abs_diff(one, two_accum), 1e-5);
  EXPECT_LT(max_abs_diff(one, zero1), 1e-5);
  const auto more = params(s + " --nproc 1 --per-gpu-batch 8 --steps 4", "more.bin");
  EXPECT_GT(max_abs_diff(one, more), 1e-3);
}

TEST_F(Exec, Gpt2BucketsAreTheSimulatorsAndLossFalls) {
  const fs::path out = dir_ / "r.json";
  ASSERT_EQ(run(gpt2_scenario() + " --steps 8 --out " + out.string()).code, 0);
  std::ifstream f(out);
  const json res = json::parse(f).at("results").at(0);
  // DDP's buckets at a 0.1 MiB cap (104,858 bytes), gradients in reverse order, a bucket closed
  // once it reaches the cap: ln_f 512 + block 1's mlp.c_proj 256 + 65,536 and mlp.c_fc 1,024 +
  // 65,536 = 132,864 bytes; block 1's ln_2, attention and ln_1 (67,584) with block 0's
  // mlp.c_proj (133,376); block 0's mlp.c_fc, ln_2 and attention (133,632); block 0's ln_1, wpe
  // 8,192 and wte 24,576 (also the tied lm_head, bucketed once) = 33,280. ddpsim predict gives
  // the same four sizes for this scenario.
  ASSERT_EQ(res.at("bucket_count").get<int>(), 4);
  const std::vector<std::int64_t> bytes = {132864, 133376, 133632, 33280};
  for (std::size_t b = 0; b < bytes.size(); ++b) {
    EXPECT_EQ(res.at("buckets").at(b).at("bytes").get<std::int64_t>(), bytes[b]) << b;
  }
  EXPECT_LT(res.at("loss_last").get<double>(), res.at("loss_first").get<double>());
}

TEST_F(Exec, Gpt2RefusesDropoutAndFusedAttention) {
  std::ofstream(dir_ / "drop-config.json") << R"({"model_type": "gpt2", "n_embd": 64,
    "n_head": 4, "n_layer": 2, "n_positions": 32, "vocab_size": 96})";
  const RunResult drop = run(gpt2_scenario({{"model", {{"hf_config", "drop-config.json"}}}}));
  EXPECT_EQ(drop.code, 2);
  EXPECT_NE(drop.err.find("runs no dropout"), std::string::npos) << drop.err;
  const RunResult sdpa = run(gpt2_scenario({{"model", {{"attention", "sdpa"}}}}));
  EXPECT_EQ(sdpa.code, 2);
  EXPECT_NE(sdpa.err.find("\"attention\": \"eager\""), std::string::npos) << sdpa.err;
}

TEST_F(Exec, RanksStartedLikeSrunTrainAsTheLocalLaunch) {
  // Two processes with the variables srun gives the tasks of one step on one node (no launcher
  // of ours): the same parameters as the run that starts its own ranks.
  const std::string s = gpt2_scenario();
  const auto local = params(s + " --nproc 2 --steps 2", "local.bin");
  const fs::path out = dir_ / "srun.bin", store = dir_ / "store";
  fs::create_directories(store);
  std::string cmd = "(";
  for (int r = 0; r < 2; ++r) {
    cmd += "SLURM_PROCID=" + std::to_string(r) + " SLURM_LOCALID=" + std::to_string(r) +
           " SLURM_STEP_ID=0 SLURM_JOB_ID=1 SLURM_STEP_NUM_TASKS=2 SLURM_NODEID=0"
           " SLURM_STEP_TASKS_PER_NODE=2 DDPSIM_STORE_DIR=" +
           store.string() + " " + DDPSIM_EXEC_BIN + " " + s + " --steps 2 --dump-params " +
           out.string() + " >> " + (dir_ / "srun.out").string() + " 2>&1 & ";
  }
  cmd += "wait)";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream f(out, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), {});
  std::vector<float> srun(bytes.size() / sizeof(float));
  std::memcpy(srun.data(), bytes.data(), srun.size() * sizeof(float));
  EXPECT_EQ(max_abs_diff(local, srun), 0.0);
  // Each process was one rank (rank 0 alone reports, unprefixed), not a launcher of its own.
  std::ifstream o(dir_ / "srun.out");
  const std::string text((std::istreambuf_iterator<char>(o)), {});
  EXPECT_NE(text.find("ddp on 2 ranks"), std::string::npos) << text;
  EXPECT_EQ(text.find("[rank"), std::string::npos) << text;
  std::size_t reports = 0;
  for (std::size_t at = text.find("median of"); at != std::string::npos;
       at = text.find("median of", at + 1)) {
    ++reports;
  }
  EXPECT_EQ(reports, 1u) << text;
}

TEST_F(Exec, CudaBackendRefusesWhatItCannotRun) {
  const json amp = {{"training", {{"precision", "amp_bf16"}, {"optimizer", "adamw"}}}};
  const RunResult two = run(gpt2_scenario(amp) + " --backend cuda");
  EXPECT_EQ(two.code, 2);
  EXPECT_NE(two.err.find("one rank on one GPU"), std::string::npos) << two.err;
  const RunResult fp32 = run(gpt2_scenario() + " --backend cuda --nproc 1");
  EXPECT_EQ(fp32.code, 2);
  EXPECT_NE(fp32.err.find("trains amp_bf16"), std::string::npos) << fp32.err;
  const RunResult mlp = run(scenario(amp) + " --backend cuda --nproc 1");
  EXPECT_EQ(mlp.code, 2);
  EXPECT_NE(mlp.err.find("trains GPT-2 configs"), std::string::npos) << mlp.err;
  const RunResult cpu_amp = run(gpt2_scenario(amp) + " --nproc 1");
  EXPECT_EQ(cpu_amp.code, 2);
  EXPECT_NE(cpu_amp.err.find("trains in fp32"), std::string::npos) << cpu_amp.err;
}

TEST_F(Exec, CudaBackendWithoutADeviceSaysSoInOneLine) {
  // Here (no GPU) exit 77 and one line naming why; on a GPU machine a results file.
  const fs::path out = dir_ / "cuda.json";
  const RunResult r =
      run(gpt2_scenario({{"training", {{"precision", "amp_bf16"}, {"optimizer", "adamw"}}}}) +
          " --backend cuda --nproc 1 --steps 2 --out " + out.string());
  if (r.code == 0) {
    std::ifstream f(out);
    const json res = json::parse(f).at("results").at(0);
    EXPECT_GT(res.at("step_time_s").get<double>(), 0);
    EXPECT_GT(res.at("peak_memory_bytes").get<double>(), 0);
    return;
  }
  EXPECT_EQ(r.code, 77) << r.err;
  EXPECT_TRUE(r.err.find("no CUDA device") != std::string::npos ||
              r.err.find("built without CUDA") != std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(Exec, Zero1MatchesOneRankWithTwiceTheBatch) {
  // ZeRO-1: reduce-scatter of the averaged gradients, each rank updates its half of the
  // (padded) parameters with its half of the momentum buffer, all-gather: the same update.
  const auto one = params(scenario() + " --nproc 1 --per-gpu-batch 32 --steps 3", "one.bin");
  const std::string s = scenario({{"parallelism", {{"strategy", "zero1"}}}}, "zero1.json");
  const fs::path out = dir_ / "zero1.json.out";
  const auto two = params(s + " --nproc 2 --steps 3 --out " + out.string(), "zero1.bin");
  EXPECT_LT(max_abs_diff(one, two), 1e-5);
  std::ifstream f(out);
  const json res = json::parse(f).at("results").at(0);
  EXPECT_EQ(res.at("strategy"), "zero1");
  EXPECT_EQ(res.at("buckets").at(0).at("bytes"), 4 * kParams);  // 76296 is even: no padding
}

TEST_F(Exec, HalfPrecisionHooksStayCloseToFp32) {
  const auto one = params(scenario() + " --nproc 1 --per-gpu-batch 32 --steps 3", "one.bin");
  for (const char* hook : {"fp16", "bf16"}) {
    const std::string s =
        scenario({{"parallelism", {{"comm_hook", hook}}}}, std::string(hook) + ".json");
    const auto two = params(s + " --nproc 2 --steps 3", std::string(hook) + ".bin");
    // bf16 keeps 8 bits of mantissa: relative error 2^-9 per gradient, lr 0.05, 4 steps.
    EXPECT_LT(max_abs_diff(one, two), 1e-3) << hook;
    EXPECT_GT(max_abs_diff(one, two), 0.0) << hook << ": the hook changed nothing";
  }
}

TEST_F(Exec, ResultsAndTraceAreConsistent) {
  const fs::path out = dir_ / "r.json", trace = dir_ / "t.json";
  const RunResult r =
      run(scenario() + " --steps 3 --out " + out.string() + " --trace " + trace.string());
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream f(out);
  const json doc = json::parse(f);
  const json& res = doc.at("results").at(0);
  EXPECT_EQ(res.at("gpus"), 2);
  EXPECT_EQ(res.at("global_batch"), 32);
  EXPECT_EQ(res.at("param_count"), kParams);
  // bucket_cap_mb 0.1 (104857 B): reverse order fc2.bias, fc2.weight, fc1.bias, fc1.weight
  // close bucket 0 at 4*(8+2048+256+65536) = 271392 B; fc0.bias + fc0.weight = 33792 B.
  ASSERT_EQ(res.at("bucket_count"), 2);
  EXPECT_EQ(res.at("buckets")[0].at("bytes"), 271392);
  EXPECT_EQ(res.at("buckets")[1].at("bytes"), 33792);
  EXPECT_LT(res.at("loss_last").get<double>(), res.at("loss_first").get<double>());
  const auto& steps = res.at("steps");
  ASSERT_EQ(steps.size(), 4u);                   // one warm-up step + 3 measured
  EXPECT_EQ(steps[0].at("buckets").size(), 1u);  // PyTorch's first iteration: one bucket
  EXPECT_TRUE(steps[0].at("warmup").get<bool>());
  for (std::size_t i = 1; i < steps.size(); ++i) {
    const json& s = steps[i];
    // Forward, backward, the wait for communication and the optimizer are disjoint intervals
    // of the step.
    EXPECT_LE(s.at("forward_time_s").get<double>() + s.at("backward_time_s").get<double>() +
                  s.at("exposed_comm_s").get<double>() + s.at("optimizer_time_s").get<double>(),
              s.at("step_time_s").get<double>());
    double prev_end = 0;
    for (const json& b : s.at("buckets")) {
      EXPECT_LE(b.at("ready_s").get<double>(), b.at("start_s").get<double>());
      EXPECT_LE(prev_end, b.at("start_s").get<double>());  // one stream, in order
      EXPECT_LE(b.at("start_s").get<double>(), b.at("end_s").get<double>());
      prev_end = b.at("end_s").get<double>();
    }
    EXPECT_EQ(s.at("rank_step_time_s").size(), 2u);
  }
  std::ifstream tf(trace);
  const json t = json::parse(tf);
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> lanes;
  for (const json& e : t.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const double ts = e.at("ts").get<double>();
    lanes[{e.at("pid").get<int>(), e.at("tid").get<int>()}].push_back(
        {ts, ts + e.at("dur").get<double>()});
  }
  EXPECT_EQ(lanes.size(), 4u);  // ranks 0 and 1, compute and communication
  for (auto& [lane, v] : lanes) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) EXPECT_GE(v[i].first, v[i - 1].second - 1e-3);
  }
}

TEST_F(Exec, OverlapOffLaunchesAfterBackward) {
  const fs::path out = dir_ / "r.json";
  ASSERT_EQ(run(scenario() + " --steps 2 --overlap false --out " + out.string()).code, 0);
  std::ifstream f(out);
  const json res = json::parse(f).at("results").at(0);
  const auto& b = res.at("buckets");
  EXPECT_GE(b[0].at("start_s").get<double>(), b[1].at("ready_s").get<double>());
  EXPECT_EQ(res.at("overlap"), false);
}

TEST_F(Exec, CrossEntropyLossFalls) {
  const fs::path out = dir_ / "r.json";
  ASSERT_EQ(run(scenario() + " --steps 6 --loss cross_entropy --out " + out.string()).code, 0);
  std::ifstream f(out);
  const json res = json::parse(f).at("results").at(0);
  EXPECT_LT(res.at("loss_last").get<double>(), res.at("loss_first").get<double>());
}

TEST_F(Exec, KilledRankFailsTheRunWithoutResults) {
  const fs::path out = dir_ / "r.json";
  const RunResult r =
      run(scenario() + " --steps 4 --out " + out.string(), "DDPSIM_EXEC_FAULT=kill:1:3");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("rank 1 killed by signal 9"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(Exec, VanishedPeerGivesEveryOtherRankAnError) {
  // Rank 1 exits 0 mid-run (its launcher sees nothing wrong): rank 0's next all-reduce must fail
  // with a message, not hang, and the run must not write results.
  const fs::path out = dir_ / "r.json";
  const RunResult r = run(scenario() + " --steps 4 --timeout-s 10 --out " + out.string(),
                          "DDPSIM_EXEC_FAULT=vanish:1:3");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("ddpsim-exec: rank 0: gloo"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rank 0 exited with status 1"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(Exec, RefusesWhatItCannotRun) {
  const RunResult preset = run(scenario({{"model", {{"mlp", nullptr}, {"preset", "resnet50"}}}}));
  EXPECT_EQ(preset.code, 2);
  EXPECT_NE(preset.err.find("GPT-2 \"hf_config\" transformers"), std::string::npos) << preset.err;
  const RunResult zero = run(scenario({{"parallelism", {{"strategy", "zero3"}}}}));
  EXPECT_EQ(zero.code, 2);
  EXPECT_NE(zero.err.find("strategy zero3"), std::string::npos) << zero.err;
  const RunResult big =
      run(scenario({{"model", {{"mlp", {{"widths", {65536, 65536, 65536, 65536}}}}}},
                    {"cluster", {{"gpus", 8}}}}));
  EXPECT_EQ(big.code, 2);
  EXPECT_NE(big.err.find("GiB of host memory"), std::string::npos) << big.err;
  const RunResult sweep = run(scenario({{"sweep", {{"cluster.gpus", {1, 2}}}}}));
  EXPECT_EQ(sweep.code, 2);
  EXPECT_NE(sweep.err.find("one configuration"), std::string::npos) << sweep.err;
}

}  // namespace
