// profile.hpp: a calibration profile (what `ddpsim calibrate` measured on a machine) and the
// lookups the simulator makes in it.
//
// The profile is a JSON file (format "ddpsim-profile", version 1) with these sections, every key
// checked strictly against profile_keys() (profile_keys.hpp; only "context" is free-form):
//   "context"          host, CPU/GPU model, library versions, date, git revision (informational)
//   "machine"          the fingerprint of the machine that measured (machine_fingerprint.hpp;
//                      machine_match.hpp says when it is this machine; absent: unknown)
//   "gemms"            one row per distinct GEMM shape x dtype x micro-batch that was timed:
//                      m, n, k, count, transa, transb, dtype, batch, batch_dim, time_s (median),
//                      time_min_s/time_max_s and time_p10_s/time_p90_s (spread), gflops
//   "memory_bandwidth" STREAM-style copy/triad (CPU) or device-to-device copy (GPU), GB/s
//   "collectives"      the nccl-tests-style table of calibrate/comm's run_sweep or of an
//                      imported nccl-tests log, plus a "fit" per op (add_collective_fits);
//                      a row with "wrong" > 0 (its result was checked and found wrong) is
//                      refused (InputError at that row's /wrong), never fitted
//   "kernels"          memory-bound kernels (Adam update, casts), time and GB/s
//   "layer_times"      per-layer forward/backward times imported from a PyTorch profiler trace
//   "interference"     compute slowdown while a collective runs: each rank timed a GEMM alone
//                      and then while an all-reduce ran on a communication thread (as the
//                      executor's comm thread does); factor = max(1, median concurrent / median
//                      alone), the raw ratio beside it ("ratio", may be < 1 by noise)
// Times in the file are seconds (`*_s`) except the collective rows, which keep nccl-tests'
// microseconds (`time_us`). Inside this API every time is seconds and every size bytes.
//
// Lookups return an Estimate: the value, an interval and whether it was extrapolated.
//   - gemm_time_s(gemm, dtype, batch): the GEMM family (same per-sample shape, transposes,
//     dtype and batch dimension) measured at several micro-batches; between two measured
//     batches the time is linear in FLOPs (FLOPs are linear in the batch); above the largest it
//     keeps the largest batch's throughput; below the smallest it follows the line through the
//     two smallest batches, never faster than the smallest batch's throughput. Interval: the
//     same interpolation of the p10/p90 (else min/max) spread.
//   - collective_time_s(op, bytes, ranks): inside the measured sizes, log-log interpolation
//     between neighbouring rows (out-of-place rows; in-place when a table has only those);
//     outside them, the piecewise alpha-beta fit of the op, flagged as extrapolation, with an
//     interval of +-2 rms relative residuals of the segment times the nearest row's spread. At
//     another rank count than measured, the fit's latency is rescaled by the ring step count and
//     its per-byte cost by the nccl-tests volume factor (flagged).
// profile_hardware.hpp reads a profile as a hardware description (scenario "hardware":
// {"profile": ...}).
//
//   Profile p = Profile::load("results/profile-vm.json");
//   auto t = p.gemm_time_s(workload.layers[0].gemms[0], DType::kFp32, 32);   // optional
//   Estimate c = p.collective_time_s(CollectiveOp::kAllReduce, 25 << 20, 2);
//   if (c.extrapolated) warn(c.note);
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/collective_op.hpp"
#include "model/profile/alpha_beta_fit.hpp"
#include "model/workload/workload.hpp"

