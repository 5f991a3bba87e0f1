#include "model/json_file.hpp"

#include <filesystem>
#include <set>
#include <vector>

#include "model/error.hpp"
#include "model/schema.hpp"
#include "model/trace_file.hpp"

namespace ddpsim::model {

using nlohmann::json;

namespace {

// Limits every JSON reader shares (issue 20: hostile inputs). No shipped or generated file comes
// near them: scenarios, presets and profiles nest under 10 levels, results documents under 20.
constexpr int kMaxJsonDepth = 256;

// A SAX pass that makes reading strict where JSON itself is silent, before the document is
// built: nesting deeper than kMaxJsonDepth is refused (a 10^5-deep document would overflow the
// stack of every recursive walk), and a key repeated in one object is refused with its pointer
// (RFC 8259 leaves duplicates to the reader; nlohmann keeps the last, which silently changes a
// scenario). A separate pass, not a parser callback: nlohmann's callback parser is quadratic in
// the length of an array with JSON_DIAGNOSTICS (1e6 layers: minutes instead of a second).
class StrictJson : public json::json_sax_t {
 public:
  explicit StrictJson(const std::string& path) : path_(path) {}

  bool null() override { return next_element(); }
  bool boolean(bool) override { return next_element(); }
  bool number_integer(number_integer_t) override { return next_element(); }
  bool number_unsigned(number_unsigned_t) override { return next_element(); }
  bool number_float(number_float_t, const string_t&) override { return next_element(); }
  bool string(string_t&) override { return next_element(); }
  bool binary(binary_t&) override { return next_element(); }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    Frame& f = frames_.back();
    f.key = k;
    if (!f.keys.insert(k).second) {
      throw InputError(path_, pointer(), "each key once per object", "\"" + k + "\" a second time");
    }
    return true;
  }
  // A syntax error stops this pass; json::parse then meets it again and throws it with its type
  // (parse_error, out_of_range), which parse_json_text reports.
  bool parse_error(std::size_t, const std::string&, const json::exception&) override {
    return false;
  }

 private:
  struct Frame {
    bool object = false;
    std::set<std::string> keys;
    std::string key;
    std::size_t index = 0;
  };

  bool open(bool object) {
    if (frames_.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
      throw InputError(path_, pointer(),
                       "JSON nested at most " + std::to_string(kMaxJsonDepth) + " levels deep",
                       "deeper nesting");
    }
    frames_.push_back({object, {}, {}, 0});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return next_element();
  }
  bool next_element() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    return true;
  }

  std::string pointer() const {
    std::string p;
    for (const Frame& f : frames_) {
      p += "/" + (f.object ? escape_pointer_token(f.key) : std::to_string(f.index));
    }
    return p;
  }

  const std::string& path_;
  std::vector<Frame> frames_;
};

}  // namespace

json read_json_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(path, "", "a JSON file", "a directory");
  }
  // Regular files only, checked on the open descriptor (a FIFO would block, /dev/zero never
  // ends); gzip-compressed JSON reads like the plain text (model/trace_file.hpp).
  // At most 1 GiB of text, refused by size before reading; a NUL byte where it is met.
  return parse_json_text(read_measurement_text(path, "a JSON file"), path);
}

json parse_json_text(const std::string& text, const std::string& path) {
  // JSON text has no NUL byte anywhere (inside strings control characters must be escaped).
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    throw InputError(path, "", "valid JSON", "a NUL byte at byte " + std::to_string(nul));
  }
  try {
    // Strict JSON, as the contract says: no comments, no trailing commas, no NaN; nesting and
    // duplicate keys checked first (StrictJson), then the document built.
    StrictJson strict(path);
    json::sax_parse(text, &strict, json::input_format_t::json, /*strict=*/true);
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(path, "", "valid JSON", "a syntax error at byte " + std::to_string(e.byte));
  } catch (const json::exception& e) {
    // e.g. out_of_range.406: a number too large for a double (1e400).
    std::string what = e.what();
    const auto bracket = what.find("] ");
    throw InputError(path, "", "valid JSON with finite numbers",
                     bracket == std::string::npos ? what : what.substr(bracket + 2));
  }
}

}  // namespace ddpsim::model
