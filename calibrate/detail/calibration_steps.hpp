// detail/calibration_steps.hpp: the measurements of a calibration run (calibration_run.hpp), one
// function per step, each returning its rows of the profile. Not part of the public API.
//
// Every rank runs every step with the same Run: a step's barriers (Run::sync) are therefore
// reached by all ranks in the same order, and only rank 0 (Run::lead) keeps rows, adds notes
// and prints progress (stderr, "calibrate: ..."). Row formats are model/profile/profile.hpp's.
//
//   Run r(options);                          // then rank, world, device, t, sync
//   json bandwidth = measure_bandwidth(r);   // 1.
//   json gemms = measure_gemms(r, plan, dtypes);
//   json kernels = measure_kernels(r, bandwidth);
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibrate/calibration_run.hpp"
#include "calibrate/gemm_plan.hpp"
#include "calibrate/timing.hpp"
#include "model/workload/workload.hpp"
#ifdef DDPSIM_HAVE_GLOO
#include "calibrate/comm/communicator.hpp"
#include "calibrate/comm/rank.hpp"
#endif

namespace ddpsim::calib::detail {

/// What every step of a run shares.
struct Run {
  explicit Run(const RunOptions& options) : o(options) {}
  const RunOptions& o;
  int rank = 0, world = 1, local_rank = 0;
  bool lead = true;                                ///< rank 0: keeps the rows, prints, writes
  std::string device = "cpu";                      ///< "cpu" or "cuda:<local rank>"
  TimingOptions t;                                 ///< how each measurement is timed
  std::function<void()> sync;                      ///< a barrier of every rank (nothing when alone)
  nlohmann::json notes = nlohmann::json::array();  ///< the profile's "notes"
};

/// Prints "calibrate: LINE" to stderr when `lead`.
void say(bool lead, const std::string& line);
/// "1024x512x64 NT x4": m x n x k, the transposes, the count when above 1.
std::string shape_text(const model::GemmShape& s);
/// The largest GEMM (FLOP per call) timed on the CPU; larger ones are skipped with a note.
double cpu_flop_cap(const RunOptions& o);
/// Passes over the GEMM plan: 3 on the CPU (the middle median is kept), 1 on a GPU.
int gemm_passes(const RunOptions& o);

/// 1. "memory_bandwidth" (CPU: copy and triad, rank 0 alone, then every rank at once).
nlohmann::json measure_bandwidth(Run& r);
/// 2. "gemms": every shape of `plan` in every dtype, all ranks in step.
nlohmann::json measure_gemms(Run& r, const std::vector<PlannedGemm>& plan,
                             const std::vector<model::DType>& dtypes);
/// 3. "kernels": the memory-bound training kernels; on a GPU also the device copy, a row it
/// appends to `bandwidth`.
nlohmann::json measure_kernels(Run& r, nlohmann::json& bandwidth);
#ifdef DDPSIM_HAVE_GLOO
/// 4. "collectives": the sweep of every op, each result checked, then fitted (rank 0).
nlohmann::json measure_collectives(Run& r, comm::Communicator& c, const comm::RankInfo& me);
/// 5. "interference": the largest GEMM of `plan` under a cap, alone and while all-reduces run.
nlohmann::json interference_section(Run& r, comm::Communicator& c,
                                    const std::vector<PlannedGemm>& plan);
#endif

}  // namespace ddpsim::calib::detail
