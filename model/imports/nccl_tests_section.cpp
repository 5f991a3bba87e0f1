// What the nccl-tests readers share (detail/nccl_tests_section.hpp).
#include "model/imports/detail/nccl_tests_section.hpp"

#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "model/collective_op.hpp"
#include "model/error.hpp"

namespace ddpsim::model::detail {

using nlohmann::json;

std::string dtype_of(const std::string& t) {
  static const std::map<std::string, std::string> m = {
      {"float", "float32"},     {"float32", "float32"}, {"half", "float16"}, {"float16", "float16"},
      {"bfloat16", "bfloat16"}, {"double", "float64"},  {"int8", "int8"},    {"uint8", "uint8"},
      {"int32", "int32"},       {"uint32", "uint32"},   {"int64", "int64"},  {"uint64", "uint64"}};
  auto it = m.find(t);
  return it == m.end() ? t : it->second;
}

std::optional<std::string> op_from_program(std::string prog) {
  prog = std::filesystem::path(prog).filename().string();
  const std::string suffix = "_perf";
  if (prog.size() > suffix.size() &&
      prog.compare(prog.size() - suffix.size(), suffix.size(), suffix) == 0) {
    prog.resize(prog.size() - suffix.size());
  }
  if (parse_collective_op(prog)) return prog;
  return std::nullopt;
}

std::string nccl_version_text(long code) {
  if (code <= 0) return "unknown";
  long major, minor, patch;
  if (code >= 10000) {
    major = code / 10000;
    minor = code / 100 % 100;
    patch = code % 100;
  } else {
    major = code / 1000;
    minor = code / 100 % 10;
    patch = code % 100;
  }
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

double call_time_us(double us, const std::string& file, const std::string& where,
                    const std::string& shown) {
  if (!(us > 0) || !(us <= 3.6e9)) {
    throw InputError(file, where, "a time above 0 and at most 3.6e9 us (an hour per call)", shown);
  }
  return us;
}

void SectionBuilder::add(const std::string& op, const std::string& dtype, const std::string& redop,
                         json row) {
  json& t = ops[op];
  if (!t.contains("rows")) {
    t["dtype"] = dtype;
    t["redop"] = redop;
    t["rows"] = json::array();
  }
  t["rows"].push_back(std::move(row));
}

json section(const SectionBuilder& b, int ranks, int nodes, const std::string& version,
             const std::string& source) {
  json s;
  s["backend"] = "nccl";
  s["version"] = version;
  s["ranks"] = ranks;
  s["nodes"] = nodes;
  s["transport"] = "nccl";
  s["source"] = source;
  s["ops"] = b.ops;
  return s;
}

void check_fittable(const json& c, const std::string& file) {
  if (c.at("ranks").get<int>() < 2) {
    throw InputError(file, "",
                     "an nccl-tests run on 2 or more ranks (a collective on one GPU moves no data)",
                     "1 rank");
  }
  for (const auto& [name, table] : c.at("ops").items()) {
    std::set<std::int64_t> sizes;
    for (const json& r : table.at("rows")) {
      sizes.insert(r.at("size_bytes").get<std::int64_t>());
      if (!(r.at("time_us").get<double>() > 0)) {
        throw InputError(
            file, "", "times > 0 for " + name,
            "0 us at " + std::to_string(r.at("size_bytes").get<std::int64_t>()) + " bytes");
      }
    }
    if (sizes.size() < 2) {
      throw InputError(file, "",
                       "a sweep of 2 or more message sizes (e.g. -b 8 -e 256M -f 2) to fit " + name,
                       "one size (" + std::to_string(*sizes.begin()) + " bytes)");
    }
  }
}

}  // namespace ddpsim::model::detail
