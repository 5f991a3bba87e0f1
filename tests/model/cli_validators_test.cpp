// The range checks of every program's command line (model/cli_validators.hpp), through a real
// CLI11 parser: what is accepted, and the one line a refusal reads.
#include "model/cli_validators.hpp"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace ddpsim::model {
namespace {

// Parses `value` for an option --x checked by `v`; returns CLI11's message ("" when accepted).
template <class T>
std::string parse(const CLI::Validator& v, const std::string& value, T* out = nullptr) {
  CLI::App app;
  T x{};
  app.add_option("--x", x)->check(v);
  std::vector<std::string> args = {"--x", value};
  std::vector<char*> argv = {const_cast<char*>("prog")};
  for (auto& a : args) argv.push_back(a.data());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  if (out) *out = x;
  return "";
}

// Whole decimal integers in the range; 1e3 is refused as not an integer (CLI11's Range said
// "Value 1e3 not in range 1 to 10000000", which it is), and so are fractions and trailing text.
TEST(CliValidators, IntegerInNamesWhatWasGiven) {
  std::int64_t got = 0;
  EXPECT_EQ(parse<std::int64_t>(integer_in(1, 10'000'000), "1000", &got), "");
  EXPECT_EQ(got, 1000);
  EXPECT_EQ(parse<std::int64_t>(integer_in(1, 10'000'000), "1e3"),
            "--x: expected an integer from 1 to 10000000, got 1e3");
  EXPECT_EQ(parse<std::int64_t>(integer_in(1, 64), "65"),
            "--x: expected an integer from 1 to 64, got 65");
  EXPECT_EQ(parse<std::int64_t>(integer_in(0, 10), "2.5"),
            "--x: expected an integer from 0 to 10, got 2.5");
  EXPECT_EQ(parse<std::int64_t>(integer_in(0, 10), "3x"),
            "--x: expected an integer from 0 to 10, got 3x");
  EXPECT_EQ(parse<std::int64_t>(integer_in(0, 10), "99999999999999999999"),
            "--x: expected an integer from 0 to 10, got 99999999999999999999");
}

// Finite numbers in the range, decimal or exponent; NaN compared false both ways and passed
// CLI11's Range ("--min-seconds nan" was accepted and ignored), infinities too.
TEST(CliValidators, NumberInRefusesNanAndInfinity) {
  double got = 0;
  EXPECT_EQ(parse<double>(number_in(0.0, 3600.0), "1.5e2", &got), "");
  EXPECT_DOUBLE_EQ(got, 150.0);
  EXPECT_EQ(parse<double>(number_in(0.0, 3600.0), "nan"),
            "--x: expected a number from 0 to 3600, got nan");
  EXPECT_EQ(parse<double>(number_in(0.0, 3600.0), "inf"),
            "--x: expected a number from 0 to 3600, got inf");
  EXPECT_EQ(parse<double>(number_in(0.0, 0.999999), "1"),
            "--x: expected a number from 0 to 0.999999, got 1");
  EXPECT_EQ(parse<double>(positive_number(1e6), "0"),
            "--x: expected a number above 0 and at most 1000000, got 0");
  EXPECT_EQ(parse<double>(positive_number(1e6), "1e300"),
            "--x: expected a number above 0 and at most 1000000, got 1e300");
  EXPECT_EQ(parse<double>(positive_number(1e6), "0.001"), "");
}

// The value is echoed through one_line: an escape sequence in it cannot reach the terminal.
TEST(CliValidators, EchoedValueIsEscaped) {
  EXPECT_EQ(parse<std::int64_t>(integer_in(0, 10), "1\x1b[2J"),
            "--x: expected an integer from 0 to 10, got 1\\x1b[2J");
}

}  // namespace
}  // namespace ddpsim::model
