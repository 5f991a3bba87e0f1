// schema.hpp: one table of keys drives validation, `ddpsim schema` and the key reference.
//
// A KeyTable lists every key an input format accepts: its JSON pointer pattern, type, unit,
// default, allowed values, range and help. The same table
//   - validates a document (validate): unknown keys are rejected with a "did you mean" hint,
//     wrong types, values out of range or not allowed, NaN/inf, are rejected with one line
//     naming the file, the JSON pointer and what was expected (InputError);
//   - exports a JSON Schema (draft 2020-12) that editors use to check files as users type;
//   - renders the Markdown reference of every key (docs/scenario-keys.md),
// so documentation and validation never drift.
//
// Pointers use "/*" for "any array element" and "/{}" for "any key of a map object":
//   {"/training/per_gpu_batch", KeyType::kInteger, "samples", "", {}, 1, {}, "micro-batch..."}
//   {"/model/layers/*/name",    KeyType::kString, ...}
//   {"/sweep/{}",               KeyType::kArray, ...}
//
//   KeyTable t{"scenario", entries};
//   validate(doc, t, "run.json");          // throws InputError on the first problem
//   nlohmann::json s = to_json_schema(t);
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ddpsim::model {

/// kBooleanOrInteger: true, false or an integer in [minimum, maximum] (FSDP2's
/// reshard_after_forward); the default is a boolean.
/// kBooleanOrObject: true, false or an object whose keys are the table's children
/// (training.activation_checkpointing: true, or {"mode": "selective", "option": "op"}).
/// kStringOrInteger: one of `allowed` (or a string matching `pattern`), or an integer in
/// [minimum, maximum] (torchtitan's selective_ac_option: "op" or K).
enum class KeyType {
  kObject,
  kArray,
  kString,
  kInteger,
  kNumber,
  kBoolean,
  kBooleanOrInteger,
  kBooleanOrObject,
  kStringOrInteger
};
const char* key_type_name(
    KeyType t);  ///< "object", "array", "string", "integer", "number", "boolean", ...

struct KeySpec {
  std::string pointer;  ///< e.g. "/training/per_gpu_batch", "/model/layers/*/params", "/sweep/{}"
  KeyType type = KeyType::kString;
  std::string unit;                  ///< "samples", "MiB", "Gbit/s", "" when unitless
  nlohmann::json default_value;      ///< null when the key has no default (optional or required)
  std::vector<std::string> allowed;  ///< for strings: the allowed values (empty: any)
  std::optional<double>
      minimum;  ///< inclusive lower bound for numbers/integers, or minItems for arrays
  std::optional<double>
      maximum;            ///< inclusive upper bound for numbers/integers, or maxItems for arrays
  std::string help;       ///< one sentence
  bool required = false;  ///< must be present when its parent object is present
  bool exclusive_minimum = false;  ///< minimum is exclusive (e.g. > 0 for rates)
  /// For arrays of scalars: the element type and bounds are given by a separate entry with the
  /// pointer "<array>/*". For strings with a pattern instead of a list: an ECMA regex.
  std::string pattern;
};

struct KeyTable {
  std::string name;  ///< "scenario", "hardware preset", ...
  std::vector<KeySpec> keys;
  /// Finds the spec matching a concrete pointer ("/model/layers/3/params" matches
  /// "/model/layers/*/params"); nullptr when none does.
  const KeySpec* find(const std::string& concrete_pointer) const;
};

/// Validates `doc` against `table`; `file` is named in errors. Checks, in document order:
/// unknown keys (with the closest known key at the same level as a hint, by edit distance),
/// types (an integer-valued number is accepted for kNumber; 3.0 is NOT accepted for kInteger),
/// allowed values, pattern, ranges, NaN/inf, and required keys. Throws InputError.
void validate(const nlohmann::json& doc, const KeyTable& table, const std::string& file);

/// Validates one value against one spec (used for sweep values). `pointer` is the concrete
/// pointer named in the error.
void validate_value(const nlohmann::json& value, const KeySpec& spec, const KeyTable& table,
                    const std::string& file, const std::string& pointer);

/// JSON Schema (draft 2020-12) of the table: nested "properties", "additionalProperties": false,
/// "items", "enum", "minimum"/"exclusiveMinimum"/"maximum", "pattern", "default", "description"
/// (help + unit), "required".
nlohmann::json to_json_schema(const KeyTable& table);

/// Markdown reference: one table row per key (pointer, type, unit, default, allowed/range, help).
std::string to_markdown(const KeyTable& table);

/// RFC 6901 escaping of one reference token ("~" -> "~0", "/" -> "~1"), for building pointers
/// to keys that contain those characters.
std::string escape_pointer_token(const std::string& key);

/// Levenshtein edit distance (for "did you mean").
std::size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace ddpsim::model
