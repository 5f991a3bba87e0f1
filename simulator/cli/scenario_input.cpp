// scenario_input.cpp: a scenario from a path or standard input, with --set overrides.
#include "simulator/cli/scenario_input.hpp"

#include <algorithm>
#include <iostream>
#include <iterator>

#include "model/error.hpp"

namespace ddpsim::cli {

using nlohmann::json;

namespace {

void apply_set(json& doc, const std::string& set) {
  const auto eq = set.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw Error(
        "--set: expected KEY=VALUE (KEY a JSON pointer like /training/per_gpu_batch or a "
        "dotted path like training.per_gpu_batch), got \"" +
        set + "\"");
  }
  std::string key = set.substr(0, eq);
  const std::string text = set.substr(eq + 1);
  if (key.front() != '/') {
    std::replace(key.begin(), key.end(), '.', '/');
    key = "/" + key;
  }
  json value = json::parse(text, nullptr, false);
  if (value.is_discarded()) value = text;  // fsdp2, dgx-h100: a bare word is a string
  try {
    const json::json_pointer ptr(key);
    // Every parent must be an object (or absent) or an array indexed in range or at its end.
    doc[ptr] = std::move(value);
  } catch (const json::exception&) {
    throw Error(
        "--set: expected KEY to name a key of the scenario (a JSON pointer or a dotted "
        "path through objects), got \"" +
        set.substr(0, eq) + "\"");
  }
}

}  // namespace

json read_scenario_document(const std::string& path, const std::vector<std::string>& sets,
                            std::string& label) {
  json doc;
  if (path == "-") {
    label = "<stdin>";
    const std::string text((std::istreambuf_iterator<char>(std::cin)),
                           std::istreambuf_iterator<char>());
    doc = model::parse_json_text(text, label);
  } else {
    label = path;
    doc = model::read_json_file(path);
  }
  if (!sets.empty() && !doc.is_object()) {
    throw InputError(label, "/", "a JSON object (a scenario) for --set", doc.type_name());
  }
  for (const std::string& set : sets) apply_set(doc, set);
  return doc;
}

model::Scenario load_cli_scenario(const std::string& path, const std::vector<std::string>& sets,
                                  const std::string& profile) {
  std::string label;
  json doc = read_scenario_document(path, sets, label);
  if (!profile.empty()) model::use_profile_as_hardware(doc, profile);
  return model::parse_scenario(doc, label);
}

}  // namespace ddpsim::cli
