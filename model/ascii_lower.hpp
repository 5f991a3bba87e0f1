// ascii_lower.hpp: a string in ASCII lower case (names compared case-insensitively: GPU and
// fabric names in logs, collective names in traces); other bytes pass unchanged.
#pragma once

#include <string>

namespace ddpsim::model {

inline std::string ascii_lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

}  // namespace ddpsim::model
