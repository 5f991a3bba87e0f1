// fuzz_common.hpp: what every libFuzzer target of ddpsim treats as a pass or a bug.
//
// A parser of outside input may reject an input only with ddpsim::Error (the one-line message
// the CLI prints with exit code 2). Any other exception (nlohmann::json's type_error, std::
// out_of_range, std::bad_alloc, ...) escaping the parser is a bug: the target aborts so that
// libFuzzer records the input as a crash. Crashes, leaks (ASan) and undefined behaviour (UBSan)
// are reported by the sanitizers the fuzz build enables.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "model/error.hpp"

namespace ddpsim::fuzz {

/// Parses bytes as JSON; nullopt for a syntax error (a rejected input, not a finding).
inline std::optional<nlohmann::json> parse_json(const std::uint8_t* data, std::size_t size) {
  auto doc = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return std::nullopt;
  return doc;
}

/// Runs `f`; ddpsim::Error is an accepted rejection, anything else aborts with its message.
template <typename F>
void expect_only_ddpsim_errors(F&& f) {
  try {
    f();
  } catch (const ddpsim::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: escaped exception (not ddpsim::Error): %s\n", e.what());
    std::abort();
  }
}

}  // namespace ddpsim::fuzz
