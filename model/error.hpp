// error.hpp: the error vocabulary of ddpsim.
//
// Bad user input (a scenario, a preset, a profile, a config.json) is a *recoverable* error: it
// throws a type derived from ddpsim::Error whose message names the file, the JSON pointer and
// what was expected, in one line. Only main() and the GUI catch it (exit code 2).
// Broken invariants are *programmatic* errors: DDPSIM_ASSERT stays on in every build type and
// aborts with the expression and location. User input is never checked with an assert.
//
//   throw InputError(path, "/training/per_gpu_batch", "an integer >= 1", "0");
//   DDPSIM_ASSERT(bucket.bytes > 0, "empty bucket");
#pragma once

#include <stdexcept>
#include <string>

namespace ddpsim {

/// Root of every recoverable error. what() is a single line fit for a terminal.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad input in a file: "FILE: /json/pointer: expected WHAT, got GOT".
class InputError : public Error {
 public:
  InputError(const std::string& file, const std::string& pointer, const std::string& expected,
             const std::string& got = {});
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  const std::string& expected() const { return expected_; }
  const std::string& got() const { return got_; }
  /// The same error with `prefix` put before the pointer (for a document embedded in another,
  /// e.g. a Hugging Face config under "/config" of a zoo file).
  InputError rebased(const std::string& prefix) const {
    return InputError(file_, prefix + pointer_, expected_, got_);
  }

 private:
  std::string file_;
  std::string pointer_;
  std::string expected_;
  std::string got_;
};

/// A valid request for something this build or this version cannot do (exit code 2 as well).
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

/// `text` safe to print on a terminal: every byte or character a terminal would act on becomes a
/// visible escape, so a user string (a scenario name, a key, a trace's names, an environment
/// value) can never move the cursor, recolour the screen or set the window title:
///   - C0 controls other than newline and tab, and DEL: \xNN (ESC is \x1b);
///   - C1 controls, as UTF-8 (U+0080..U+009F, e.g. U+009B, the 8-bit CSI): \u009b;
///   - bytes that are not valid UTF-8 (a lone 0x9b is CSI to a Latin-1 terminal): \xNN.
/// Valid UTF-8 text above U+009F is kept. For whole tables and reports (newlines kept).
std::string printable(const std::string& text);

/// printable(text) on one line: newline, carriage return and tab become \n, \r, \t as well.
/// Every value a message echoes goes through this (error lines, notes, echoed environment
/// values), so one line on stderr is always one line.
std::string one_line(const std::string& text);

/// Prints "PROGRAM: MESSAGE" on stderr as one line (MESSAGE through one_line). Every program's
/// top-level error report.
void print_error(const char* program, const std::string& message);

namespace detail {
/// Where an assertion failed. std::source_location would do, but clang 14 (the fuzzing
/// compiler) cannot build libstdc++ 12's <source_location>; the builtins work in both compilers.
struct SourceLocation {
  const char* file = "";
  unsigned line = 0;
  const char* function = "";
  static SourceLocation current(const char* f = __builtin_FILE(), unsigned l = __builtin_LINE(),
                                const char* fn = __builtin_FUNCTION()) {
    return {f, l, fn};
  }
};
[[noreturn]] void assert_fail(const char* expr, const std::string& msg,
                              SourceLocation where = SourceLocation::current());
}  // namespace detail

}  // namespace ddpsim

/// Always-on invariant check (O(1) conditions only). Never for user input.
#define DDPSIM_ASSERT(cond, msg)                              \
  do {                                                        \
    if (!(cond)) ::ddpsim::detail::assert_fail(#cond, (msg)); \
  } while (false)
