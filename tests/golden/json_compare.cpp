// ddpsim_json_compare: compares two ddpsim results documents for the golden tests.
//
//   ddpsim_json_compare EXPECTED ACTUAL         exit 0 if equal, 1 on a mismatch, 2 on bad input
//   ddpsim_json_compare --strip-context IN OUT  writes IN without its top-level "context" to OUT
//
// The top-level "context" block (date, host, git revision, library versions) changes on every
// run, so it is ignored. Everything else must match: objects the same keys, arrays the same
// length, strings, booleans and integers exactly, floating-point numbers within a relative
// tolerance of 1e-9 (absolute 1e-15 near zero). The tolerance absorbs a different compiler or
// libm rounding the last few bits, not a changed formula: a modelling change moves results by
// far more than 1e-9.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

using nlohmann::json;

constexpr double kRelTol = 1e-9;
constexpr double kAbsTol = 1e-15;
// Enough to see the pattern of a change without drowning the ctest log.
constexpr int kMaxReported = 20;

json read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(path + ": not valid JSON: " + e.what());
  }
}

std::string show(const json& v) {
  std::string s = v.dump();
  if (s.size() > 200) s = s.substr(0, 200) + "...";
  return s;
}

const char* kind(const json& v) {
  if (v.is_number_float()) return "float";
  if (v.is_number_integer()) return "integer";  // signed and unsigned alike
  return v.type_name();
}

bool floats_close(double a, double b) {
  const double diff = std::fabs(a - b);
  return diff <= kAbsTol || diff <= kRelTol * std::max(std::fabs(a), std::fabs(b));
}

class Comparer {
 public:
  int mismatches() const { return mismatches_; }

  void compare(const json& e, const json& a, const json::json_pointer& ptr, bool top) {
    if (std::string(kind(e)) != kind(a)) {
      // An integer turning into a float (or back) changes the output format and is reported,
      // even when the values are equal.
      report(ptr, std::string("type ") + kind(e) + " " + show(e),
             std::string("type ") + kind(a) + " " + show(a));
      return;
    }
    if (e.is_object()) {
      for (const auto& [key, value] : e.items()) {
        if (top && key == "context") continue;
        if (!a.contains(key)) {
          report(ptr / key, show(value), "(missing)");
        } else {
          compare(value, a.at(key), ptr / key, false);
        }
      }
      for (const auto& [key, value] : a.items()) {
        if (top && key == "context") continue;
        if (!e.contains(key)) report(ptr / key, "(missing)", show(value));
      }
    } else if (e.is_array()) {
      if (e.size() != a.size()) {
        report(ptr, "array of " + std::to_string(e.size()) + " elements",
               "array of " + std::to_string(a.size()) + " elements");
        return;
      }
      for (std::size_t i = 0; i < e.size(); ++i) compare(e[i], a[i], ptr / i, false);
    } else if (e.is_number_float()) {
      const double x = e.get<double>();
      const double y = a.get<double>();
      if (!floats_close(x, y)) {
        std::ostringstream rel;
        rel.precision(3);
        rel << " (relative difference " << std::fabs(x - y) / std::max(std::fabs(x), std::fabs(y))
            << ")";
        report(ptr, show(e), show(a) + rel.str());
      }
    } else if (e.is_number_integer()) {
      // nlohmann keeps non-negative integers as unsigned after parsing but a program may
      // build them signed; compare the values, not the storage.
      const auto as_unsigned = [](const json& v, std::uint64_t& out) {
        if (v.is_number_unsigned()) {
          out = v.get<std::uint64_t>();
          return true;
        }
        const std::int64_t s = v.get<std::int64_t>();
        out = static_cast<std::uint64_t>(s);
        return s >= 0;
      };
      std::uint64_t x = 0, y = 0;
      const bool x_nonneg = as_unsigned(e, x);
      const bool y_nonneg = as_unsigned(a, y);
      const bool equal = x_nonneg == y_nonneg && x == y;
      if (!equal) report(ptr, show(e), show(a));
    } else if (e != a) {
      report(ptr, show(e), show(a));
    }
  }

 private:
  void report(const json::json_pointer& ptr, const std::string& expected,
              const std::string& actual) {
    ++mismatches_;
    if (mismatches_ > kMaxReported) return;
    const std::string where = ptr.empty() ? std::string("(root)") : ptr.to_string();
    std::cout << where << ":\n  expected: " << expected << "\n  actual:   " << actual << "\n";
  }

  int mismatches_ = 0;
};

int strip_context(const std::string& in, const std::string& out) {
  json doc = read_json(in);
  if (doc.is_object()) doc.erase("context");
  // Written beside the target and renamed, so an interrupted golden-update never leaves a
  // truncated expected file in the source tree.
  const std::string tmp = out + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error(tmp + ": cannot write");
    f << doc.dump(2) << "\n";
    if (!f.flush()) throw std::runtime_error(tmp + ": write failed");
  }
  std::filesystem::rename(tmp, out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 4 && std::string(argv[1]) == "--strip-context") {
      return strip_context(argv[2], argv[3]);
    }
    if (argc != 3) {
      std::cerr << "usage: ddpsim_json_compare EXPECTED ACTUAL\n"
                   "       ddpsim_json_compare --strip-context IN OUT\n";
      return 2;
    }
    const json expected = read_json(argv[1]);
    const json actual = read_json(argv[2]);
    Comparer c;
    c.compare(expected, actual, json::json_pointer(), true);
    if (c.mismatches() == 0) return 0;
    if (c.mismatches() > kMaxReported) {
      std::cout << "... and " << c.mismatches() - kMaxReported << " more\n";
    }
    std::cout << c.mismatches() << " mismatch(es) between " << argv[1] << " (expected) and "
              << argv[2] << " (actual)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "ddpsim_json_compare: " << e.what() << "\n";
    return 2;
  }
}
