// What a program needs to start its helpers (model/process_env.hpp).
#include "model/process_env.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ddpsim::model {
namespace {

namespace fs = std::filesystem;

TEST(ProcessEnv, SelfExeAndEnvOr) {
  EXPECT_EQ(fs::path(self_exe("x")).filename(), "ddpsim_model_tests");
  ASSERT_EQ(setenv("DDPSIM_PROCESS_ENV_TEST", "", 1), 0);
  EXPECT_EQ(env_or("DDPSIM_PROCESS_ENV_TEST", "fallback"), "fallback");  // empty counts as unset
  ASSERT_EQ(setenv("DDPSIM_PROCESS_ENV_TEST", "set", 1), 0);
  EXPECT_EQ(env_or("DDPSIM_PROCESS_ENV_TEST", "fallback"), "set");
  unsetenv("DDPSIM_PROCESS_ENV_TEST");
}

}  // namespace
}  // namespace ddpsim::model
