// test_data_dir.hpp: where the model and simulator tests read their data files (tests/data and
// its profile/ folder; DDPSIM_TEST_DATA_DIR comes from tests/CMakeLists.txt). One definition for
// every test file of a binary, so that the files can be compiled together (unity build).
#pragma once

#include <string>

namespace ddpsim::test_data {

inline const std::string kData = DDPSIM_TEST_DATA_DIR;
inline const std::string kProfileDir = kData + "/profile/";

}  // namespace ddpsim::test_data
