// import_test_helpers.hpp: what the importer tests (DeepSpeed configs, PyTorch knobs) check the
// same way: an InputError naming every expected part, and a warning line containing a part.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "model/error.hpp"

namespace ddpsim::model::import_test {

/// Runs `f`, expects an InputError whose message contains every one of `parts`.
template <typename F>
void expect_input_error(F f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg << " / " << p;
  }
}

/// True when one of `lines` contains `part`.
inline bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

}  // namespace ddpsim::model::import_test
