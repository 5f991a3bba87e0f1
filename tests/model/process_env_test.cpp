// How a program starts ddpsim's Python (model/process_env.hpp): where the packages are looked
// for, the override, and the command with PYTHONPATH set for the children.
#include "model/process_env.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "model/error.hpp"

namespace ddpsim::model {
namespace {

namespace fs = std::filesystem;

// The source tree the tests were built from: the folder above scenarios/.
const std::string kSource = fs::path(DDPSIM_SCENARIO_DIR).parent_path().string();

TEST(ProcessEnv, SelfExeAndEnvOr) {
  EXPECT_EQ(fs::path(self_exe("x")).filename(), "ddpsim_model_tests");
  ASSERT_EQ(setenv("DDPSIM_PROCESS_ENV_TEST", "", 1), 0);
  EXPECT_EQ(env_or("DDPSIM_PROCESS_ENV_TEST", "fallback"), "fallback");  // empty counts as unset
  ASSERT_EQ(setenv("DDPSIM_PROCESS_ENV_TEST", "set", 1), 0);
  EXPECT_EQ(env_or("DDPSIM_PROCESS_ENV_TEST", "fallback"), "set");
  unsetenv("DDPSIM_PROCESS_ENV_TEST");
}

TEST(ProcessEnv, InstalledPackagesComeBeforeTheSourceTree) {
  const auto c = python_path_candidates("/opt/p/bin/ddpsim-validate");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0], "/opt/p/share/ddpsim/python");
  EXPECT_EQ(c[1], kSource + ":" + kSource + "/python");
  EXPECT_EQ(python_path_candidates(""), std::vector<std::string>{c[1]});
}

TEST(ProcessEnv, TheBuildFindsItsSourceTreeAndTheCommandSetsPythonPath) {
  unsetenv("DDPSIM_PYTHONPATH");
  // This binary lies in the build tree, with no share/ddpsim/python above it.
  EXPECT_EQ(python_path(), kSource + ":" + kSource + "/python");
  const char* before = std::getenv("PYTHONPATH");
  const std::string inherited = before != nullptr ? before : "";
  const auto argv = torch_python_command("calibrate.torch.ddp_runner");
  ASSERT_EQ(argv.size(), 3u);
  EXPECT_EQ(argv[0], torch_python());
  EXPECT_EQ(argv[1], "-m");
  EXPECT_EQ(argv[2], "calibrate.torch.ddp_runner");
  const std::string want =
      kSource + ":" + kSource + "/python" + (inherited.empty() ? "" : ":" + inherited);
  EXPECT_EQ(std::string(std::getenv("PYTHONPATH")), want);
  (void)torch_python_command("calibrate.torch.torch_calibrate");  // a second child: not twice
  EXPECT_EQ(std::string(std::getenv("PYTHONPATH")), want);
}

TEST(ProcessEnv, OverrideMustHoldThePackage) {
  const fs::path dir =
      fs::temp_directory_path() / ("ddpsim-process-env-test-" + std::to_string(getpid()));
  fs::create_directories(dir / "calibrate" / "torch");
  ASSERT_EQ(setenv("DDPSIM_PYTHONPATH", (dir.string() + ":/nowhere").c_str(), 1), 0);
  EXPECT_THROW((void)python_path(), Error);  // calibrate/torch without __init__.py
  std::ofstream(dir / "calibrate" / "torch" / "__init__.py") << "\n";
  EXPECT_EQ(python_path(), dir.string() + ":/nowhere");
  unsetenv("DDPSIM_PYTHONPATH");
  fs::remove_all(dir);
}

TEST(ProcessEnv, TorchPythonFollowsTheEnvironment) {
  ASSERT_EQ(setenv("DDPSIM_TORCH_PYTHON", "/opt/py/bin/python3", 1), 0);
  EXPECT_EQ(torch_python(), "/opt/py/bin/python3");
  unsetenv("DDPSIM_TORCH_PYTHON");
  EXPECT_FALSE(torch_python().empty());
}

}  // namespace
}  // namespace ddpsim::model
