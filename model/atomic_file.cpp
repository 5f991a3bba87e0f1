#include "model/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "model/interrupt.hpp"

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

// An existing `path` that is not a regular file is never replaced.
void refuse_non_regular(const std::string& path) {
  const std::string kind = non_regular_kind(path);
  if (!kind.empty()) throw FileWriteError(path, "it is " + kind + ", not a regular file");
}

// Creates `tmp` afresh (O_EXCL: a stale file of that name, even a FIFO, is removed first, never
// opened) and writes all of `content`, every write(2) and the close(2) checked. On failure
// removes it and throws with the system's reason.
void write_temporary(const std::string& path, const fs::path& tmp, const std::string& content) {
  const auto fail = [&](int err) {
    ::unlink(tmp.c_str());
    throw FileWriteError(path, std::strerror(err));
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST) {  // left by an earlier process with this PID
    ::unlink(tmp.c_str());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  }
  if (fd < 0) {
    const int err = errno;
    throw FileWriteError(path, std::strerror(err));  // nothing was created
  }
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      fail(err);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) fail(errno);
}

}  // namespace

std::string non_regular_kind(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return {};
  if (S_ISREG(st.st_mode)) return {};
  if (S_ISFIFO(st.st_mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  if (S_ISDIR(st.st_mode)) return "a folder";
  return "not a regular file";
}

void write_file_atomic(const std::string& path, const std::string& content, RunOutputs* outputs) {
  refuse_non_regular(path);
  const fs::path tmp = prepare(path);
  const RemoveOnInterrupt guard(tmp.string());  // SIGINT/SIGTERM while it exists remove it
  write_temporary(path, tmp, content);
  refuse_non_regular(path);  // appeared meanwhile (a FIFO made during the write)
  if (outputs != nullptr) outputs->add(path);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    if (outputs != nullptr) outputs->drop(path);
    ::unlink(tmp.c_str());
    throw FileWriteError(
        path, std::string("cannot rename the temporary file over it: ") + std::strerror(err));
  }
}

void check_output_path(const std::string& option, const std::string& out,
                       const std::vector<std::string>& inputs) {
  if (out.empty()) return;
  for (const std::string& in : inputs) {
    if (in.empty() || in == "-") continue;
    // Same file however named (links, ./x, x): an `out` that does not exist yet cannot be it.
    std::error_code ec;
    if (fs::path(out).lexically_normal() == fs::path(in).lexically_normal() ||
        fs::equivalent(fs::path(out), fs::path(in), ec)) {
      throw Error(option + " " + out + ": is the input " + in +
                  "; writing the result there would replace it");
    }
  }
  const std::string kind = non_regular_kind(out);
  if (!kind.empty()) throw Error(option + " " + out + ": is " + kind + ", not a regular file");
  try {
    check_writable(out);
  } catch (const FileWriteError& e) {
    throw Error(option + " " + out + ": cannot be written (" + e.reason() + ")");
  }
}

void check_writable(const std::string& path) {
  refuse_non_regular(path);
  const fs::path tmp = prepare(path);
  const RemoveOnInterrupt guard(tmp.string());
  write_temporary(path, tmp, "");
  ::unlink(tmp.c_str());
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
