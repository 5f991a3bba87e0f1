// The shared vocabulary of result files (model/run_context.hpp, model/atomic_file.hpp), of
// collectives (model/collective_op.hpp) and of sizes in messages (model/units.hpp human_bytes).
#include "model/run_context.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "model/atomic_file.hpp"
#include "model/collective_op.hpp"
#include "model/units.hpp"

namespace ddpsim::model {
namespace {

namespace fs = std::filesystem;

TEST(RunContext, BlockNamesToolRevisionHostDateAndLibraries) {
  const nlohmann::json c = run_context_json("ddpsim-test");
  EXPECT_EQ(c.at("tool"), "ddpsim-test");
  EXPECT_EQ(c.at("version"), DDPSIM_VERSION);
  EXPECT_EQ(c.at("git_revision"), git_revision());
  EXPECT_EQ(c.at("host"), host_name());
  EXPECT_TRUE(std::regex_match(c.at("date").get<std::string>(),
                               std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)")));
  for (const char* lib : {"nlohmann_json", "boost", "fmt"}) {
    EXPECT_TRUE(std::regex_match(c.at("libraries").at(lib).get<std::string>(),
                                 std::regex(R"(\d+\.\d+\.\d+)")))
        << lib;
  }
  EXPECT_TRUE(std::regex_match(utc_now("%Y%m%d"), std::regex(R"(\d{8})")));
  char buf[256] = {};
  ASSERT_EQ(gethostname(buf, sizeof buf - 1), 0);
  EXPECT_EQ(host_name(), buf[0] != 0 ? std::string(buf) : "unknown");
}

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ddpsim-atomic-" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  bool leftovers() const {
    for (const auto& e : fs::recursive_directory_iterator(dir_)) {
      if (e.path().string().find(".tmp.") != std::string::npos) return true;
    }
    return false;
  }
  fs::path dir_;
};

TEST_F(AtomicFile, WritesThroughAMissingFolderAndReplaces) {
  const std::string path = (dir_ / "a" / "b.json").string();
  write_file_atomic(path, "one");
  write_file_atomic(path, "two");
  std::ifstream f(path);
  std::string text;
  std::getline(f, text);
  EXPECT_EQ(text, "two");
  EXPECT_FALSE(leftovers());
}

TEST_F(AtomicFile, FailuresNameThePathAndTheReasonAndLeaveNothing) {
  fs::create_directories(dir_ / "folder");
  std::ofstream(dir_ / "file") << "x";
  try {  // onto a folder: refused before anything is written (model/atomic_file.hpp)
    write_file_atomic((dir_ / "folder").string(), "x");
    FAIL();
  } catch (const FileWriteError& e) {
    EXPECT_EQ(e.path(), (dir_ / "folder").string());
    EXPECT_EQ(e.reason(), "it is a folder, not a regular file");
  }
  try {  // into a "folder" that is a file
    write_file_atomic((dir_ / "file" / "x.json").string(), "x");
    FAIL();
  } catch (const FileWriteError& e) {
    EXPECT_EQ(e.reason(), (dir_ / "file").string() + " is not a folder");
  }
  EXPECT_FALSE(leftovers());
  try {
    check_writable((dir_ / "folder").string());
    FAIL();
  } catch (const FileWriteError& e) {
    EXPECT_EQ(e.reason(), "it is a folder, not a regular file");
  }
  EXPECT_NO_THROW(check_writable((dir_ / "new.json").string()));
  EXPECT_FALSE(fs::exists(dir_ / "new.json"));
  EXPECT_FALSE(leftovers());
}

TEST(CollectiveOp, NamesAndBusFactorsAsNcclTests) {
  // nccl-tests PERFORMANCE.md: busbw = algbw x 2(n-1)/n (all-reduce), (n-1)/n (reduce-scatter,
  // all-gather), 1 (broadcast, reduce).
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kReduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(ring_steps(CollectiveOp::kAllReduce, 8), 14.0);
  EXPECT_DOUBLE_EQ(ring_steps(CollectiveOp::kAllGather, 8), 7.0);
  for (CollectiveOp op : kMeasuredOps) EXPECT_EQ(parse_collective_op(collective_op_name(op)), op);
  EXPECT_STREQ(collective_op_name(CollectiveOp::kReduce), "reduce");
  EXPECT_FALSE(parse_collective_op("reduce").has_value());  // no profile measures it
  EXPECT_FALSE(parse_collective_op("allreduce").has_value());
}

TEST(Units, HumanBytesForMessages) {
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(64 * 1024), "64 KiB");
  EXPECT_EQ(human_bytes(1.5 * 1024 * 1024), "1.5 MiB");
  EXPECT_EQ(human_bytes(1234567890), "1.15 GiB");  // 1.1498 GiB, two decimals
  EXPECT_EQ(human_bytes(3.0 * 1024 * 1024 * 1024 * 1024 * 1024), "3072 TiB");
}

}  // namespace
}  // namespace ddpsim::model
