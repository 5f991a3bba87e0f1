// atomic_file.hpp: the one way ddpsim writes a result file (predictions, plans, traces,
// profiles, validation reports, executor runs, imported scenarios, the GUI's saved scenarios):
// through a temporary file in the same folder (PATH.tmp.PID), flushed, then rename(2) over PATH,
// so a reader never sees half a file and a failure leaves nothing behind. It is also the one
// guard of every output (issue 42): it never replaces anything but a regular file (a FIFO, a
// device, a socket or a folder at PATH is refused, named as what it is), the temporary is
// registered with model/interrupt.hpp while it exists (SIGINT/SIGTERM remove it), and every
// write is checked (a full disk is an error, never an empty file). Every tool that writes calls
// check_output_path() for each output before its work, with the run's inputs.
//
//   model::check_output_path("--out", out, {scenario, profile});   // before any work
//   model::write_file_atomic("results/x.json", doc.dump(2) + "\n");
//   model::check_writable("trace.json");   // before minutes of work whose output goes there
#pragma once

#include <string>
#include <vector>

#include "model/error.hpp"

namespace ddpsim::model {

class RunOutputs;  // model/interrupt.hpp

/// A file that could not be written: what() is "cannot write PATH (REASON)"; `reason` alone for
/// callers that phrase it their own way (e.g. "--trace PATH: cannot be written (REASON)").
class FileWriteError : public Error {
 public:
  FileWriteError(const std::string& path, const std::string& reason)
      : Error("cannot write " + path + " (" + reason + ")"), path_(path), reason_(reason) {}
  const std::string& path() const { return path_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string path_, reason_;
};

/// What an existing `path` is when it is not a regular file (symbolic links followed): "a FIFO
/// (named pipe)", "a character device", "a block device", "a socket", "a folder"; empty for a
/// regular file or nothing.
std::string non_regular_kind(const std::string& path);

/// Writes `content` to `path` atomically (see the file comment), creating missing parent
/// folders. Throws FileWriteError: "it is a FIFO (named pipe), not a regular file" (any
/// non_regular_kind), "<dir> is not a folder", the system's reason the temporary file could
/// not be written (e.g. "No space left on device"), or "cannot rename the temporary file over
/// it: <reason>". The temporary file never survives a failure nor a SIGINT/SIGTERM.
/// With `outputs` (one file of a run that writes several), `path` joins them just before the
/// rename, so that there is no moment at which it exists and a SIGINT/SIGTERM would leave it;
/// a failed rename takes it out again.
void write_file_atomic(const std::string& path, const std::string& content,
                       RunOutputs* outputs = nullptr);

/// Throws the FileWriteError a write to `path` would meet, without writing it: "it is a folder,
/// not a regular file" (any non_regular_kind), "<dir> is not a folder", or why a temporary file
/// cannot be created beside it (the probe file is removed again; an existing `path` is left
/// alone).
void check_writable(const std::string& path);

/// Before any work whose result goes to `out` (given with `option`, e.g. "--out"): an `out` that
/// is one of `inputs` (the same file, however named) is refused with ddpsim::Error ("--out
/// s.json: is the input s.json; writing the result there would replace it"); so is one that is
/// not a regular file ("--out p: is a FIFO (named pipe), not a regular file"); then
/// check_writable(out), whose failure reads "--out PATH: cannot be written (REASON)". Nothing to
/// check when `out` is empty; `inputs` may hold empty strings (options not given) and "-"
/// (standard input).
void check_output_path(const std::string& option, const std::string& out,
                       const std::vector<std::string>& inputs);

/// A program's exit code once what it printed has reached standard output: a full device
/// (`> /dev/full`) or a closed pipe fails only at the flush, and must not exit 0. Flushes
/// std::cout and stdout; on failure prints "PROGRAM: cannot write to standard output (REASON)"
/// on stderr and returns 2 (or `rc` when that is already an error). Every binary's main ends
/// here (ddpsim, ddpsim-calibrate, ddpsim-validate).
int stdout_checked(const char* program, int rc);

}  // namespace ddpsim::model
