// Regular files only (checked on the open descriptor, so nothing can swap the file between the
// check and the read), read through zlib's gz* functions: they read a gzip stream and pass plain
// bytes through unchanged (gzdirect), so one path serves both.
#include "model/trace_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <streambuf>
#include <vector>

#include "model/error.hpp"

namespace ddpsim::model {

namespace {

const char* file_kind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

}  // namespace

class TraceFile::Buffer : public std::streambuf {
 public:
  Buffer(gzFile gz, std::string path, std::string what)
      : gz_(gz), path_(std::move(path)), what_(std::move(what)), data_(1 << 17) {}
  ~Buffer() override { gzclose(gz_); }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const int n = gzread(gz_, data_.data(), static_cast<unsigned>(data_.size()));
    int err = Z_OK;
    const char* msg = gzerror(gz_, &err);
    if (n < 0 || (err != Z_OK && err != Z_STREAM_END)) {
      // Z_BUF_ERROR at the end: the gzip stream stops before its trailer (a truncated file).
      throw InputError(
          path_, "", what_ + " (a complete gzip stream)",
          err == Z_BUF_ERROR ? "a truncated gzip stream" : std::string("a gzip error: ") + msg);
    }
    if (n == 0) return traits_type::eof();
    setg(data_.data(), data_.data(), data_.data() + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  gzFile gz_;
  std::string path_, what_;
  std::vector<char> data_;
};

TraceFile::TraceFile(const std::string& path, const std::string& what) {
  // O_NONBLOCK: opening a FIFO with no writer must not block before the check below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    throw InputError(path, "", "a readable file: " + what,
                     std::string("it cannot be opened (") + std::strerror(errno) + ")");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(path, "", "a regular file: " + what, file_kind(st.st_mode));
  }
  file_bytes_ = static_cast<std::uint64_t>(st.st_size);
  unsigned char magic[2] = {0, 0};
  gzipped_ = ::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  gzFile gz = gzdopen(fd, "rb");  // owns fd from here
  if (gz == nullptr) {
    ::close(fd);
    throw InputError(path, "", "a readable file: " + what, "zlib could not open it");
  }
  gzbuffer(gz, 1 << 17);
  buf_ = std::make_unique<Buffer>(gz, path, what);
  in_ = std::make_unique<std::istream>(buf_.get());
}

TraceFile::~TraceFile() = default;

std::istream& TraceFile::stream() { return *in_; }

std::string read_measurement_text(const std::string& path, const std::string& what) {
  TraceFile f(path, what);
  // sgetn, not `out << rdbuf()`: operator<< would swallow the gzip error thrown by a read.
  std::string text;
  std::vector<char> piece(1 << 16);
  for (std::streamsize n; (n = f.stream().rdbuf()->sgetn(piece.data(), 1 << 16)) > 0;) {
    text.append(piece.data(), static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace ddpsim::model
