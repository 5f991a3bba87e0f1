// interrupt.hpp: what a program leaves behind when it is interrupted (SIGINT, SIGTERM).
//
// Every ddpsim program calls install_interrupt_handlers() first thing in main. Files that must
// not survive an interruption are registered while they exist: the temporary file of
// write_file_atomic (model/atomic_file.hpp) for the few microseconds of its write, and the files
// of a run that writes several (a sweep's per-point traces, validate's --points-dir) until the
// run completes (RunOutputs). The handler removes them with unlink(2), writes one line with
// write(2), "ddpsim: interrupted (SIGTERM); removed out.json.tmp.123", and _exit()s with
// 128 + the signal (130 for SIGINT, 143 for SIGTERM). It touches only fixed-size buffers and
// async-signal-safe calls: no allocation, no lock, no stdio.
//
// Libraries (the Python module, the GUI's engine) never install handlers: registering is
// harmless without them, and a Python caller is interrupted through RunOptions::cancelled
// (simulator/run.hpp) instead.
//
//   int main(int argc, char** argv) {
//     ddpsim::model::install_interrupt_handlers("ddpsim");
//     ...
//     model::RunOutputs outputs;             // the files of this run
//     for (...) { write_file_atomic(f, text); outputs.add(f); }
//     outputs.keep();                        // complete: they stay
//   }
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace ddpsim::model {

/// Installs the SIGINT and SIGTERM handler described above; `program` (kept by pointer: a
/// string literal) starts its line. Idempotent.
void install_interrupt_handlers(const char* program);

/// One file removed if the program is interrupted while this object lives (the temporary file
/// of an atomic write), or with `tree` a folder and everything in it (a run's temporary folder;
/// at most 16 levels deep). Paths longer than 4095 bytes, or more than 64 at once, are not
/// registered (nothing else changes). Not copyable.
class RemoveOnInterrupt {
 public:
  explicit RemoveOnInterrupt(const std::string& path, bool tree = false);
  ~RemoveOnInterrupt();
  RemoveOnInterrupt(const RemoveOnInterrupt&) = delete;
  RemoveOnInterrupt& operator=(const RemoveOnInterrupt&) = delete;

 private:
  int slot_ = -1;
};

/// A child process (`target` > 0) or process group (`target` < 0, -pgid) that is sent the same
/// signal when the program is interrupted while this object lives; the handler waits up to 5 s
/// for it (then SIGKILL), so that its own handler removes its files before this one removes
/// the run's. At most 8 at once. Not copyable.
class StopOnInterrupt {
 public:
  explicit StopOnInterrupt(int target);
  ~StopOnInterrupt();
  StopOnInterrupt(const StopOnInterrupt&) = delete;
  StopOnInterrupt& operator=(const StopOnInterrupt&) = delete;

 private:
  int slot_ = -1;
};

/// The files one run writes, all or none: each add()ed file is removed when the program is
/// interrupted before keep(), and by the destructor when the run ends without keep() (an
/// exception: a full disk at the fifth of six files leaves none). Any number of files; not
/// copyable.
class RunOutputs {
 public:
  RunOutputs();
  ~RunOutputs();
  RunOutputs(const RunOutputs&) = delete;
  RunOutputs& operator=(const RunOutputs&) = delete;

  /// `path` belongs to the run (written, or about to be: an unlink of a file that is not
  /// there is not reported). write_file_atomic(path, text, &outputs) adds it at the right time.
  void add(const std::string& path);
  /// `path` does not belong to the run after all (its write failed before it was replaced).
  void drop(const std::string& path);
  /// The run is complete: its files stay.
  void keep();
  /// The files added so far.
  const std::vector<std::string>& files() const { return files_; }

 private:
  void publish();
  void republish();
  int slot_ = -1;
  bool kept_ = false;
  std::vector<std::string> files_;
  // NUL-separated copies of files_ that the handler reads; earlier (smaller) copies are kept
  // until destruction, since a handler may still be reading one.
  std::vector<std::unique_ptr<char[]>> buffers_;
  std::size_t used_ = 0, capacity_ = 0;
};

}  // namespace ddpsim::model
