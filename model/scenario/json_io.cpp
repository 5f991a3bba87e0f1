#include "model/scenario/detail/json_io.hpp"

#include <filesystem>
#include <map>
#include <mutex>

#include "model/atomic_file.hpp"
#include "model/error.hpp"
#include "model/json_file.hpp"
#include "model/paths.hpp"
#include "model/scenario/scenario_keys.hpp"

namespace ddpsim::model {

using nlohmann::json;

namespace detail {

namespace {

std::mutex g_file_cache_mutex;
std::map<std::string, json>& file_cache() {
  static std::map<std::string, json> cache;
  return cache;
}

// Preset files never change while a process runs; sweeps read them once.
}  // namespace

json read_cached(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(g_file_cache_mutex);
    auto it = file_cache().find(path);
    if (it != file_cache().end()) return it->second;
  }
  json doc = read_json_file(path);
  std::lock_guard<std::mutex> lock(g_file_cache_mutex);
  file_cache().emplace(path, doc);
  return doc;
}

double need_number(const json& o, const char* key, const std::string& file,
                   const std::string& pointer) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number()) {
    throw InputError(file, pointer + "/" + key, "a value (from a preset or given here)", "nothing");
  }
  return it->get<double>();
}

// A file named by a scenario key must exist; the error names the scenario's key, not the path.
std::string require_file(const std::string& file, const std::string& pointer,
                         const std::string& ref) {
  const auto path = resolve_relative(file, ref);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    // What the path is, not "does not exist" for a FIFO or /dev/zero (issue 42): the output
    // guard's words (model/atomic_file.hpp), "directory" as this message always said.
    const std::string kind = non_regular_kind(path.string());
    const std::string what = kind.empty()         ? " does not exist)"
                             : kind == "a folder" ? " is a directory)"
                                                  : " is " + kind + ")";
    throw InputError(file, pointer, "an existing file (paths are relative to the scenario file)",
                     "\"" + ref + "\" (" + path.string() + what);
  }
  return path.string();
}

// Loads the preset `name` of `kind` (gpus/links/system) and merges `section`'s other keys over it.

KeyTable reroot(const KeyTable& t, const std::string& prefix, std::string name) {
  KeyTable out;
  out.name = std::move(name);
  for (const KeySpec& k : t.keys) {
    if (k.pointer.rfind(prefix + "/", 0) == 0) {
      KeySpec c = k;
      c.pointer = k.pointer.substr(prefix.size());
      out.keys.push_back(std::move(c));
    }
  }
  return out;
}

const json& key_default(const std::string& pointer) {
  static const std::map<std::string, json> defaults = [] {
    std::map<std::string, json> m;
    for (const KeySpec& k : scenario_keys().keys) {
      if (!k.default_value.is_null()) m.emplace(k.pointer, k.default_value);
    }
    return m;
  }();
  const auto it = defaults.find(pointer);
  DDPSIM_ASSERT(it != defaults.end(), "scenario_keys() has no default for " + pointer);
  return it->second;
}

// ---- reading ---------------------------------------------------------------------------------

}  // namespace detail
}  // namespace ddpsim::model
