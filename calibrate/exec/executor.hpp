// executor.hpp: the real DDP executor — trains a scenario's MLP or GPT-2 data-parallel on this
// machine's CPUs (one process per rank, Gloo over TCP, OpenBLAS single-threaded per rank) and
// measures every step the way `ddpsim predict` reports it.
//
// What runs (PyTorch DDP semantics, see reducer.hpp): rank 0's parameters are broadcast at the
// start (each rank initialises differently, so a missing broadcast shows); the data set is
// synthetic and deterministic (mlp.hpp), sharded like DistributedSampler(shuffle=False): rank r
// of N takes global samples r, r+N, r+2N, ...; each step runs grad_accumulation micro-batches
// of per_gpu_batch, the first k-1 under no_sync (local accumulation, no communication), the loss
// divided by k; the first step uses one bucket, later steps the rebuilt buckets; then the
// optimizer. Learning rate: training.lr scaled to the global batch (linear/sqrt/none) with its
// linear warmup, or --lr; default 0.05 for SGD/momentum, 1e-3 for Adam/AdamW.
//
// Strategies: ddp, and zero1 (see ExecConfig::zero1). Each step also measures the gradient
// noise scale B_simple from the per-rank and averaged gradients (ExecConfig::noise_scale,
// noise_scale.hpp; the results' "noise_scale" block, README.md).
// Networks (network.hpp): "model": {"mlp": ...} (mlp_network.hpp) and a GPT-2 "hf_config" with
// eager attention and no dropout (gpt2.hpp).
// Refused up front with the reason (ddpsim::UnsupportedError): other models, other sharded
// strategies, precisions other than fp32, PowerSGD/top-k hooks, sweeps, and runs
// whose memory (all ranks on this host) exceeds 80% of MemAvailable.
//
// results.hpp turns the ranks' records into the results document and the trace.
//
//   ExecConfig c = config_from_scenario(model::load_scenario(path), {});
//   RankRecord r = run_rank(c, *comm);   // in every rank
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/comm/communicator.hpp"
#include "calibrate/exec/gpt2.hpp"
#include "calibrate/exec/mlp.hpp"
#include "calibrate/exec/mlp_network.hpp"
#include "calibrate/exec/network.hpp"
#include "calibrate/exec/reducer.hpp"
#include "model/scenario/scenario.hpp"

namespace ddpsim::exec {

/// Command-line values that replace the scenario's (std::nullopt: keep the scenario's).
struct ExecOverrides {
  std::optional<int> ranks;
  std::optional<std::int64_t> per_gpu_batch;
  std::optional<int> grad_accumulation;
  std::optional<bool> overlap;
  std::optional<int> steps;
  std::optional<double> lr;
  int warmup_steps = 1;  ///< steps run but left out of the medians (step 1 uses one bucket)
  Loss loss = Loss::kMse;
  bool noise_scale = true;       ///< measure the gradient noise scale (noise_scale.hpp)
  double noise_ema_beta = 0.95;  ///< its EMA factor, [0, 1)
  bool independent = false;      ///< ExecConfig::independent (--independent / --no-comm)
  bool cuda = false;             ///< ExecConfig::cuda (--backend cuda)
};

struct ExecConfig {
  std::string scenario_file, scenario_name, model_label;
  std::shared_ptr<const model::Workload> workload;
  MlpSpec spec;                  ///< the MLP, when gpt2 is empty
  std::optional<Gpt2Spec> gpt2;  ///< the transformer, when the model is a GPT-2 config
  int ranks = 1;
  std::int64_t per_gpu_batch = 1;
  int grad_accumulation = 1;
  OptimizerConfig optimizer;
  std::string optimizer_name;
  double lr_base = 0;  ///< at the global batch, before warmup
  std::int64_t lr_warmup_steps = 0;
  Loss loss = Loss::kMse;
  model::BucketOptions buckets;
  double bucket_cap_mb = 25;
  bool overlap = true;
  /// ZeRO stage 1 (DeepSpeed): after backward one reduce-scatter of the flat gradients, the
  /// optimizer updates this rank's 1/N of the parameters (and keeps only that state), then an
  /// all-gather of the parameters. No bucketing, no overlap (DeepSpeed's stage 1 reduces after
  /// backward as well); hooks do not apply.
  bool zero1 = false;
  Hook hook = Hook::kNone;
  std::string hook_name = "none";
  int steps = 5;         ///< measured steps
  int warmup_steps = 1;  ///< extra steps before them
  std::uint64_t seed = 1;
  /// Gradient noise scale (noise_scale.hpp): each rank's squared gradient norm is taken in the
  /// backward callback of the synchronising micro-batch (before the reducer can overwrite the
  /// layer with the average), the averaged gradient's after the step's timed interval, then one
  /// all_gather of the float64 norms (8 bytes per rank, 16 under ZeRO-1) — also outside the
  /// timed interval, and timed on its own. The per-rank norm does add to backward_time_s.
  bool noise_scale = true;
  double noise_ema_beta = 0.95;
  /// The efficiency baseline (ddpsim validate --efficiency): every rank runs the same forward,
  /// backward and optimizer on its own gradients with no collective in the step (no bucket
  /// all-reduce, no noise-scale gather; noise_scale is off), all ranks at once — N independent
  /// processes sharing the cores and memory bandwidth as the DDP ranks do. Ranks still meet at a
  /// barrier before the first step and after the last (outside the timed steps), and start from
  /// rank 0's broadcast weights. DDP only (zero1 is refused). Results say "mode": "independent".
  bool independent = false;
  /// The CUDA backend (cuda_run.hpp): one GPU, the scenario's precision must be amp_bf16 (autocast
  /// with fp32 masters); the CPU backend trains fp32 only.
  bool cuda = false;

