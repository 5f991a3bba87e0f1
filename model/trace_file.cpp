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
    if (max_run_ > 0) check_runs(static_cast<std::size_t>(n));
    offset_ += static_cast<std::uint64_t>(n);
    setg(data_.data(), data_.data(), data_.data() + n);
    return traits_type::to_int_type(*gptr());
  }

 public:
  void limit_json_runs(std::uint64_t max_run) { max_run_ = max_run; }

 private:
  // A streaming JSON parser holds what it read since its last token (nlohmann's lexer keeps
  // skipped whitespace and the current string or number): a run of bytes with none of JSON's
  // structural characters { } [ ] , : is held whole.
  void check_runs(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      switch (data_[i]) {
        case '{':
        case '}':
        case '[':
        case ']':
        case ',':
        case ':':
          run_ = 0;
          break;
        default:
          if (++run_ > max_run_) {
            throw InputError(path_, "",
                             what_ + " with at most " + std::to_string(max_run_ >> 20) +
                                 " MiB between two of JSON's { } [ ] , :",
                             "more, up to byte " + std::to_string(offset_ + i));
          }
      }
    }
  }
  std::uint64_t max_run_ = 0, run_ = 0, offset_ = 0;

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

void TraceFile::limit_json_runs(std::uint64_t max_bytes) { buf_->limit_json_runs(max_bytes); }

std::string read_measurement_text(const std::string& path, const std::string& what,
                                  std::uint64_t max_bytes) {
  TraceFile f(path, what);
  const auto too_big = [&] {
    const bool gib = max_bytes % (std::uint64_t{1} << 30) == 0;
    return InputError(path, "",
                      what + " of at most " + std::to_string(gib ? max_bytes >> 30 : max_bytes) +
                          (gib ? " GiB" : " bytes"),
                      "more");
  };
  // A plain file past the cap is refused by its size, before a byte is read (a 2 GiB file took
  // 10 s and 1 GB of memory to be refused after the first 1 GiB); a gzip stream while it
  // inflates (a small bomb can expand past any size).
  if (!f.gzipped() && f.file_bytes() > max_bytes) throw too_big();
  // sgetn, not `out << rdbuf()`: operator<< would swallow the gzip error thrown by a read.
  std::string text;
  if (!f.gzipped()) text.reserve(static_cast<std::size_t>(f.file_bytes()));
  std::vector<char> piece(1 << 16);
  for (std::streamsize n; (n = f.stream().rdbuf()->sgetn(piece.data(), 1 << 16)) > 0;) {
    if (text.size() + static_cast<std::size_t>(n) > max_bytes) throw too_big();
    // Text has no NUL byte (JSON escapes control characters, logs are printed text): refused
    // where it is met, not after the rest of a file of zeros is read.
    if (const void* nul = std::memchr(piece.data(), 0, static_cast<std::size_t>(n))) {
      const auto at =
          text.size() + static_cast<std::size_t>(static_cast<const char*>(nul) - piece.data());
      throw InputError(path, "", what, "a NUL byte at byte " + std::to_string(at));
    }
    text.append(piece.data(), static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace ddpsim::model
