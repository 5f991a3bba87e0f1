// detail/import_reader.hpp (internal to model/): the typed reader both importers use
// (deepspeed_import.cpp, torch_import.cpp). Every error names the file and the JSON pointer;
// every key read is recorded as handled, warned about or deliberately ignored, so nothing is
// dropped silently.
#pragma once

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "model/error.hpp"
#include "model/imports/deepspeed_import.hpp"
#include "model/schema.hpp"

namespace ddpsim::model::detail {

using nlohmann::json;

inline std::string join_pointer(const std::string& parent, const std::string& key) {
  return parent + "/" + escape_pointer_token(key);
}

inline std::string shown(const json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

// Reads typed values out of one document, naming file and pointer in every error, and records
// what happened to each key so that nothing is dropped silently.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }

  [[noreturn]] void fail(const std::string& pointer, const std::string& expected,
                         const json& got) const {
    throw InputError(file_, pointer, expected, shown(got));
  }
  [[noreturn]] void fail_text(const std::string& pointer, const std::string& expected,
                              const std::string& got = {}) const {
    throw InputError(file_, pointer, expected, got);
  }

  void warn(const std::string& pointer, const std::string& what) {
    result.warnings.push_back(file_ + ": " + pointer + ": " + what);
  }
  void ignore(const std::string& pointer) { result.ignored.push_back(pointer); }

  const json& object_at(const json& parent, const std::string& key, const std::string& pointer) {
    const json& v = parent.at(key);
    if (!v.is_object()) fail(pointer, "an object", v);
    return v;
  }

  // An integer >= min. DeepSpeed's JSON often writes integers as 5e8: an integral double is
  // accepted. "auto" is the Hugging Face Trainer's placeholder and never reaches DeepSpeed.
  std::int64_t integer(const json& v, const std::string& pointer, std::int64_t min) const {
    if (v.is_string() && v.get<std::string>() == "auto") {
      fail_text(pointer,
                "an integer >= " + std::to_string(min) +
                    " (\"auto\" is filled in by the Hugging Face Trainer before DeepSpeed reads "
                    "the file; give the number it resolves to)",
                "\"auto\"");
    }
    if (v.is_number_integer()) {
      const auto i = v.get<std::int64_t>();
      if (i < min) fail(pointer, "an integer >= " + std::to_string(min), v);
      return i;
    }
    if (v.is_number_float()) {
      const double d = v.get<double>();
      if (std::isfinite(d) && d == std::floor(d) && d >= static_cast<double>(min) && d < 9.2e18) {
        return static_cast<std::int64_t>(d);
      }
    }
    fail(pointer, "an integer >= " + std::to_string(min), v);
  }

  double positive_number(const json& v, const std::string& pointer) const {
    if (v.is_string() && v.get<std::string>() == "auto") {
      fail_text(pointer,
                "a number > 0 (\"auto\" is filled in by the Hugging Face Trainer; give the "
                "number it resolves to)",
                "\"auto\"");
    }
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>())) {
      fail(pointer, "a number > 0", v);
    }
    return v.get<double>();
  }

  bool boolean(const json& v, const std::string& pointer) const {
    if (v.is_string() && v.get<std::string>() == "auto") {
      fail_text(pointer, "true or false (\"auto\" is filled in by the Hugging Face Trainer)",
                "\"auto\"");
    }
    if (!v.is_boolean()) fail(pointer, "true or false", v);
    return v.get<bool>();
  }

  std::string string(const json& v, const std::string& pointer) const {
    if (!v.is_string()) fail(pointer, "a string", v);
    return v.get<std::string>();
  }

  // Walks every key of `obj` that `handled` does not name: a warning for each (it may change
  // step time or memory and ddpsim does not model it), unless `no_effect` names it.
  void sweep_rest(const json& obj, const std::string& pointer, const std::set<std::string>& handled,
                  const std::set<std::string>& no_effect, const std::string& what) {
    for (const auto& [k, v] : obj.items()) {
      if (handled.count(k) != 0) continue;
      const std::string p = join_pointer(pointer, k);
      if (no_effect.count(k) != 0) {
        ignore(p);
      } else {
        warn(p, what);
      }
    }
  }

  std::string file_;
  ImportResult result;
};

inline constexpr const char* kNotModelled =
    "not modelled by ddpsim (it may change step time or memory); the prediction ignores it";

}  // namespace ddpsim::model::detail
