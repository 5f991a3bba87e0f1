// sweep.hpp: nccl-tests-style sweeps of collective time over message sizes (the profile's
// "collectives" section).
//
// For every op and every size min_bytes, 2*min_bytes, ... max_bytes (bytes of the largest
// buffer, as nccl-tests counts them), out of place and then in place: `warmup` untimed calls,
// then `iters` timed calls. size_offset x shifts the whole series to x*min_bytes, 2x*min_bytes,
// ... (rounded down to whole floats): 1.5 measures the geometric midpoints between the powers
// of two of a default sweep, the independent second sweep a fit is checked against. Above
// full_iters_bytes (16 MiB) a size gets iters * full_iters_bytes / size timed calls, at least
// min_iters (5), and as few warm-up calls, so a sweep to 256 MiB stays a few minutes. A call's
// time is the slowest rank's (a collective ends when its last rank does); the row reports the
// median as time_us, the mean (time_us_mean: nccl-tests' time column is an average), min, max,
// p10 and p90 over the calls, algbw = size/time_us and busbw = algbw * model::busbw_factor(op, n).
// Every size checks the result: inputs are (rank+1)*h(i) with h a hash of i into 1..251, so all
// sums are small integers, exact in float32, and "wrong" counts the elements (over all ranks)
// that differ from the expected value.
//
// Row sizes for reduce_scatter/all_gather are count*n*4 with count = size/(4n) (sizes below
// 4n bytes are skipped), as nccl-tests does.
//
// verify_sweep then refuses a section with any wrong element: a timing of a collective that
// computed the wrong result is not a measurement of that collective (calibration fails).
//
//   auto section = run_sweep(*comm, SweepOptions{}, [](const std::string& l) { puts(l.c_str()); });
//   // rank 0: {"backend": "gloo", ..., "ops": {"all_reduce": {"rows": [...]}}}; others: null
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/comm/communicator.hpp"

namespace ddpsim::comm {

struct SweepOptions {
  std::vector<model::CollectiveOp> ops = {std::begin(model::kMeasuredOps),
                                          std::end(model::kMeasuredOps)};
  std::int64_t min_bytes = 8;
  std::int64_t max_bytes = 0;    ///< 0: 256 MiB, or 4 MiB with quick; set: exactly this.
  std::int64_t step_factor = 2;  ///< sizes grow by this factor (nccl-tests -f).
  int warmup = 5;
  int iters = 0;  ///< timed calls per size; 0: 20, or 5 with quick; set: exactly this.
  bool in_place_too = true;
  bool quick = false;        ///< max_bytes 4 MiB and iters 5 unless set, warmup 2.
  int root = 0;              ///< broadcast root.
  int ranks_per_node = 0;    ///< for the "nodes" field; 0: all ranks on one host.
  double size_offset = 1.0;  ///< first size is min_bytes * size_offset; in [1, step_factor).
  std::int64_t full_iters_bytes = std::int64_t{16} << 20;  ///< larger sizes: fewer calls.
  int min_iters = 5;  ///< fewest timed calls at any size (iters when smaller).
  /// Test hook (tests only; empty in every production path): called with the checked call's
  /// output as downloaded, before its elements are compared, so a test can make the checker
  /// see a wrong result. Arguments: op, row size in bytes, in place, this rank's output.
  std::function<void(model::CollectiveOp, std::int64_t, bool, std::vector<float>&)>
      corrupt_output_for_test;
};

/// The sizes run_sweep visits (before per-op rounding), in order. Throws ddpsim::Error on bad
/// options as run_sweep does.
std::vector<std::int64_t> sweep_sizes(const SweepOptions& opts);
/// Timed calls run_sweep makes at `size_bytes`.
int iters_at(const SweepOptions& opts, std::int64_t size_bytes);

/// Throws ddpsim::Error naming every row with "wrong" > 0 (op, size, placement, count) of a
/// section run_sweep returned; does nothing when all rows are exact.
void verify_sweep(const nlohmann::json& section);

/// Collective over all ranks. Returns the section on rank 0, null elsewhere. progress(line) is
/// called on rank 0 once per size with the nccl-tests table row (format_row). Throws
/// ddpsim::Error on bad options (min_bytes < 4, max < min, step_factor < 2, iters < 1) and
/// propagates communicator errors.
nlohmann::json run_sweep(Communicator& comm, const SweepOptions& opts,
                         const std::function<void(const std::string&)>& progress);

/// nccl-tests table header (two '#' lines) and one row from a row object of the section
/// (out-of-place and in-place columns side by side when both rows are given).
std::string format_header();
std::string format_row(model::CollectiveOp op, const nlohmann::json& out_of_place,
                       const nlohmann::json* in_place, int root = 0);

/// Cores this process may use, at least 1: its affinity mask (sched_getaffinity), lowered to
/// the whole CPUs of its cgroup's CPU quota where one is set (a container given 2.5 CPUs of time
/// on a 16-core host: 2), since threads beyond the quota wait for the next quota period.
int usable_cores();

/// The CPU quota of this process's cgroup in CPUs (quota / period), or nullopt when none is set
/// or none can be read: the smallest along the path from the hierarchy's top down to the
/// process's cgroup (a parent's quota binds its children). cgroup v2: `cpu.max` ("max 100000" is
/// no limit, "250000 100000" is 2.5) under `<root>`, path from the "0::" line of
/// `proc_self_cgroup`; cgroup v1: `cpu.cfs_quota_us` over `cpu.cfs_period_us` (-1: no limit)
/// under `<root>/cpu`, else `<root>/<controllers>` (e.g. "cpu,cpuacct"), path from the line whose
/// controllers include "cpu". Where the listed path is not mounted (a container without its own
/// cgroup namespace), only the hierarchy's top is read. Paths are parameters for tests.
std::optional<double> cgroup_cpu_quota(const std::string& proc_self_cgroup = "/proc/self/cgroup",
                                       const std::string& cgroup_root = "/sys/fs/cgroup");

/// Empty, or a remark for the profile and the sweep's output when the host runs more busy Gloo
/// threads than it has cores. Each Gloo rank has two: the caller, which copies and reduces, and
/// the device's event loop, which reads and writes the sockets and spins (epoll is level
/// triggered) while the caller holds the socket's lock. When both share a core, a call can wait
/// a scheduler tick (4 ms at HZ=250) for the holder to run again. Measured on the 2-vCPU VM with
/// 2 ranks (results/CALIBRATION.md, scripts/gloo-scheduling.sh): a 768 KiB all-reduce's median
/// was 0.42-0.48 ms under SCHED_FIFO, 1.3-3.6 ms as scheduled by default and 4.0 ms with each
/// rank pinned to one core; 64 KiB-4 MiB medians moved by up to 69% between two runs. NCCL, and
/// Gloo with enough cores: empty.
std::string oversubscription_note(const std::string& backend, int local_ranks, int cores);

}  // namespace ddpsim::comm
