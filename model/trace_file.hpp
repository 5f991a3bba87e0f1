// trace_file.hpp: opening a measurement file a user hands in (a profiler trace, an nccl-tests
// log) safely and without a second copy of it in memory.
//
// Only a regular file is read: a FIFO, a character device (/dev/zero), a socket or a directory
// is refused before the first byte is read, so such an input can neither hang nor exhaust
// memory. A file that starts with the gzip magic bytes (1f 8b), whatever its name, is
// decompressed on the fly (zlib), so `.pt.trace.json.gz` as torch.profiler's
// tensorboard_trace_handler writes it reads like the plain JSON.
//
//   TraceFile f("rank0.pt.trace.json.gz", "a PyTorch profiler trace");
//   nlohmann::json::sax_parse(f.stream(), &handler);      // streams, never holds the whole text
//   std::string log = read_measurement_text("all_reduce.log", "an nccl-tests log");
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <string>

namespace ddpsim::model {

/// A measurement file open for reading. Errors are InputError naming `path` and `what` (e.g.
/// "a PyTorch profiler trace"): not a regular file, unreadable, a corrupt or truncated gzip
/// stream (thrown from the stream's reads).
class TraceFile {
 public:
  TraceFile(const std::string& path, const std::string& what);
  ~TraceFile();
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;

  /// The decompressed content, read in 128 KiB pieces.
  std::istream& stream();
  /// Whether the file is gzip-compressed (by its magic bytes, not its name).
  bool gzipped() const { return gzipped_; }
  /// The size of the file on disk, in bytes.
  std::uint64_t file_bytes() const { return file_bytes_; }
  /// For a JSON document streamed to a parser: refuses (InputError, as the bytes are read) a
  /// run of more than `max_bytes` without any of JSON's structural characters { } [ ] , : —
  /// whitespace or one string or number the parser would hold whole (1.1 GiB of spaces in a
  /// gzip stream ran a streaming reader out of a 4 GiB address space).
  void limit_json_runs(std::uint64_t max_bytes);

 private:
  class Buffer;
  std::unique_ptr<Buffer> buf_;
  std::unique_ptr<std::istream> in_;
  bool gzipped_ = false;
  std::uint64_t file_bytes_ = 0;
};

/// Text files a user hands in (JSON documents, nccl-tests logs): at most 1 GiB.
inline constexpr std::uint64_t kMaxTextFileBytes = std::uint64_t{1} << 30;

/// The whole decompressed text of a measurement or JSON file, with TraceFile's checks, refused
/// (InputError naming `path` and `what`) past `max_bytes` (a plain file by its size before
/// reading, a gzip stream as it inflates) or at its first NUL byte, as it is read.
std::string read_measurement_text(const std::string& path, const std::string& what,
                                  std::uint64_t max_bytes = kMaxTextFileBytes);

}  // namespace ddpsim::model