namespace ddpsim::model {

/// A looked-up time with its uncertainty.
struct Estimate {
  double time_s = 0;
  double low_s = 0;   ///< lower end of the interval
  double high_s = 0;  ///< upper end of the interval
  bool extrapolated = false;
  std::string note;  ///< why it is extrapolated (empty otherwise)
};

/// One timed GEMM (a row of "gemms"). C[m,n] = op(A)[m,k] op(B)[k,n], `count` instances,
/// row-major operands as PyTorch holds them.
struct ProfileGemm {
  std::vector<std::string> ops;  ///< the workload's GEMMs of this shape ("fc1.fwd", ...)
  std::string layer;
  GemmShape shape;  ///< as run, i.e. at `batch`
  DType dtype = DType::kFp32;
  std::int64_t batch = 1;
  std::optional<BatchDim> batch_dim;  ///< which extent is batch x per-sample (none: a grid shape)
  int repeats = 1;
  double time_s = 0;  ///< median
  double low_s = 0;   ///< p10 when given, else min
  double high_s = 0;  ///< p90 when given, else max
};

struct CollectiveRow {
  double size_bytes = 0;
  bool in_place = false;
  double time_s = 0;  ///< median (from time_us)
  double min_s = 0;   ///< time_us_min, else time_s
  double max_s = 0;   ///< time_us_max, else time_s
};

struct CollectiveTable {
  CollectiveOp op = CollectiveOp::kAllReduce;
  int ranks = 1;
  std::vector<CollectiveRow> rows;  ///< the rows the lookups use, sorted by size, sizes > 0
  PiecewiseFit fit;
};

/// Per-layer times from a PyTorch profiler trace ("layer_times").
struct LayerTime {
  std::string name;
  double forward_s = 0;
  double backward_s = 0;
};

class Profile {
 public:
  /// Validates and reads a profile document; `file` is named in errors. Computes the
  /// collective fits when the document has none. Throws InputError (file + JSON pointer).
  static Profile from_json(nlohmann::json doc, const std::string& file);
  static Profile load(const std::string& path);

  const std::string& file() const { return file_; }
  /// The document, with the collective fits filled in.
  const nlohmann::json& document() const { return doc_; }
  std::string host() const;
  std::string backend() const;  ///< "cpu", "cuda" or "import"
  int ranks() const { return ranks_; }

  const std::vector<ProfileGemm>& gemms() const { return gemms_; }
  /// The time of `g` at micro-batch `batch` in `dtype`; nullopt when the profile holds no GEMM
  /// of that family (the caller falls back to the peak-FLOP model).
  std::optional<Estimate> gemm_time_s(const Gemm& g, DType dtype, std::int64_t batch) const;
  /// An exactly measured shape; nullopt when absent.
  std::optional<Estimate> gemm_time_s(const GemmShape& shape, DType dtype) const;
  /// Highest measured GEMM throughput in `dtype`, FLOP/s (0 when none).
  double best_gemm_flops(DType dtype) const;

  const CollectiveTable* collective(CollectiveOp op) const;
  /// Throws Error when the profile has no table for `op`. Preconditions: bytes >= 0, ranks >= 2.
  Estimate collective_time_s(CollectiveOp op, double bytes, int ranks) const;

  /// Median bandwidth of a "memory_bandwidth" kernel ("triad", "copy", "d2d_copy"), bytes/s.
  std::optional<double> memory_bandwidth_bytes_per_s(const std::string& kernel) const;
  const std::vector<LayerTime>& layer_times() const { return layer_times_; }
  /// The measured compute slowdown while a collective is in flight ("interference"/"factor",
  /// >= 1: the default of simulation.interference); nullopt when the profile did not measure it.
  std::optional<double> interference_factor() const { return interference_; }

 private:
  std::string file_;
  nlohmann::json doc_;
  int ranks_ = 1;
  std::vector<ProfileGemm> gemms_;
  std::vector<CollectiveTable> collectives_;
  std::vector<LayerTime> layer_times_;
  std::optional<double> interference_;
};

/// Fills "fit" in every op of a "collectives" section (in place): the piecewise alpha-beta fit
/// (fit_piecewise_alpha_beta, weights 1/t^2) of the op's out-of-place rows (in-place when only
/// those exist), with per segment alpha_s, beta_s_per_byte, the bandwidths they imply, the
/// per-step latency a/ring_steps, R^2 and residuals. Throws Error when a table has fewer than
/// two distinct sizes.
void add_collective_fits(nlohmann::json& collectives);

}  // namespace ddpsim::model