  /// Samples per rank per step (the noise scale's B_small).
  std::int64_t rank_batch() const { return per_gpu_batch * grad_accumulation; }

  std::int64_t global_batch() const { return per_gpu_batch * grad_accumulation * ranks; }
  int total_steps() const { return steps + warmup_steps; }
  /// Peak host memory of one rank (parameters, gradients, buckets, optimizer state, teacher,
  /// activations, its data shard), bytes.
  std::int64_t memory_per_rank_bytes() const;
};

/// This rank's network with its data shard (DistributedSampler, shuffle=False: global sample
/// pos * world + rank), initialised from a rank-dependent seed (DDP's broadcast makes it rank 0's).
std::unique_ptr<Network> make_network(const ExecConfig& c, int rank, int world);

/// Validates and resolves; throws ddpsim::UnsupportedError naming what the executor cannot run.
ExecConfig config_from_scenario(const model::Scenario& s, const ExecOverrides& o);
/// Throws UnsupportedError when `ranks` copies of the run do not fit in `available_bytes`.
void check_memory(const ExecConfig& c, std::int64_t available_bytes);
/// MemAvailable from /proc/meminfo, bytes (0 when unknown).
std::int64_t mem_available_bytes();

/// What one rank measured; times are steady_clock nanoseconds (shared by the processes of a host).
struct Span {
  int stream = 1;  ///< 1 compute, 2 communication (simulator/event/trace.hpp's tids)
  int step = 0;
  std::string name, layer;
  std::int64_t bytes = -1;
  std::int64_t start_ns = 0, end_ns = 0;
};
struct StepRecord {
  std::int64_t start_ns = 0;
  double step_time_s = 0, forward_time_s = 0, backward_time_s = 0, optimizer_time_s = 0,
         comm_time_s = 0, exposed_comm_s = 0, loss = 0, lr = 0;
  /// Squared gradient norms: this rank's own gradient (before the all-reduce), their mean over
  /// the ranks (|G_small|^2) and the averaged gradient's (|G_big|^2); the time spent on the two
  /// norms and on the all_gather of them, seconds. Zero when noise_scale is off.
  double g_local_sq = 0, g_small_sq = 0, g_big_sq = 0, noise_norm_s = 0, noise_comm_s = 0;
  nlohmann::json buckets = nlohmann::json::array();  ///< [{bytes, ready_s, start_s, end_s}]
};
struct RankRecord {
  int rank = 0;
  std::vector<StepRecord> steps;
  std::vector<Span> spans;
  std::vector<float> final_params;  ///< filled on rank 0 only
};

/// Trains in this rank (collective: every rank calls it). Once every rank has joined (the weights'
/// broadcast and a barrier behind the rendezvous), rank 0 prints "ddpsim-exec: training started:
/// ..." on stderr before the first step: tests that fault a rank during training wait for it
/// (tests/reliability/faults_test.cpp). Throws ddpsim::Error on a communication failure.
RankRecord run_rank(const ExecConfig& c, comm::Communicator& comm);

}  // namespace ddpsim::exec
