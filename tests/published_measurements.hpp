// published_measurements.hpp: scenarios/data/published-measurements.json as the simulator tests
// read it (DDPSIM_PUBLISHED_JSON comes from tests/CMakeLists.txt); one definition for the test
// files of a binary, so that they compile together (unity build).
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace ddpsim::test_data {

inline nlohmann::json published() {
  std::ifstream in(DDPSIM_PUBLISHED_JSON);
  EXPECT_TRUE(in.good()) << DDPSIM_PUBLISHED_JSON;
  return nlohmann::json::parse(in);
}

}  // namespace ddpsim::test_data
