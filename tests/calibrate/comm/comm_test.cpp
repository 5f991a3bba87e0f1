// Tests of calibrate/comm: launcher variables, the launcher's failure handling, Gloo collectives
// across real processes, the nccl-tests vocabulary and the 16-bit float conversions.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "calibrate/comm/communicator.hpp"
#include "calibrate/comm/launcher.hpp"
#include "calibrate/comm/nccl_communicator.hpp"
#include "calibrate/comm/rank.hpp"
#include "calibrate/comm/sweep.hpp"
#include "model/error.hpp"

namespace ddpsim::comm {
using model::CollectiveOp;

namespace {

std::optional<RankInfo> from(const std::map<std::string, std::string>& vars) {
  return rank_from_env([&](const char* k) -> const char* {
    auto it = vars.find(k);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

TEST(RankFromEnv, NoLauncherMeansNoRank) { EXPECT_FALSE(from({{"HOME", "/root"}})); }

TEST(RankFromEnv, TorchrunVariables) {
  auto r = from({{"RANK", "3"},
                 {"WORLD_SIZE", "8"},
                 {"LOCAL_RANK", "1"},
                 {"LOCAL_WORLD_SIZE", "2"},
                 {"MASTER_ADDR", "10.0.0.1"},
                 {"MASTER_PORT", "1234"},
                 {"DDPSIM_STORE_DIR", "/tmp/s"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rank, 3);
  EXPECT_EQ(r->world_size, 8);
  EXPECT_EQ(r->local_rank, 1);
  EXPECT_EQ(r->local_world_size, 2);
  EXPECT_EQ(r->master_addr, "10.0.0.1");
  EXPECT_EQ(r->master_port, 1234);
  EXPECT_EQ(r->store_dir, "/tmp/s");
  EXPECT_EQ(r->bind_addr, "");  // several hosts: Gloo resolves this host's name
}

TEST(RankFromEnv, OpenMpiVariablesAndDerivedStore) {
  auto r = from({{"OMPI_COMM_WORLD_RANK", "1"},
                 {"OMPI_COMM_WORLD_SIZE", "2"},
                 {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                 {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                 {"OMPI_MCA_ess_base_jobid", "77"},
                 {"TMPDIR", "/scratch"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rank, 1);
  EXPECT_EQ(r->world_size, 2);
  EXPECT_EQ(r->local_rank, 1);
  EXPECT_EQ(r->store_dir, "/scratch/ddpsim-store-ompi-77");
  EXPECT_EQ(r->bind_addr, "127.0.0.1");  // one host, default master address
}

TEST(RankFromEnv, SlurmTaskOfAStep) {
  // srun -N 3 -n 7 with the step's tasks 3, 3, 1 (SLURM_STEP_TASKS_PER_NODE "3(x2),1"): task 6
  // is the only one on node 2.
  auto r = from({{"SLURM_PROCID", "6"},
                 {"SLURM_STEP_ID", "0"},
                 {"SLURM_JOB_ID", "4242"},
                 {"SLURM_NTASKS", "8"},
                 {"SLURM_STEP_NUM_TASKS", "7"},
                 {"SLURM_LOCALID", "0"},
                 {"SLURM_NODEID", "2"},
                 {"SLURM_STEP_TASKS_PER_NODE", "3(x2),1"},
                 {"DDPSIM_STORE_DIR", ""}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rank, 6);
  EXPECT_EQ(r->world_size, 7);  // the step's, not the job's
  EXPECT_EQ(r->local_rank, 0);
  EXPECT_EQ(r->local_world_size, 1);
  EXPECT_EQ(r->store_dir, "/tmp/ddpsim-store-slurm-4242.0");
  EXPECT_EQ(r->bind_addr, "");  // several hosts
  // One node, two tasks.
  r = from({{"SLURM_PROCID", "1"},
            {"SLURM_STEP_ID", "3"},
            {"SLURM_STEP_NUM_TASKS", "2"},
            {"SLURM_LOCALID", "1"},
            {"SLURM_NODEID", "0"},
            {"SLURM_STEP_TASKS_PER_NODE", "2"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->local_world_size, 2);
  EXPECT_EQ(r->bind_addr, "127.0.0.1");
}

TEST(RankFromEnv, SlurmBatchScriptIsNotARank) {
  // The batch script's environment has SLURM_PROCID=0 and the job's task count but no step.
  EXPECT_FALSE(from({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_JOB_ID", "9"}}));
}

TEST(RankFromEnv, SlurmMalformedTaskListIsNamed) {
  try {
    from({{"SLURM_PROCID", "0"},
          {"SLURM_STEP_ID", "0"},
          {"SLURM_STEP_NUM_TASKS", "2"},
          {"SLURM_STEP_TASKS_PER_NODE", "2(3)"}});
    FAIL() << "accepted a malformed task list";
  } catch (const ddpsim::Error& e) {
    EXPECT_NE(std::string(e.what()).find("SLURM_STEP_TASKS_PER_NODE: expected a Slurm task list"),
              std::string::npos)
        << e.what();
  }
}

TEST(RankFromEnv, SlurmTaskListIsBoundedBeforeItIsRead) {
  // The list comes from the environment and is bounded like a command-line value: every node of
  // a step runs at least one of its tasks, so a step of n tasks spans at most n nodes. "1(x2e9)"
  // for a step of 2 tasks names 2e9 nodes (expanded, 8 GB of integers and an abort); a repeat or
  // count that is not a positive int (from_chars out of range, 0) is malformed.
  auto error_of = [](const std::string& list, const std::string& tasks = "2") {
    try {
      from({{"SLURM_PROCID", "0"},
            {"SLURM_STEP_ID", "0"},
            {"SLURM_STEP_NUM_TASKS", tasks.c_str()},
            {"SLURM_NODEID", "0"},
            {"SLURM_STEP_TASKS_PER_NODE", list.c_str()}});
    } catch (const ddpsim::Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of("1(x2000000000)"),
            "environment variable SLURM_STEP_TASKS_PER_NODE: expected a Slurm task list of at "
            "most 2 nodes (one per task of the step, SLURM_STEP_NUM_TASKS or SLURM_NTASKS), got "
            "'1(x2000000000)'");
  // Read run by run, never expanded: the refusal is immediate.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.5);
  EXPECT_NE(error_of("1,1,1").find("of at most 2 nodes"), std::string::npos);
  for (const std::string bad : {"2(x99999999999)", "99999999999", "0", "2(x0)", "-1", "2(x-3)"}) {
    EXPECT_NE(error_of(bad).find("expected a Slurm task list like 2(x3),1, got '" + bad + "'"),
              std::string::npos)
        << bad << ": " << error_of(bad);
  }
  // At the bound: two nodes of one task each for a step of two tasks.
  auto r = from({{"SLURM_PROCID", "1"},
                 {"SLURM_STEP_ID", "0"},
                 {"SLURM_STEP_NUM_TASKS", "2"},
                 {"SLURM_LOCALID", "0"},
                 {"SLURM_NODEID", "1"},
                 {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->local_world_size, 1);
  // Fewer nodes than tasks is a step like any other (two tasks on one node of a 4-task step).
  EXPECT_EQ(error_of("2", "4"), "accepted");
}

TEST(RankFromEnv, TorchrunWinsAndBindAddressOverrides) {
  auto r = from({{"RANK", "0"},
                 {"WORLD_SIZE", "2"},
                 {"OMPI_COMM_WORLD_RANK", "1"},
                 {"OMPI_COMM_WORLD_SIZE", "2"},
                 {"DDPSIM_BIND_ADDR", "10.1.0.2"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rank, 0);
  EXPECT_EQ(r->local_world_size, 2);  // defaults to one host
  EXPECT_EQ(r->bind_addr, "10.1.0.2");
}

TEST(RankFromEnv, MalformedValuesAreErrors) {
  EXPECT_THROW(from({{"RANK", "x"}, {"WORLD_SIZE", "2"}}), Error);
  EXPECT_THROW(from({{"RANK", "2"}, {"WORLD_SIZE", "2"}}), Error);
  EXPECT_THROW(from({{"RANK", "0"}, {"WORLD_SIZE", "0"}}), Error);
  EXPECT_THROW(from({{"RANK", "1 "}, {"WORLD_SIZE", "2"}}), Error);
}

// Under torchrun without DDPSIM_STORE_DIR the rendezvous folder is $TMPDIR/ddpsim-store-JOB,
// which nothing had created: Gloo's FileStore failed with "enforce fail ... realpath" (issue 42).
// ensure_store_dir makes it (nested folders too); a file in its place is named in one line.
TEST(RankFromEnv, RendezvousFolderIsCreatedOrNamed) {
  const auto base =
      std::filesystem::temp_directory_path() / ("ddpsim-store-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(base);
  const auto dir = base / "a" / "ddpsim-store-127.0.0.1-29500";
  ensure_store_dir(dir.string());
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  ensure_store_dir(dir.string());  // already there: nothing to do
  const auto file = base / "file";
  std::ofstream(file) << "x";
  try {
    ensure_store_dir((file / "sub").string());
    ADD_FAILURE() << "a folder under a file was accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("rendezvous folder " + (file / "sub").string()), std::string::npos) << m;
    EXPECT_NE(m.find("set DDPSIM_STORE_DIR"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  std::filesystem::remove_all(base);
}

TEST(Vocabulary, BusBandwidthFactorsOfNcclTests) {
  // PERFORMANCE.md of nccl-tests: 2(n-1)/n, (n-1)/n, (n-1)/n, 1.
  EXPECT_DOUBLE_EQ(model::busbw_factor(CollectiveOp::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(model::busbw_factor(CollectiveOp::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(model::busbw_factor(CollectiveOp::kAllGather, 2), 0.5);
  EXPECT_DOUBLE_EQ(model::busbw_factor(CollectiveOp::kBroadcast, 16), 1.0);
  EXPECT_EQ(op_from_name("reduce_scatter"), CollectiveOp::kReduceScatter);
  EXPECT_STREQ(model::collective_op_name(CollectiveOp::kAllGather), "all_gather");
  EXPECT_THROW(op_from_name("allreduce"), Error);
}

TEST(HalfFloat, KnownBitPatterns) {
  // IEEE binary16: 1.0 = 0x3c00, largest finite 65504 = 0x7bff, smallest subnormal 2^-24 = 1.
  EXPECT_EQ(float_to_half(1.0f, HalfType::kFloat16), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f, HalfType::kFloat16), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f, HalfType::kFloat16), 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f, HalfType::kFloat16), 0x7c00);  // tie rounds to even: inf
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24), HalfType::kFloat16), 0x0001);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: to even (1.0); 1 + 3*2^-11 rounds up.
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11), HalfType::kFloat16), 0x3c00);
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11), HalfType::kFloat16), 0x3c02);
  EXPECT_FLOAT_EQ(half_to_float(0x3555, HalfType::kFloat16), 0.333251953125f);
  EXPECT_EQ(half_to_float(0x0001, HalfType::kFloat16), std::ldexp(1.0f, -24));
  // bfloat16 keeps float32's exponent: 1.0 = 0x3f80; 1 + 2^-8 ties to even, 1 + 3*2^-8 up.
  EXPECT_EQ(float_to_half(1.0f, HalfType::kBFloat16), 0x3f80);
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -8), HalfType::kBFloat16), 0x3f80);
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -8), HalfType::kBFloat16), 0x3f82);
  EXPECT_EQ(half_to_float(0xc040, HalfType::kBFloat16), -3.0f);
}

LaunchResult launch(int n, const std::string& mode, double timeout_s = 60,
                    std::vector<std::pair<std::string, std::string>> env = {}) {
  LaunchOptions o;
  o.timeout_s = timeout_s;
  o.grace_s = 1;
  o.extra_env = std::move(env);
  o.extra_env.emplace_back("MODE", mode);
  return launch_local_detailed(n, {DDPSIM_COMM_TEST_RANK}, o);
}

TEST(Launcher, AllRanksSucceed) {
  auto r = launch(3, "ok");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.failed_rank, -1);
  EXPECT_EQ(r.message, "");
}

TEST(Launcher, ForwardsOutputWithRankPrefix) {
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  auto r = launch(2, "print");
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(out.find("[rank 0] hello from 0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[rank 1] hello from 1\n"), std::string::npos) << out;
  EXPECT_NE(err.find("[rank 1] partial line from 1\n"), std::string::npos) << err;
}

// The ranks' MASTER_PORT: one port for the run, free on 127.0.0.1 when it started (not the fixed
// 29500 two runs at once would share), unless the launcher's own environment names one.
std::string ports_of_a_run() {
  testing::internal::CaptureStdout();
  const LaunchResult r = launch(2, "port");
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(r.exit_code, 0) << r.message;
  return out;
}

TEST(Launcher, RanksShareAFreePortUnlessOneIsSet) {
  ASSERT_EQ(unsetenv("MASTER_PORT"), 0);
  const std::string out = ports_of_a_run();
  const auto at = out.find("[rank 0] rank 0 port ");
  ASSERT_NE(at, std::string::npos) << out;
  const int port = std::atoi(out.c_str() + at + std::string("[rank 0] rank 0 port ").size());
  EXPECT_GT(port, 0) << out;
  EXPECT_NE(port, 29500) << "the fixed port: " << out;
  EXPECT_NE(out.find("[rank 1] rank 1 port " + std::to_string(port) + "\n"), std::string::npos)
      << out;

  ASSERT_EQ(setenv("MASTER_PORT", "40123", 1), 0);
  const std::string set = ports_of_a_run();
  unsetenv("MASTER_PORT");
  EXPECT_NE(set.find("[rank 0] rank 0 port 40123\n"), std::string::npos) << set;
  EXPECT_NE(set.find("[rank 1] rank 1 port 40123\n"), std::string::npos) << set;
}

TEST(Launcher, FreeLoopbackPortCanBeBound) {
  const int port = free_loopback_port();
  ASSERT_GT(port, 0);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << port;
  ::close(fd);
}

TEST(Launcher, FailedRankIsNamedAndTheOthersAreStopped) {
  // Rank 1 exits 3 while rank 0 sleeps forever: the launcher must stop rank 0 itself (a timeout
  // would report 124 and no rank).
  auto r = launch(2, "exit", 60, {{"FAIL_RANK", "1"}});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.failed_rank, 1);
  EXPECT_NE(r.message.find("rank 1 exited with status 3"), std::string::npos) << r.message;
}

TEST(Launcher, KilledRankIsReportedAsSignal) {
  auto r = launch(3, "kill", 60, {{"FAIL_RANK", "2"}});
  EXPECT_EQ(r.exit_code, 128 + 9);
  EXPECT_EQ(r.failed_rank, 2);
  EXPECT_NE(r.message.find("rank 2 killed by signal 9"), std::string::npos) << r.message;
}

TEST(Launcher, TimeoutStopsHangingRanks) {
  auto r = launch(2, "hang", 0.5);
  EXPECT_EQ(r.exit_code, 124);
  EXPECT_EQ(r.failed_rank, -1);
  EXPECT_NE(r.message.find("ranks still running: 0,1"), std::string::npos) << r.message;
}

TEST(Gloo, FourCollectivesAreExactAcrossTwoProcesses) {
  const auto out = std::filesystem::temp_directory_path() /
                   ("ddpsim-comm-test-" + std::to_string(::getpid()) + ".json");
  auto r = launch(2, "collectives", 120, {{"OUT", out.string()}});
  ASSERT_EQ(r.exit_code, 0) << r.message;
  std::ifstream f(out);
  ASSERT_TRUE(f) << out;
  const auto s = nlohmann::json::parse(f);
  std::filesystem::remove(out);
  EXPECT_EQ(s.at("backend"), "gloo");
  EXPECT_EQ(s.at("ranks"), 2);
  EXPECT_EQ(s.at("nodes"), 1);
  EXPECT_EQ(s.at("transport"), "tcp");
  for (const char* op : {"all_reduce", "reduce_scatter", "all_gather", "broadcast"}) {
    const auto& rows = s.at("ops").at(op).at("rows");
    // Sizes 8, 64, 512, 4096, 32768 B, each out of place and in place.
    ASSERT_EQ(rows.size(), 10u) << op;
    for (const auto& row : rows) {
      EXPECT_EQ(row.at("wrong"), 0) << op << " " << row.dump();
      const double t = row.at("time_us").get<double>();
      const double algbw = row.at("algbw_gbytes_per_s").get<double>();
      EXPECT_GT(t, 0);
      EXPECT_LE(row.at("time_us_min").get<double>(), t);
      EXPECT_GE(row.at("time_us_max").get<double>(), t);
      // The mean of the same calls lies between the fastest and the slowest.
      EXPECT_GE(row.at("time_us_mean").get<double>(), row.at("time_us_min").get<double>());
      EXPECT_LE(row.at("time_us_mean").get<double>(), row.at("time_us_max").get<double>());
      EXPECT_NEAR(algbw, row.at("size_bytes").get<double>() / t * 1e-3, 1e-9 * algbw);
      EXPECT_NEAR(row.at("busbw_gbytes_per_s").get<double>(),
                  algbw * model::busbw_factor(op_from_name(op), 2), 1e-12);
    }
    // nccl-tests counts: 8 B is 2 floats for all-reduce, 1 per rank for all-gather.
    EXPECT_EQ(rows[0].at("size_bytes"), 8);
    EXPECT_EQ(rows[0].at("count"),
              std::string(op) == "all_reduce" || std::string(op) == "broadcast" ? 2 : 1);
  }
}

TEST(Gloo, WrongResultIsCountedAndRefused) {
  // The sweep's checker sees three altered elements on rank 1 at 512 B (a test hook): the row
  // reports wrong = 3 and verify_sweep refuses the section naming op, size and count.
  auto r = launch(2, "wrong_result", 120);
  EXPECT_EQ(r.exit_code, 0) << r.message;
}

TEST(Sweep, SizesPowersOfTwoAndMidpoints) {
  SweepOptions o;
  o.max_bytes = 64;
  EXPECT_EQ(sweep_sizes(o), (std::vector<std::int64_t>{8, 16, 32, 64}));
  // x1.5: the geometric midpoints' neighbours 12, 24, 48 (96 > 64 is left out).
  o.size_offset = 1.5;
  EXPECT_EQ(sweep_sizes(o), (std::vector<std::int64_t>{12, 24, 48}));
  // Whole floats: 8 * 1.3 = 10.4 -> 8, 20.8 -> 20, 41.6 -> 40.
  o.size_offset = 1.3;
  EXPECT_EQ(sweep_sizes(o), (std::vector<std::int64_t>{8, 20, 40}));
  o.size_offset = 2.0;  // would repeat the next power: refused
  EXPECT_THROW(sweep_sizes(o), Error);
  o.size_offset = 0.5;
  EXPECT_THROW(sweep_sizes(o), Error);
  // The default sweep reaches 256 MiB; quick stops at 4 MiB.
  SweepOptions d;
  EXPECT_EQ(sweep_sizes(d).back(), std::int64_t{256} << 20);
  EXPECT_EQ(sweep_sizes(d).size(), 26u);  // 2^3 .. 2^28
  d.quick = true;
  EXPECT_EQ(sweep_sizes(d).back(), std::int64_t{4} << 20);
  // An explicit max_bytes is kept with quick (ddpsim validate sweeps quickly to its largest
  // bucket; a quick sweep that stopped at 4 MiB left 8-64 MiB buckets to extrapolation).
  d.max_bytes = std::int64_t{128} << 20;
  EXPECT_EQ(sweep_sizes(d).back(), std::int64_t{128} << 20);
}

TEST(Sweep, QuickTimesFiveCallsUnlessToldOtherwise) {
  SweepOptions q;
  q.quick = true;
  EXPECT_EQ(iters_at(q, 8), 5);
  q.iters = 15;  // ddpsim validate's calibrations: 15 up to 16 MiB, then 15 * 16 MiB / size
  EXPECT_EQ(iters_at(q, 8), 15);
  EXPECT_EQ(iters_at(q, std::int64_t{32} << 20), 8);  // ceil(7.5)
  EXPECT_EQ(iters_at(q, std::int64_t{128} << 20), 5);
}

TEST(Sweep, FewerCallsAboveSixteenMiB) {
  SweepOptions o;  // 20 timed calls up to 16 MiB, then 20 * 16 MiB / size, at least 5
  EXPECT_EQ(iters_at(o, 8), 20);
  EXPECT_EQ(iters_at(o, std::int64_t{16} << 20), 20);
  EXPECT_EQ(iters_at(o, std::int64_t{32} << 20), 10);
  EXPECT_EQ(iters_at(o, std::int64_t{48} << 20), 7);  // ceil(6.67)
  EXPECT_EQ(iters_at(o, std::int64_t{64} << 20), 5);
  EXPECT_EQ(iters_at(o, std::int64_t{256} << 20), 5);
  o.iters = 3;  // never more than asked
  EXPECT_EQ(iters_at(o, std::int64_t{256} << 20), 3);
}

TEST(Sweep, OversubscribedGlooHostIsNamed) {
  // Two busy threads per Gloo rank (caller, event loop): 2 ranks need 4 cores.
  const std::string two_on_two = oversubscription_note("gloo", 2, 2);
  EXPECT_NE(two_on_two.find("2 Gloo ranks x 2 busy threads"), std::string::npos) << two_on_two;
  EXPECT_NE(two_on_two.find("on 2 core(s)"), std::string::npos) << two_on_two;
  EXPECT_NE(two_on_two.find("4 cores give each rank two"), std::string::npos) << two_on_two;
  EXPECT_FALSE(oversubscription_note("gloo", 1, 1).empty());  // one rank, one core
  EXPECT_EQ(oversubscription_note("gloo", 2, 4), "");
  EXPECT_EQ(oversubscription_note("gloo", 1, 2), "");
  EXPECT_EQ(oversubscription_note("nccl", 8, 1), "");  // NCCL's threads wait on the GPU
  EXPECT_GE(usable_cores(), 1);
}

// A fake /proc/self/cgroup and cgroup mount under a temporary directory.
struct FakeCgroup {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("ddpsim-cgroup-" + std::to_string(::getpid()) + "-" +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  FakeCgroup() { std::filesystem::create_directories(dir / "root"); }
  ~FakeCgroup() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  void put(const std::string& rel, const std::string& text) const {
    const auto p = dir / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  }
  std::optional<double> quota() const {
    return cgroup_cpu_quota((dir / "cgroup").string(), (dir / "root").string());
  }
};

TEST(Sweep, CgroupV2QuotaIsQuotaOverPeriod) {
  FakeCgroup c;
  c.put("cgroup", "0::/job/a");
  c.put("root/job/a/cpu.max", "250000 100000");  // 250 ms of CPU per 100 ms: 2.5 CPUs
  ASSERT_TRUE(c.quota().has_value());
  EXPECT_DOUBLE_EQ(*c.quota(), 2.5);
  c.put("root/job/a/cpu.max", "max 100000");  // no limit
  EXPECT_FALSE(c.quota().has_value());
}

TEST(Sweep, CgroupV2FallsBackToTheMountTop) {
  // Without a private cgroup namespace the listed path is not under the container's mount.
  FakeCgroup c;
  c.put("cgroup", "0::/not/mounted/here");
  c.put("root/cpu.max", "50000 100000");  // half a CPU
  ASSERT_TRUE(c.quota().has_value());
  EXPECT_DOUBLE_EQ(*c.quota(), 0.5);
}

TEST(Sweep, CgroupV2ParentQuotaBindsTheChild) {
  // A slice limited to 1 CPU, its child unlimited ("max"): the child gets 1 CPU.
  FakeCgroup c;
  c.put("cgroup", "0::/slice/job");
  c.put("root/slice/cpu.max", "100000 100000");
  c.put("root/slice/job/cpu.max", "max 100000");
  ASSERT_TRUE(c.quota().has_value());
  EXPECT_DOUBLE_EQ(*c.quota(), 1.0);
  // The tighter of the two wins wherever it is: 0.25 CPU on the child.
  c.put("root/slice/job/cpu.max", "25000 100000");
  EXPECT_DOUBLE_EQ(*c.quota(), 0.25);
}

TEST(Sweep, CgroupV1JoinedControllerMount) {
  // v1 with only "cpu,cpuacct" mounted (no "cpu" link): 200000/100000 = 2 CPUs at the top.
  FakeCgroup c;
  c.put("cgroup", "2:cpu,cpuacct:/");
  c.put("root/cpu,cpuacct/cpu.cfs_quota_us", "200000");
  c.put("root/cpu,cpuacct/cpu.cfs_period_us", "100000");
  ASSERT_TRUE(c.quota().has_value());
  EXPECT_DOUBLE_EQ(*c.quota(), 2.0);
}

TEST(Sweep, CgroupV1QuotaAndTheSmallestWins) {
  FakeCgroup c;
  // This VM's layout (hybrid): v1 "cpu" unlimited, and an empty v2 line.
  c.put("cgroup", "4:memory:/x\n2:cpuacct:/\n1:cpu:/\n0::/");
  c.put("root/cpu/cpu.cfs_quota_us", "-1");
  c.put("root/cpu/cpu.cfs_period_us", "100000");
  EXPECT_FALSE(c.quota().has_value());
  // "cpu,cpuacct" names cpu; 300000/100000 = 3 CPUs; a v2 cpu.max of 1.5 CPUs is smaller.
  c.put("cgroup", "3:cpu,cpuacct:/j\n0::/");
  c.put("root/cpu/j/cpu.cfs_quota_us", "300000");
  c.put("root/cpu/j/cpu.cfs_period_us", "100000");
  ASSERT_TRUE(c.quota().has_value());
  EXPECT_DOUBLE_EQ(*c.quota(), 3.0);
  c.put("root/cpu.max", "150000 100000");
  ASSERT_TRUE(c.quota().has_value());
  EXPECT_DOUBLE_EQ(*c.quota(), 1.5);
  // "cpuacct" alone is not "cpu"; garbage and a missing file are no limit, not an error.
  c.put("cgroup", "2:cpuacct:/j");
  EXPECT_FALSE(c.quota().has_value());
  c.put("cgroup", "0::/");
  c.put("root/cpu.max", "lots 100000");
  EXPECT_FALSE(c.quota().has_value());
  EXPECT_FALSE(cgroup_cpu_quota((c.dir / "absent").string(), (c.dir / "root").string()));
}

TEST(Gloo, DeadPeerGivesAnErrorNotAHang) {
  // Rank 1 leaves cleanly right after the rendezvous; rank 0's all-reduce must throw
  // ddpsim::Error naming the op (rank 0 then exits 0). A hang would end in the 60 s timeout.
  auto r = launch(2, "peer_dies", 60);
  EXPECT_EQ(r.exit_code, 0) << r.message;
}

TEST(Gloo, SilentPeerTimesOut) {
  // Rank 1 is alive but never joins the all-reduce: the context timeout (300 ms) must end
  // rank 0's call with an error naming the op, long before rank 1 returns (900 ms).
  auto r = launch(2, "peer_hangs", 60, {{"TIMEOUT_MS", "300"}});
  EXPECT_EQ(r.exit_code, 0) << r.message;
}

TEST(CollectivesDriver, SweepsAndWritesTheSection) {
  const auto out = std::filesystem::temp_directory_path() /
                   ("ddpsim-collectives-" + std::to_string(::getpid()) + ".json");
  const std::string cmd = std::string(DDPSIM_COLLECTIVES_BIN) +
                          " --nproc 2 --op all_reduce -b 8 -e 4K -f 8 -w 1 -n 2 --json " +
                          out.string() + " > /dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::ifstream f(out);
  ASSERT_TRUE(f);
  const auto s = nlohmann::json::parse(f);
  std::filesystem::remove(out);
  EXPECT_EQ(s.at("ops").at("all_reduce").at("rows").size(), 8u);  // 8, 64, 512, 4096 B x 2
  EXPECT_FALSE(s.at("ops").contains("broadcast"));
}

TEST(CollectivesDriver, BadArgumentsExitTwo) {
  const std::string bin = DDPSIM_COLLECTIVES_BIN;
  for (const std::string args : {"--op allreduce", "-b 1x", "--nproc 0", "-b 64 -e 8"}) {
    const int status = std::system((bin + " " + args + " > /dev/null 2>&1").c_str());
    ASSERT_TRUE(WIFEXITED(status)) << args;
    EXPECT_EQ(WEXITSTATUS(status), 2) << args;
  }
}

TEST(Nccl, FailsCleanlyWithoutAGpu) {
  if (!nccl_built()) GTEST_SKIP() << "built without NCCL";
  RankInfo me;
  me.store_dir = std::filesystem::temp_directory_path().string();
  try {
    auto c = make_nccl(me, std::chrono::seconds(5));
    GTEST_SKIP() << "a GPU is present: covered by the gpu-labelled runs";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA device"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ddpsim::comm
