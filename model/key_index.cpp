// The pointer segments, the table's index and the constraint texts of detail/key_index.hpp.
#include "model/detail/key_index.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iterator>

#include "model/error.hpp"

namespace ddpsim::model::detail {

std::vector<std::string> split_pointer(const std::string& pointer) {
  std::vector<std::string> segs;
  if (pointer.empty()) return segs;
  DDPSIM_ASSERT(pointer.front() == '/', "JSON pointer must start with '/': " + pointer);
  std::size_t start = 1;
  while (true) {
    std::size_t slash = pointer.find('/', start);
    segs.push_back(pointer.substr(start, slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return segs;
}

std::string unescape_segment(const std::string& seg) {
  std::string out;
  out.reserve(seg.size());
  for (std::size_t i = 0; i < seg.size(); ++i) {
    if (seg[i] == '~' && i + 1 < seg.size() && (seg[i + 1] == '0' || seg[i + 1] == '1')) {
      out += seg[i + 1] == '0' ? '~' : '/';
      ++i;
    } else {
      out += seg[i];
    }
  }
  return out;
}

bool is_wildcard(const std::string& seg) { return seg == kAnyIndex || seg == kAnyKey; }

bool is_array_index(const std::string& seg) {
  return !seg.empty() &&
         std::all_of(seg.begin(), seg.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_free_object(const KeySpec* spec) {
  return spec != nullptr && spec->type == KeyType::kObject && spec->pattern == "free";
}

std::string format_number(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  // Bounds are stored as double but are nearly always integers; "1" reads better than "1.0".
  if (x == std::floor(x) && std::fabs(x) < 1e15) return std::to_string(static_cast<long long>(x));
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, res.ptr);
}

nlohmann::json number_json(double x) {
  if (x == std::floor(x) && std::fabs(x) < 1e15) return static_cast<std::int64_t>(x);
  return x;
}

std::string dump(const nlohmann::json& v) {
  // replace, not strict: a malformed UTF-8 string in the input must still produce a message.
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string quote(const std::string& s) { return dump(nlohmann::json(s)); }

std::string range_text(const KeySpec& s) {
  std::string lo, hi;
  if (s.minimum) lo = (s.exclusive_minimum ? "> " : ">= ") + format_number(*s.minimum);
  if (s.maximum) hi = "<= " + format_number(*s.maximum);
  if (!lo.empty() && !hi.empty()) return lo + " and " + hi;
  return lo.empty() ? hi : lo;
}

std::string elements(double n) { return format_number(n) + (n == 1 ? " element" : " elements"); }

std::string count_text(const KeySpec& s) {
  if (s.minimum && s.maximum) {
    if (*s.minimum == *s.maximum) return "of exactly " + elements(*s.minimum);
    return "of " + format_number(*s.minimum) + " to " + elements(*s.maximum);
  }
  if (s.minimum) return "of at least " + elements(*s.minimum);
  if (s.maximum) return "of at most " + elements(*s.maximum);
  return "";
}

std::string with(std::string head, const std::string& tail) {
  if (!tail.empty()) head += " " + tail;
  return head;
}

const Child* Level::get(std::string_view seg) const {
  for (const auto& c : children) {
    if (c.segment == seg) return &c;
  }
  return nullptr;
}

std::vector<std::string> Level::literal_keys() const {
  std::vector<std::string> keys;
  for (const auto& c : children) {
    if (!is_wildcard(c.segment)) keys.push_back(unescape_segment(c.segment));
  }
  return keys;
}

Index::Index(const KeyTable& table) {
  for (const auto& spec : table.keys) {
    auto segs = split_pointer(spec.pointer);
    DDPSIM_ASSERT(!segs.empty(), "a KeyTable entry needs a non-empty pointer");
    std::string parent;
    for (std::size_t i = 0; i < segs.size(); ++i) {
      Level& level = levels_[parent];
      auto it = std::find_if(level.children.begin(), level.children.end(),
                             [&](const Child& c) { return c.segment == segs[i]; });
      if (it == level.children.end()) {
        level.children.push_back(Child{segs[i]});
        it = std::prev(level.children.end());
      }
      Child* child = &*it;
      // First entry wins on duplicates.
      if (i + 1 == segs.size() && child->spec == nullptr) child->spec = &spec;
      parent += "/" + segs[i];
    }
  }
}

const Level& Index::level(const std::string& pattern) const {
  auto it = levels_.find(pattern);
  return it == levels_.end() ? empty_ : it->second;
}

}  // namespace ddpsim::model::detail
