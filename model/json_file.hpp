// json_file.hpp: strict JSON, the one reader of every JSON input (scenarios, presets, model
// files, profiles, Hugging Face and DeepSpeed configs, torch knobs, results).
//
// Strict as the contract says: no comments, no trailing commas, no NaN; a key repeated in one
// object and nesting deeper than 256 levels are refused with their JSON pointer; a file must be
// a regular file of at most 1 GiB (gzip-compressed JSON reads like the plain text:
// model/trace_file.hpp). Every problem throws InputError naming the file (exit code 2).
//
//   nlohmann::json doc = read_json_file("scenarios/hardware/dgx-h100.json");
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ddpsim::model {

/// Reads a JSON file; a missing file or a syntax error throws InputError naming the file and,
/// for syntax errors, the byte offset.
nlohmann::json read_json_file(const std::string& path);
/// Parses `text` read from `path` as strict JSON, with read_json_file's errors.
nlohmann::json parse_json_text(const std::string& text, const std::string& path);

}  // namespace ddpsim::model
