#include "model/schema.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <string_view>

#include "model/detail/key_index.hpp"
#include "model/error.hpp"

namespace ddpsim::model {

using namespace detail;  // the index and texts validation and the exports share

namespace {

// Long lists of keys or allowed values would turn the one-line error into a paragraph.
constexpr std::size_t kMaxListed = 12;

constexpr std::size_t kMaxGot = 40;

// Cuts at a UTF-8 character boundary so a truncated message stays valid UTF-8.
std::string truncate(std::string s, std::size_t limit) {
  if (s.size() <= limit) return s;
  std::size_t cut = limit - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  s.resize(cut);
  s += "...";
  return s;
}

std::string describe_value(const nlohmann::json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  if (v.is_number_float()) {
    // nlohmann dumps NaN and inf as "null", which would hide the actual problem.
    double d = v.get<double>();
    if (!std::isfinite(d)) return format_number(d);
  }
  return truncate(dump(v), kMaxGot);
}

std::string join_listed(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < kMaxListed; ++i) {
    if (i > 0) out += ", ";
    out += items[i];
  }
  if (items.size() > kMaxListed) out += ", ...";
  return out;
}

// Candidates are scanned in the caller's order, so ties go to the first one: deterministic.
std::optional<std::string> closest(const std::string& typed,
                                   const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(2, typed.size() / 3);
  std::optional<std::string> best;
  std::size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(typed, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string allowed_text(const KeySpec& s) {
  std::vector<std::string> quoted;
  quoted.reserve(s.allowed.size());
  for (const auto& a : s.allowed) quoted.push_back(quote(a));
  return "one of " + join_listed(quoted);
}

// Type and constraints in one phrase: whatever is wrong, the user sees everything a fix needs.
std::string expected_text(const KeySpec& s) {
  switch (s.type) {
    case KeyType::kObject:
      return "an object";
    case KeyType::kArray:
      return with("an array", count_text(s));
    case KeyType::kString:
      if (!s.allowed.empty()) return allowed_text(s);
      if (!s.pattern.empty()) return "a string matching " + s.pattern;
      return "a string";
    case KeyType::kInteger:
      return with("an integer", range_text(s));
    case KeyType::kNumber:
      return with("a number", range_text(s));
    case KeyType::kBoolean:
      return "a boolean";
    case KeyType::kBooleanOrInteger:
      return with("a boolean or an integer", range_text(s));
    case KeyType::kBooleanOrObject:
      return "a boolean or an object";
    case KeyType::kStringOrInteger: {
      const std::string str = !s.allowed.empty()   ? allowed_text(s)
                              : !s.pattern.empty() ? "a string matching " + s.pattern
                                                   : "a string";
      return str + " or " + with("an integer", range_text(s));
    }
  }
  return "a value";
}

// A table's patterns compiled once: compiling one per validated string was a fifth of a
// sweep's time (every point is validated). Patterns come from the built-in tables, so the map
// stays small; std::regex_match on a const regex is safe from several threads.
const std::regex& compiled(const KeySpec& s) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<const std::regex>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(s.pattern);
  if (it == cache.end()) {
    std::unique_ptr<const std::regex> re;
    try {
      re = std::make_unique<const std::regex>(s.pattern, std::regex::ECMAScript);
    } catch (const std::regex_error&) {
      // The pattern comes from a built-in table, not from the user: a bad one is a ddpsim bug.
      ::ddpsim::detail::assert_fail("std::regex(pattern)",
                                    s.pointer + ": bad pattern " + s.pattern);
    }
    it = cache.emplace(s.pattern, std::move(re)).first;
  }
  return *it->second;
}

bool regex_full_match(const std::string& value, const KeySpec& s) {
  return std::regex_match(value, compiled(s));
}

// The Index of a table, kept while the table's rows are the same: validate() runs for every
// scenario and every sweep point, and building the Index (every pointer split into a tree of
// levels) was half of a 10,000-point sweep's time. An Index is a function of the rows'
// addresses and pointers only (Child::spec points at the row, whose other fields are read
// when a value is checked), so an entry whose rows sit at the same addresses with the same
// pointers is the Index a fresh build would make.
std::shared_ptr<const Index> index_of(const KeyTable& table) {
  struct Entry {
    const KeySpec* rows = nullptr;
    std::vector<std::string> pointers;
    std::shared_ptr<const Index> index;
  };
  static std::mutex mutex;
  static std::vector<Entry> cache;  // a few tables: the scenario's and its presets'
  const auto same = [&](const Entry& e) {
    if (e.rows != table.keys.data() || e.pointers.size() != table.keys.size()) return false;
    for (std::size_t i = 0; i < e.pointers.size(); ++i) {
      if (e.pointers[i] != table.keys[i].pointer) return false;
    }
    return true;
  };
  std::lock_guard<std::mutex> lock(mutex);
  for (const Entry& e : cache) {
    if (same(e)) return e.index;
  }
  Entry e{table.keys.data(), {}, std::make_shared<const Index>(table)};
  e.pointers.reserve(table.keys.size());
  for (const KeySpec& k : table.keys) e.pointers.push_back(k.pointer);
  if (cache.size() >= 16) cache.erase(cache.begin());
  cache.push_back(std::move(e));
  return cache.back().index;
}

bool in_range(double v, const KeySpec& s) {
  if (s.minimum && (s.exclusive_minimum ? v <= *s.minimum : v < *s.minimum)) return false;
  if (s.maximum && v > *s.maximum) return false;
  return true;
}

// |v| > 2^53 for a JSON integer, compared as integers (2^53 + 1 rounds to 2^53 as a double).
bool beyond_two_to_the_53(const nlohmann::json& v) {
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 53;
  if (v.is_number_unsigned()) return v.get<std::uint64_t>() > kLimit;
  const std::int64_t i = v.get<std::int64_t>();
  return i > static_cast<std::int64_t>(kLimit) || i < -static_cast<std::int64_t>(kLimit);
}

double as_double(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return static_cast<double>(v.get<std::uint64_t>());
  if (v.is_number_integer()) return static_cast<double>(v.get<std::int64_t>());
  return v.get<double>();
}

// Checks `v` against `s` alone; children are the walker's business.
void check_value(const nlohmann::json& v, const KeySpec& s, const std::string& file,
                 const std::string& pointer) {
  auto fail = [&](const std::string& got) {
    throw InputError(file, pointer, expected_text(s), got);
  };
  switch (s.type) {
    case KeyType::kObject:
      if (!v.is_object()) fail(describe_value(v));
      return;
    case KeyType::kArray:
      if (!v.is_array()) fail(describe_value(v));
      if (!in_range(static_cast<double>(v.size()), s)) {
        fail("an array of " + elements(static_cast<double>(v.size())));
      }
      return;
    case KeyType::kString: {
      if (!v.is_string()) fail(describe_value(v));
      const auto& str = v.get_ref<const std::string&>();
      if (!s.allowed.empty() &&
          std::find(s.allowed.begin(), s.allowed.end(), str) == s.allowed.end()) {
        std::string got = describe_value(v);
        if (auto best = closest(str, s.allowed)) got += " (did you mean " + quote(*best) + "?)";
        fail(got);
      }
      if (!s.pattern.empty() && !regex_full_match(str, s)) fail(describe_value(v));
      return;
    }
    case KeyType::kInteger:
      // 3.0 is refused on purpose: a float where a count belongs is usually a computed value
      // pasted in, and silently truncating 2.9999 would be worse than asking.
      if (!v.is_number_integer()) fail(describe_value(v));  // also true for unsigned
      if (!in_range(as_double(v), s)) fail(describe_value(v));
      // A key without a ceiling still has one: 2^53, past which a double (where the cost model
      // computes) no longer holds every integer and int64 products are one step from wrapping.
      if (!s.maximum && beyond_two_to_the_53(v)) {
        throw InputError(file, pointer, expected_text(s) + " of magnitude at most 2^53",
                         describe_value(v));
      }
      return;
    case KeyType::kNumber:
      if (!v.is_number()) fail(describe_value(v));
      if (!std::isfinite(as_double(v)) || !in_range(as_double(v), s)) fail(describe_value(v));
      return;
    case KeyType::kBoolean:
      if (!v.is_boolean()) fail(describe_value(v));
      return;
    case KeyType::kBooleanOrInteger:
      if (v.is_boolean()) return;
      if (!v.is_number_integer() || !in_range(as_double(v), s)) fail(describe_value(v));
      return;
    case KeyType::kBooleanOrObject:
      if (!v.is_boolean() && !v.is_object()) fail(describe_value(v));
      return;
    case KeyType::kStringOrInteger:
      if (v.is_string()) {
        const auto& str = v.get_ref<const std::string&>();
        const bool listed = std::find(s.allowed.begin(), s.allowed.end(), str) != s.allowed.end();
        const bool matched = !s.pattern.empty() && regex_full_match(str, s);
        if (!listed && !matched) fail(describe_value(v));
        return;
      }
      if (!v.is_number_integer() || !in_range(as_double(v), s)) fail(describe_value(v));
      return;
  }
}

class Walker {
 public:
  Walker(const Index& index, const std::string& file) : index_(index), file_(file) {}

  // `pattern` is the table pointer that matched; `pointer` the concrete one for messages. They
  // are separate so validate_value can check a sweep value at "/sweep/x/0" with the spec of "/x".
  void walk(const nlohmann::json& v, const std::string& pattern, const std::string& pointer,
            const KeySpec* spec) const {
    const Level& level = index_.level(pattern);
    if (spec != nullptr) {
      check_value(v, *spec, file_, pointer);
    } else {
      // Implied container: its shape follows from its children's patterns.
      bool array = level.get(kAnyIndex) != nullptr;
      if (array ? !v.is_array() : !v.is_object()) {
        throw InputError(file_, pointer, array ? "an array" : "an object", describe_value(v));
      }
    }
    if (v.is_object()) {
      walk_object(v, pattern, pointer, spec, level);
    } else if (v.is_array()) {
      if (const Child* item = level.get(kAnyIndex)) {
        for (std::size_t i = 0; i < v.size(); ++i) {
          walk(v[i], pattern + "/*", pointer + "/" + std::to_string(i), item->spec);
        }
      }
      // No "*" entry: the elements are deliberately unchecked (e.g. sweep values, checked later
      // against the spec of the key they sweep).
    }
  }

 private:
  void walk_object(const nlohmann::json& v, const std::string& pattern, const std::string& pointer,
                   const KeySpec* spec, const Level& level) const {
    // An object spec whose pattern is "free" accepts keys the table does not list (e.g. an
    // embedded Hugging Face config.json); listed children, if any, are still checked. Any other
    // object rejects unknown keys, even one with no children at all.
    const bool free = is_free_object(spec);
    const Child* any_key = level.get(kAnyKey);
    for (const auto& [key, value] : v.items()) {
      const std::string seg = escape_pointer_token(key);
      const std::string child_pointer = pointer + "/" + seg;
      const Child* child = is_wildcard(seg) ? nullptr : level.get(seg);
      if (child == nullptr) child = any_key;
      if (child == nullptr) {
        if (free) continue;
        throw_unknown(key, child_pointer, level);
      }
      walk(value, pattern + "/" + child->segment, child_pointer, child->spec);
    }
    for (const auto& c : level.children) {
      if (c.spec == nullptr || !c.spec->required || is_wildcard(c.segment)) continue;
      if (!v.contains(unescape_segment(c.segment))) {
        throw InputError(file_, pointer + "/" + c.segment, "a value (required)", "nothing");
      }
    }
  }

  [[noreturn]] void throw_unknown(const std::string& key, const std::string& pointer,
                                  const Level& level) const {
    auto known = level.literal_keys();
    std::sort(known.begin(), known.end());
    std::string expected =
        known.empty() ? "no keys here (an empty object)" : "one of the keys " + join_listed(known);
    std::string got = "unknown key '" + truncate(key, kMaxGot) + "'";
    if (auto best = closest(key, known)) got += " (did you mean '" + *best + "'?)";
    throw InputError(file_, pointer, expected, got);
  }

  const Index& index_;
  const std::string& file_;
};

// ---- JSON Schema ----------------------------------------------------------------------------

nlohmann::json schema_node(const Index& index, const std::string& pattern, const KeySpec* spec) {
  nlohmann::json node = nlohmann::json::object();
  const Level& level = index.level(pattern);
  KeyType type = spec != nullptr                   ? spec->type
                 : level.get(kAnyIndex) != nullptr ? KeyType::kArray
                                                   : KeyType::kObject;
  if (type == KeyType::kBooleanOrInteger) {
    node["type"] = nlohmann::json::array({"boolean", "integer"});
  } else if (type == KeyType::kBooleanOrObject) {
    node["type"] = nlohmann::json::array({"boolean", "object"});
  } else if (type == KeyType::kStringOrInteger) {
    node["type"] = nlohmann::json::array({"string", "integer"});
  } else {
    node["type"] = key_type_name(type);
  }
  if (spec != nullptr) {
    std::string desc = spec->help;
    if (!spec->unit.empty()) desc += (desc.empty() ? "[" : " [") + spec->unit + "]";
    if (!desc.empty()) node["description"] = desc;
    if (!spec->default_value.is_null()) node["default"] = spec->default_value;
    switch (type) {
      case KeyType::kInteger:
      case KeyType::kNumber:
      case KeyType::kBooleanOrInteger:
        if (spec->minimum) {
          node[spec->exclusive_minimum ? "exclusiveMinimum" : "minimum"] =
              number_json(*spec->minimum);
        }
        if (spec->maximum) node["maximum"] = number_json(*spec->maximum);
        break;
      case KeyType::kArray:
        if (spec->minimum) node["minItems"] = number_json(std::ceil(*spec->minimum));
        if (spec->maximum) node["maxItems"] = number_json(std::floor(*spec->maximum));
        break;
      case KeyType::kString:
        if (!spec->allowed.empty()) node["enum"] = spec->allowed;
        // JSON Schema patterns search, std::regex_match matches the whole string: anchor it so
        // editors accept exactly what validate() accepts.
        if (!spec->pattern.empty()) node["pattern"] = "^(?:" + spec->pattern + ")$";
        break;
      case KeyType::kStringOrInteger: {
        // "enum" and "pattern" would also bind the integers: one branch each.
        nlohmann::json str = {{"type", "string"}};
        if (!spec->allowed.empty()) str["enum"] = spec->allowed;
        if (!spec->pattern.empty()) str["pattern"] = "^(?:" + spec->pattern + ")$";
        nlohmann::json integer = {{"type", "integer"}};
        if (spec->minimum) integer["minimum"] = number_json(*spec->minimum);
        if (spec->maximum) integer["maximum"] = number_json(*spec->maximum);
        node["anyOf"] = nlohmann::json::array({str, integer});
        break;
      }
      case KeyType::kObject:
      case KeyType::kBoolean:
      case KeyType::kBooleanOrObject:
        break;
    }
  }
  if (type == KeyType::kObject || type == KeyType::kBooleanOrObject) {
    nlohmann::json props = nlohmann::json::object();
    nlohmann::json required = nlohmann::json::array();
    for (const auto& c : level.children) {
      if (is_wildcard(c.segment)) continue;
      std::string key = unescape_segment(c.segment);
      props[key] = schema_node(index, pattern + "/" + c.segment, c.spec);
      if (c.spec != nullptr && c.spec->required) required.push_back(key);
    }
    if (!props.empty()) node["properties"] = std::move(props);
    if (!required.empty()) node["required"] = std::move(required);
    if (const Child* any_key = level.get(kAnyKey)) {
      node["additionalProperties"] = schema_node(index, pattern + "/{}", any_key->spec);
    } else if (!is_free_object(spec)) {
      node["additionalProperties"] = false;
    }
  } else if (type == KeyType::kArray) {
    if (const Child* item = level.get(kAnyIndex)) {
      node["items"] = schema_node(index, pattern + "/*", item->spec);
    }
  }
  return node;
}

// ---- Markdown -------------------------------------------------------------------------------

std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string code(const std::string& s) { return s.empty() ? s : "`" + s + "`"; }

std::string constraint_cell(const KeySpec& s) {
  switch (s.type) {
    case KeyType::kString: {
      if (!s.allowed.empty()) {
        std::string out;
        for (const auto& a : s.allowed) out += (out.empty() ? "" : ", ") + code(quote(a));
        return out;
      }
      return s.pattern.empty() ? "" : "matches " + code(s.pattern);
    }
    case KeyType::kInteger:
    case KeyType::kNumber:
      return range_text(s);
    case KeyType::kBooleanOrInteger:
      return with("true, false or an integer", range_text(s));
    case KeyType::kBooleanOrObject:
      return "true, false or an object";
    case KeyType::kStringOrInteger: {
      std::string out;
      for (const auto& a : s.allowed) out += (out.empty() ? "" : ", ") + code(quote(a));
      if (!s.pattern.empty()) out += (out.empty() ? "matches " : ", matches ") + code(s.pattern);
      return out + (out.empty() ? "" : " or ") + with("an integer", range_text(s));
    }
    case KeyType::kArray:
      return count_text(s);
    case KeyType::kObject:
      return s.pattern == "free" ? "free-form" : "";
    case KeyType::kBoolean:
      return "";
  }
  return "";
}

}  // namespace

const char* key_type_name(KeyType t) {
  switch (t) {
    case KeyType::kObject:
      return "object";
    case KeyType::kArray:
      return "array";
    case KeyType::kString:
      return "string";
    case KeyType::kInteger:
      return "integer";
    case KeyType::kNumber:
      return "number";
    case KeyType::kBoolean:
      return "boolean";
    case KeyType::kBooleanOrInteger:
      return "boolean or integer";
    case KeyType::kBooleanOrObject:
      return "boolean or object";
    case KeyType::kStringOrInteger:
      return "string or integer";
  }
  return "unknown";
}

const KeySpec* KeyTable::find(const std::string& concrete_pointer) const {
  const auto segs = split_pointer(concrete_pointer);
  const KeySpec* best = nullptr;
  std::vector<bool> best_wild;
  for (const auto& spec : keys) {
    const auto pat = split_pointer(spec.pointer);
    if (pat.size() != segs.size()) continue;
    std::vector<bool> wild(pat.size());
    bool ok = true;
    for (std::size_t i = 0; ok && i < pat.size(); ++i) {
      wild[i] = is_wildcard(pat[i]);
      if (pat[i] == kAnyIndex) {
        ok = is_array_index(segs[i]);
      } else if (pat[i] != kAnyKey) {
        ok = pat[i] == segs[i];
      }
    }
    // Several patterns can match ("/sweep/{}" and "/sweep/seed"): the literal segment nearest
    // the root wins, as in the validation walk; false < true makes that a lexicographic compare.
    if (ok && (best == nullptr || wild < best_wild)) {
      best = &spec;
      best_wild = std::move(wild);
    }
  }
  return best;
}

void validate(const nlohmann::json& doc, const KeyTable& table, const std::string& file) {
  if (!doc.is_object()) throw InputError(file, "", "an object", describe_value(doc));
  const std::shared_ptr<const Index> index = index_of(table);
  Walker(*index, file).walk(doc, "", "", nullptr);
}

void validate_value(const nlohmann::json& value, const KeySpec& spec, const KeyTable& table,
                    const std::string& file, const std::string& pointer) {
  const std::shared_ptr<const Index> index = index_of(table);
  Walker(*index, file).walk(value, spec.pointer, pointer, &spec);
}

nlohmann::json to_json_schema(const KeyTable& table) {
  Index index(table);
  nlohmann::json schema = schema_node(index, "", nullptr);
  schema["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  schema["title"] = table.name;
  schema["additionalProperties"] = false;
  return schema;
}

std::string to_markdown(const KeyTable& table) {
  std::string out = "# " + cell(table.name) + " keys\n\n";
  out += "| Key | Type | Unit | Default | Allowed / range | Description |\n";
  out += "|---|---|---|---|---|---|\n";
  for (const auto& s : table.keys) {
    std::string def =
        s.default_value.is_null() ? (s.required ? "required" : "") : code(dump(s.default_value));
    out += "| " + cell(code(s.pointer)) + " | " + key_type_name(s.type) + " | " + cell(s.unit) +
           " | " + cell(def) + " | " + cell(constraint_cell(s)) + " | " + cell(s.help) + " |\n";
  }
  return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string escape_pointer_token(const std::string& key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace ddpsim::model
