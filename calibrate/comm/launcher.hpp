// launcher.hpp: a minimal torchrun for one host — starts N ranks, watches them, stops them all.
//
// Each rank is a fork/exec of argv with RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR (127.0.0.1), MASTER_PORT (the launcher's own unless set: a port free on 127.0.0.1
// when the run starts, free_loopback_port), DDPSIM_STORE_DIR (a fresh directory unless
// opts.store_dir is given) and, like torchrun for more than one rank, OMP_NUM_THREADS=1 and
// OPENBLAS_NUM_THREADS=1 unless already set. opts.extra_env is applied last (it overrides).
// All ranks share one new process group; each dies with the launcher (PR_SET_PDEATHSIG).
// Their stdout/stderr are forwarded line by line to ours with a "[rank R] " prefix.
//
// When a rank exits non-zero or is killed by a signal, or the timeout passes, the other ranks
// get SIGTERM, then SIGKILL after opts.grace_s, and the result names the rank and the cause.
//
//   LaunchOptions o; o.timeout_s = 60;
//   int rc = launch_local(2, {"/path/to/ddpsim-collectives", "--op", "all_reduce"}, o);
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ddpsim::comm {

struct LaunchOptions {
  double timeout_s = 600;  ///< whole run, from the first fork; <= 0 means no limit.
  std::string store_dir;   ///< empty: a fresh temporary directory, removed afterwards.
  std::vector<std::pair<std::string, std::string>> extra_env;
  double grace_s = 3;         ///< SIGTERM -> SIGKILL delay when stopping the other ranks.
  bool prefix_output = true;  ///< "[rank R] " before every forwarded line.
};

struct LaunchResult {
  int exit_code = 0;     ///< 0 all ranks succeeded; else the failed rank's exit status,
                         ///< 128+signal when it was killed, 124 on timeout, 1 when fork failed.
  int failed_rank = -1;  ///< first rank that failed (-1: none, or timeout).
  std::string message;   ///< one line, empty on success, e.g. "rank 1 killed by signal 9 (Killed)".
};

/// Runs the ranks to completion and returns what happened (prints nothing itself beyond the
/// forwarded output). Preconditions: nproc >= 1, argv non-empty (argv[0] = executable path;
/// looked up in PATH when it has no slash).
LaunchResult launch_local_detailed(int nproc, const std::vector<std::string>& argv,
                                   const LaunchOptions& opts);

/// A TCP port free on 127.0.0.1 at this moment (bind port 0, read back what the kernel gave);
/// 0 when no socket could be bound.
int free_loopback_port();

/// launch_local_detailed, then prints "ddpsim launch: MESSAGE" on stderr on failure.
/// Returns LaunchResult::exit_code.
int launch_local(int nproc, const std::vector<std::string>& argv, const LaunchOptions& opts);

}  // namespace ddpsim::comm
