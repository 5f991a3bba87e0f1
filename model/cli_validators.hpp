// cli_validators.hpp: the range checks every program's command line shares (CLI11 validators).
//
// CLI11's own CLI::Range converts first and reports any failure as out of range ("--gpus: Value
// 1e3 not in range 1 to 10000000", although 1e3 is 1000), and passes NaN ("--min-seconds nan"
// compares false both ways). These say what was expected and what was given, refuse NaN and
// infinities, and are all a program needs:
//
//   app.add_option("--gpus", gpus)->check(model::integer_in(1, 10'000'000));
//   // --gpus 1e3  ->  "--gpus: expected an integer from 1 to 10000000, got 1e3"
//   app.add_option("--min-seconds", s)->check(model::number_in(0.0, 3600.0));
//   // --min-seconds nan  ->  "--min-seconds: expected a number from 0 to 3600, got nan"
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <system_error>

#include "model/error.hpp"

namespace ddpsim::model {

namespace detail {
inline std::string range_text(double lo, double hi) {
  const auto num = [](double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  return num(lo) + " to " + num(hi);
}

/// A validator accepting a whole finite number (decimal or exponent form) for which
/// `in_range(value)` holds; otherwise "expected a number <words>, got <input>".
template <class InRange>
CLI::Validator finite_number(const std::string& words, InRange in_range) {
  return CLI::Validator(
      [words, in_range](std::string& in) -> std::string {
        char* end = nullptr;
        const double v = in.empty() ? NAN : std::strtod(in.c_str(), &end);
        if (in.empty() || end != in.c_str() + in.size() || !std::isfinite(v) || !in_range(v)) {
          return "expected a number " + words + ", got " + one_line(in);
        }
        return {};
      },
      "NUMBER " + words);
}
}  // namespace detail

/// A whole decimal integer in [lo, hi] (no exponent, fraction or trailing text).
inline CLI::Validator integer_in(std::int64_t lo, std::int64_t hi) {
  const std::string range = std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& in) -> std::string {
        std::int64_t v = 0;
        const char* end = in.data() + in.size();
        const auto [ptr, ec] = std::from_chars(in.data(), end, v);
        if (in.empty() || ec != std::errc() || ptr != end || v < lo || v > hi) {
          return "expected an integer from " + range + ", got " + one_line(in);
        }
        return {};
      },
      "INT in [" + range + "]");
}

/// A finite number in [lo, hi] (decimal or exponent form: 1e3 is 1000; nan and inf refused).
inline CLI::Validator number_in(double lo, double hi) {
  return detail::finite_number("from " + detail::range_text(lo, hi),
                               [lo, hi](double v) { return v >= lo && v <= hi; });
}

/// A finite number above 0 and at most `hi` (a learning rate, a timeout).
inline CLI::Validator positive_number(double hi) {
  return detail::finite_number("above 0 and at most " + detail::range_text(0, hi).substr(5),
                               [hi](double v) { return v > 0 && v <= hi; });
}

}  // namespace ddpsim::model
