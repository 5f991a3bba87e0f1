#include "model/error.hpp"

#include <cstdio>
#include <cstdlib>

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
  // One line, always: a newline inside a value would break scripts that read stderr.
  for (char& c : msg) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return msg;
}
}  // namespace

InputError::InputError(const std::string& file, const std::string& pointer,
                       const std::string& expected, const std::string& got)
    : Error(format_input_error(file, pointer, expected, got)),
      file_(file),
      pointer_(pointer),
      expected_(expected),
      got_(got) {}

std::string printable(const std::string& text) {
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

namespace detail {
void assert_fail(const char* expr, const std::string& msg, SourceLocation where) {
  std::fprintf(stderr, "ddpsim: internal error: %s:%u: %s: assertion `%s` failed: %s\n", where.file,
               where.line, where.function, expr, msg.c_str());
  std::abort();
}
}  // namespace detail

}  // namespace ddpsim
