// interference.hpp: how much slower a rank computes while a collective is in flight (the
// profile's "interference" block, the default of the event simulator's simulation.interference).
//
// The executor (calibrate/exec) overlaps the backward pass with gradient all-reduces that run on
// a communication thread; on a CPU rank both compete for the core, the caches and the memory
// bus. measure_interference reproduces that on every rank at once:
//   for each of `rounds` rounds:
//     alone:      time single GEMM calls back to back for window_s, no collective anywhere;
//     concurrent: a communication thread runs N all-reduces of collective_bytes (N chosen so
//                 they last about window_s, the same N on every rank) while the main thread
//                 times the same GEMM; only calls that ended before the thread finished count.
// Alternating the two phases cancels slow drifts of a shared machine's load. Each rank
// summarises its samples (mean, median, p10/p90, min/max); the block holds the mean over ranks
// of each statistic, ratio = concurrent mean / alone mean (the compute time lost, tail
// included; ratio_median beside it), factor = max(1, ratio) (a ratio below 1 is noise: the
// simulator's factor is a slowdown) and every rank's own ratio.
//
//   InterferenceOptions o;  o.gemm = {256, 1024, 512, 1, false, true};
//   nlohmann::json block = measure_interference(*comm, o);   // rank 0; null elsewhere
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "calibrate/comm/communicator.hpp"
#include "model/workload/workload.hpp"

namespace ddpsim::calib {

struct InterferenceOptions {
  model::GemmShape gemm{256, 256, 256, 1, false, false};
  std::int64_t collective_bytes = std::int64_t{16} << 20;  ///< all-reduce size, bytes
  int rounds = 3;
  double window_s = 0.5;  ///< length of one phase
};

/// Collective over all ranks of `c` (host-memory communicator: Gloo). Returns the profile's
/// "interference" block on rank 0 and null elsewhere. Throws ddpsim::Error when a phase gets no
/// sample (the GEMM is longer than the window) and propagates communicator errors.
nlohmann::json measure_interference(comm::Communicator& c, const InterferenceOptions& o);

}  // namespace ddpsim::calib
