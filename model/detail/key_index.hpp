// detail/key_index.hpp: what validation and the exports of a KeyTable share (schema.cpp): JSON
// pointer patterns as segments, the table as a tree of pattern levels (Index), and the texts a
// row's constraints read as. Not part of the public API.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "model/schema.hpp"

namespace ddpsim::model::detail {

/// Pattern segments: any array element, any key of a map object.
inline constexpr std::string_view kAnyIndex = "*";
inline constexpr std::string_view kAnyKey = "{}";

/// The segments of a pointer ("" has none; otherwise it starts with '/'). Pattern segments are
/// kept in their escaped RFC 6901 form, so a literal pattern segment and a concrete segment built
/// by escape_pointer_token() compare with ==. The price: a key literally named "*" or "{}"
/// cannot be described by a table, which no ddpsim format needs.
std::vector<std::string> split_pointer(const std::string& pointer);
/// RFC 6901: "~0" -> "~", "~1" -> "/".
std::string unescape_segment(const std::string& seg);
bool is_wildcard(const std::string& seg);
bool is_array_index(const std::string& seg);
/// An object whose keys the table does not list (pattern "free").
bool is_free_object(const KeySpec* spec);

/// "1" rather than "1.0" for the integers bounds nearly always are; "NaN", "inf", "-inf".
std::string format_number(double x);
/// The same as JSON: an integer when the value is one.
nlohmann::json number_json(double x);
/// Compact JSON; malformed UTF-8 replaced, so a message about it can still be written.
std::string dump(const nlohmann::json& v);
/// A string as a JSON string literal.
std::string quote(const std::string& s);
/// ">= 1 and <= 1024", "> 0", "" for a row without bounds.
std::string range_text(const KeySpec& s);
/// "3 elements", "1 element".
std::string elements(double n);
/// An array row's bounds: "of at least 1 element", "of 2 to 8 elements", "" without bounds.
std::string count_text(const KeySpec& s);
/// `head`, then " " and `tail` when `tail` is not empty.
std::string with(std::string head, const std::string& tail);

/// The table seen as a tree of pattern levels. Levels that have descendants but no spec of
/// their own (a table may list "/a/b" without "/a") are still walked, as implied objects or
/// arrays.
struct Child {
  std::string segment;            ///< escaped, or "*" / "{}"
  const KeySpec* spec = nullptr;  ///< null for an implied level
};

struct Level {
  std::vector<Child> children;  ///< in table order of first appearance

  const Child* get(std::string_view seg) const;
  std::vector<std::string> literal_keys() const;
};

class Index {
 public:
  /// The first row wins when two give the same pointer.
  explicit Index(const KeyTable& table);
  /// The level under `pattern` (the parent's pattern; "" for the root); empty when none.
  const Level& level(const std::string& pattern) const;

 private:
  std::map<std::string, Level> levels_;  // keyed by the parent's pattern
  Level empty_;
};

}  // namespace ddpsim::model::detail
