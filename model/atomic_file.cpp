#include "model/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace ddpsim::model {

namespace {

namespace fs = std::filesystem;

// Creates the folder `path` goes into; returns the temporary file's path beside `path`.
fs::path prepare(const std::string& path) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec)) throw FileWriteError(path, dir.string() + " is not a folder");
  return fs::path(target.string() + ".tmp." + std::to_string(::getpid()));
}

// Writes `content` into `tmp`; on failure removes it and throws with the system's reason.
void write_temporary(const std::string& path, const fs::path& tmp, const std::string& content) {
  bool ok = false;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (out) {
      out << content;
      out.flush();
      ok = static_cast<bool>(out);
    }
  }
  if (ok) return;
  const std::string why = std::strerror(errno);
  std::error_code ec;
  fs::remove(tmp, ec);
  throw FileWriteError(path, why);
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& content) {
  const fs::path tmp = prepare(path);
  write_temporary(path, tmp, content);
  std::error_code ec;
  fs::rename(tmp, fs::path(path), ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw FileWriteError(path, "cannot rename the temporary file over it: " + ec.message());
  }
}

void check_output_path(const std::string& option, const std::string& out,
                       const std::vector<std::string>& inputs) {
  if (out.empty()) return;
  for (const std::string& in : inputs) {
    if (in.empty()) continue;
    // Same file however named (links, ./x, x): an `out` that does not exist yet cannot be it.
    std::error_code ec;
    if (fs::path(out).lexically_normal() == fs::path(in).lexically_normal() ||
        fs::equivalent(fs::path(out), fs::path(in), ec)) {
      throw Error(option + " " + out + ": is the input " + in +
                  "; writing the result there would replace it");
    }
  }
  try {
    check_writable(out);
  } catch (const FileWriteError& e) {
    throw Error(option + " " + out + ": cannot be written (" + e.reason() + ")");
  }
}

void check_writable(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(fs::path(path), ec)) throw FileWriteError(path, "it is a folder");
  const fs::path tmp = prepare(path);
  write_temporary(path, tmp, "");
  fs::remove(tmp, ec);
}

int stdout_checked(const char* program, int rc) {
  std::cout.flush();
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout) {
    std::fprintf(stderr, "%s: cannot write to standard output (%s)\n", program,
                 errno != 0 ? std::strerror(errno) : "write error");
    return rc == 0 ? 2 : rc;
  }
  return rc;
}

}  // namespace ddpsim::model
