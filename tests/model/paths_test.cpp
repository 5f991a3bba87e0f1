// Where the presets are looked for (model/paths.hpp): the installed layout first, then a
// scenarios/ folder up the tree, then the folders baked in at configure time.
#include "model/paths.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "model/error.hpp"

namespace ddpsim::model {
namespace {

namespace fs = std::filesystem;

TEST(DataDirCandidates, InstalledLayoutComesBeforeScenariosUpTheTree) {
  const auto c = data_dir_candidates("/opt/work/prefix/bin/app");
  ASSERT_EQ(c.size(), 7u);
  EXPECT_EQ(c[0], fs::path("/opt/work/prefix/share/ddpsim"));
  EXPECT_EQ(c[1], fs::path("/opt/work/prefix/bin/scenarios"));
  EXPECT_EQ(c[2], fs::path("/opt/work/prefix/scenarios"));
  EXPECT_EQ(c[3], fs::path("/opt/work/scenarios"));
  EXPECT_EQ(c[4], fs::path("/opt/scenarios"));
  // Then the configured <prefix>/share/ddpsim and, last, the source tree.
  EXPECT_EQ(c[c.size() - 2].filename(), "ddpsim");
  EXPECT_EQ(c.back(), fs::path(DDPSIM_SCENARIO_DIR));
}

TEST(DataDirCandidates, WithoutABinaryOnlyTheConfiguredFolders) {
  const auto c = data_dir_candidates("");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c.back(), fs::path(DDPSIM_SCENARIO_DIR));
}

TEST(DataDir, EnvironmentWinsAndMustHoldPresets) {
  const fs::path dir =
      fs::temp_directory_path() / ("ddpsim-paths-test-" + std::to_string(getpid()));
  fs::create_directories(dir / "models");
  ASSERT_EQ(setenv("DDPSIM_DATA_DIR", dir.c_str(), 1), 0);
  EXPECT_THROW((void)data_dir(), Error);  // models/ alone is not a data dir
  fs::create_directories(dir / "hardware");
  EXPECT_EQ(data_dir(), dir);
  unsetenv("DDPSIM_DATA_DIR");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ddpsim::model
