// fabric_fit.hpp: a system's inter-node fabric fitted to the user's own nccl-tests log.
//
// A collectives profile imported from a multi-node nccl-tests log (`ddpsim-calibrate import
// nccl-tests`, "collectives": {"nodes": N, "ranks": n, ...}) measures the user's fabric at one
// rank count. Its tables replace the model's collectives at that rank count
// (Predictor::profile_collective_s); every other rank count is costed by NCCL's model
// (collective.hpp), which knows the fabric only from the preset's NIC: its rate and latency. The
// fit makes that model reproduce the log: it replays the log as it ran (its ranks over its
// nodes, its NCCL release and GPUs per launching thread) on the scenario's system and picks the
// scale s of the share of the NIC's rate NCCL reaches (collectives.inter_node.ring_efficiency)
// and the NIC latency L (the physical latency of each inter-node step) that
// minimise sum_i (ln t_model(size_i) - ln t_log(size_i))^2 over the log's out-of-place rows:
// a log-spaced grid (s in [1/16, 2] in steps of 2^(1/4); L in [0.5, 1000] us in 23 steps),
// then a finer grid (1/8 of a step) around the best point, keeping the preset's NIC unless a
// point fits strictly better. A forced NCCL_ALGO / NCCL_PROTO the log printed is replayed as
// forced, and the buffer and NVLS chunk sizes it printed (NCCL_BUFFSIZE, NCCL_NVLS_CHUNKSIZE,
// NCCL_NVLSTREE_MAX_CHUNKSIZE) as set. Collectives of every other rank count
// and node count then run on that NIC (apply_fabric_fit): the model's scaling with nodes
// (rings, trees, NVLS trees, channel counts) is NCCL's, the fabric is the user's.
//
//   std::optional<FabricFit> f = use_fitted_fabric(hw);  // hw's NIC now the fitted one
#pragma once

#include <optional>
#include <string>

#include "model/hardware/hardware.hpp"

namespace ddpsim::sim {

struct FabricFit {
  /// s: the share of the NIC's rate NCCL reaches (collectives.inter_node.ring_efficiency, which
  /// the NCCL model applies to every inter-node channel) over the preset's.
  double bandwidth_scale = 1;
  double ring_efficiency = 1;  ///< the fitted share itself: the preset's x s
  double latency_s = 0;        ///< L: the NIC's fitted physical latency per inter-node step
  /// What the log could identify: the rate needs 3 rows >= 16 MiB, the latency 3 rows <= 1 MiB;
  /// the other stays the preset's.
  bool fitted_rate = true, fitted_latency = true;
  double preset_rms = 0;  ///< rms of ln(t_model / t_log) with the preset's NIC
  double fitted_rms = 0;  ///< ... with the fitted NIC
  int points = 0;         ///< log rows the fit used
  int ranks = 0;          ///< the log's ranks
  int nodes = 0;          ///< ... over this many nodes
  std::string ops;        ///< the log's collectives ("all_reduce", "all_reduce, all_gather")
};

/// The fit of `hw`'s inter-node NIC to the multi-node collective tables of `hw.profile`;
/// nullopt when there is nothing to fit: no profile, a profile that replaces the whole hardware
/// (the alpha-beta collective model, its own measured line), no "collectives" section with
/// "nodes" >= 2 dividing its ranks, fewer than 4 out-of-place rows, or neither 3 rows of at
/// most 1 MiB (latency) nor 3 of at least 16 MiB (rate).
std::optional<FabricFit> fit_fabric(const model::HardwareSpec& hw);

/// `hw` with the fitted NIC: inter_tuning.ring_efficiency x s (the NIC's physical rate, which
/// the event engine's flows share with other traffic, is kept), inter_node.latency L.
void apply_fabric_fit(model::HardwareSpec& hw, const FabricFit& f);

/// One line for a prediction's notes: what was fitted, on what, and how well.
std::string describe(const FabricFit& f);

/// fit_fabric, then apply_fabric_fit and describe() into hw.warnings: how every front-end
/// (Predictor, `ddpsim collective`, the Python collective table) reads a collectives profile.
std::optional<FabricFit> use_fitted_fabric(model::HardwareSpec& hw);

}  // namespace ddpsim::sim
