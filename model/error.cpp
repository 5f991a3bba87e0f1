#include "model/error.hpp"

#include <cstdio>
#include <cstdlib>

#include "model/detail/utf8.hpp"

namespace ddpsim {

namespace {
std::string format_input_error(const std::string& file, const std::string& pointer,
                               const std::string& expected, const std::string& got) {
  std::string msg = file.empty() ? std::string("<input>") : file;
  msg += ": ";
  msg += pointer.empty() ? std::string("/") : pointer;
  msg += ": expected ";
  msg += expected;
  if (!got.empty()) {
    msg += ", got ";
    msg += got;
  }
  // One line, always: a newline inside a value (a file name, a key) would break scripts that
  // read stderr; it prints as \n, like every other control character (one_line).
  return one_line(msg);
}
}  // namespace

InputError::InputError(const std::string& file, const std::string& pointer,
                       const std::string& expected, const std::string& got)
    : Error(format_input_error(file, pointer, expected, got)),
      file_(file),
      pointer_(pointer),
      expected_(expected),
      got_(got) {}

namespace detail {
std::size_t utf8_sequence_length(const char* p, std::size_t n) {
  if (n == 0) return 0;
  const auto at = [p](std::size_t k) { return static_cast<unsigned char>(p[k]); };
  const unsigned char b0 = at(0);
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the allowed range of the second byte
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    len = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    len = 3;
    if (b0 == 0xe0) lo = 0xa0;  // no overlong forms
    if (b0 == 0xed) hi = 0x9f;  // no UTF-16 surrogates
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    len = 4;
    if (b0 == 0xf0) lo = 0x90;
    if (b0 == 0xf4) hi = 0x8f;  // at most U+10FFFF
  } else {
    return 0;
  }
  if (len > n || at(1) < lo || at(1) > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (at(k) < 0x80 || at(k) > 0xbf) return 0;
  }
  return len;
}
}  // namespace detail

namespace {

std::string escape_for_terminal(const std::string& text, bool keep_line_breaks) {
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  const auto hex = [&](const char* prefix, unsigned u) {
    out += prefix;
    out += kHex[(u >> 4) & 0xf];
    out += kHex[u & 0xf];
  };
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x80) {
      if (c == '\n' || c == '\t' || c == '\r') {
        if (keep_line_breaks && c != '\r') {
          out += c;
        } else {
          out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r";
        }
      } else if (u < 0x20 || u == 0x7f) {
        hex("\\x", u);
      } else {
        out += c;
      }
      ++i;
      continue;
    }
    const std::size_t n = detail::utf8_sequence_length(text.data() + i, text.size() - i);
    if (n == 0) {
      hex("\\x", u);
      ++i;
    } else if (n == 2 && u == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) {
      hex("\\u00", static_cast<unsigned char>(text[i + 1]));  // C1: U+0080..U+009F
      i += 2;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace

std::string printable(const std::string& text) { return escape_for_terminal(text, true); }

std::string one_line(const std::string& text) { return escape_for_terminal(text, false); }

void print_error(const char* program, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", program, one_line(message).c_str());
}

namespace detail {
void assert_fail(const char* expr, const std::string& msg, SourceLocation where) {
  std::fprintf(stderr, "ddpsim: internal error: %s:%u: %s: assertion `%s` failed: %s\n", where.file,
               where.line, where.function, expr, msg.c_str());
  std::abort();
}
}  // namespace detail

}  // namespace ddpsim
