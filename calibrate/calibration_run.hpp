// calibration_run.hpp: `ddpsim-calibrate` without a subcommand, i.e. a calibration run that
// measures this machine and writes a profile (model/profile/profile.hpp); calibrate_main.cpp parses
// the command line into RunOptions and calls run_calibration.
//
// A run, in order: memory bandwidth (CPU: rank 0 alone, then every rank at once), the GEMMs of
// the plan (the scenario's, else the standard grid; on the CPU three passes, the middle median
// kept), the memory-bound training kernels, the collective sweep (checked element by element,
// then fitted) and, on the CPU with 2+ ranks, the interference of an all-reduce with a GEMM.
// Every rank measures at the same time, in step (barriers between measurements); rank 0 writes
// the profile atomically after reading it back through Profile::from_json. Without launcher
// variables and with --nproc > 1 the run starts --nproc copies of this binary (a one-host
// torchrun) and waits for them.
//
//   RunOptions o;
//   o.quick = true;
//   o.out = "results/profile-vm.json";
//   return run_calibration(o, argc, argv);  // 0 ok, 1 a failed run
#pragma once

#include <cstdint>
#include <string>

namespace ddpsim::calib {

/// The command line of a calibration run (calibrate_main.cpp documents each option).
struct RunOptions {
  std::string backend = "cpu";
  int nproc = 0;  // 0: 2 on cpu, the device count on cuda
  std::string scenario;
  bool quick = false;
  std::string out;
  double timeout_s = 120;
  bool collectives = true;
  std::string max_bytes;               // empty: the sweep's default (256 MiB, 4 MiB with --quick)
  int iters = 0;                       // 0: the sweep's default
  std::string gemm_operands = "cold";  // calib::Operands: as in a training step, or cache-warm
  bool plan_only = false;              // --plan: list what would be timed, time nothing
  std::string command;                 // the command line, recorded in the profile's context
};

/// A size in bytes written as nccl-tests reads -e: "8", "64K", "16M", "1G" (powers of 1024).
/// InputError naming `option` below 8 bytes or for any other text.
std::int64_t parse_size(const std::string& s, const char* option = "--max-bytes");

/// --plan: prints (stdout, Markdown) the GEMMs a run would time, their GFLOP per call and
/// dtypes, and the timing budget, without timing anything or needing the device. Returns 0.
int print_plan(const RunOptions& o);

/// The whole run (see the file comment); argc/argv are passed on to the ranks it launches.
/// Returns the exit code: 0 ok, 1 a failed run (a rank died, a timeout, wrong collective
/// results). Throws InputError for bad input and UnsupportedError for a part not built or no
/// device.
int run_calibration(RunOptions o, int argc, char** argv);

}  // namespace ddpsim::calib
