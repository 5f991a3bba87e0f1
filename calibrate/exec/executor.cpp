#include "calibrate/exec/executor.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include "calibrate/exec/noise_scale.hpp"
#include "model/error.hpp"

namespace ddpsim::exec {
namespace {

using json = nlohmann::json;

std::int64_t ns_of(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
double secs(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// PyTorch's DDP constructor broadcasts the module state from rank 0 in buckets of
// broadcast_bucket_size = 250 MiB (_sync_module_states).
constexpr std::size_t kBroadcastBucketFloats = (std::size_t{250} << 20) / sizeof(float);

// Fault injection for the executor's failure tests: DDPSIM_EXEC_FAULT="kill:R:S" makes rank R
// SIGKILL itself at the start of step S (1-based); "vanish:R:S" makes it exit 0 silently, like
// a peer whose launcher does not notice.
void maybe_fault(int rank, int step) {
  static const std::string spec = [] {
    const char* v = std::getenv("DDPSIM_EXEC_FAULT");
    return std::string(v ? v : "");
  }();
  if (spec.empty()) return;
  const auto a = spec.find(':'), b = spec.rfind(':');
  if (a == std::string::npos || a == b) return;
  const std::string kind = spec.substr(0, a);
  const int r = std::atoi(spec.substr(a + 1, b - a - 1).c_str());
  const int s = std::atoi(spec.substr(b + 1).c_str());
  if (r != rank || s != step + 1) return;
  std::fflush(stdout);
  if (kind == "kill") ::kill(::getpid(), SIGKILL);
  if (kind == "vanish") ::_exit(0);
}

// After the step's timed interval: the averaged gradient's squared norm (every rank holds it
// after DDP's all-reduce; under ZeRO-1 each rank holds one shard of it, and the shards' squares
// add up), then one all_gather of every rank's float64 norms. Gathered, not all-reduced: the
// communicator reduces float32 only, and tr(Sigma) comes from the difference |G_small|^2 -
// |G_big|^2, which float32 sums would round away when the noise is small against the signal;
// the gather moves the bits unchanged and each rank adds them in double.
void measure_noise(const ExecConfig& c, comm::Communicator& comm, Network& net,
                   const std::vector<float>& shard_g, double local_sq, Clock::duration norm_time,
                   StepRecord& sr, RankRecord& rec) {
  const int n = comm.size();
  const auto t0 = Clock::now();
  const double big_part = c.zero1 ? squared_norm(shard_g.data(), shard_g.size())
                                  : squared_norm(net.grads().data(), net.grads().size());
  const auto t1 = Clock::now();
  sr.noise_norm_s = secs(norm_time + (t1 - t0));
  sr.g_local_sq = local_sq;
  if (n == 1) {
    sr.g_small_sq = local_sq;
    sr.g_big_sq = big_part;
    return;
  }
  const std::size_t per_rank = c.zero1 ? 2 : 1;  // doubles
  double mine[2] = {local_sq, big_part};
  std::vector<float> send(2 * per_rank), recv(2 * per_rank * static_cast<std::size_t>(n));
  std::memcpy(send.data(), mine, per_rank * sizeof(double));
  comm.all_gather(send.data(), recv.data(), send.size());
  const auto t2 = Clock::now();
  std::vector<double> all(per_rank * static_cast<std::size_t>(n));
  std::memcpy(all.data(), recv.data(), all.size() * sizeof(double));
  double small_sum = 0, big_sum = 0;
  for (int r = 0; r < n; ++r) {
    small_sum += all[static_cast<std::size_t>(r) * per_rank];
    if (c.zero1) big_sum += all[static_cast<std::size_t>(r) * per_rank + 1];
  }
  sr.g_small_sq = small_sum / n;
  sr.g_big_sq = c.zero1 ? big_sum : big_part;
  sr.noise_comm_s = secs(t2 - t1);
  rec.spans.push_back({2, static_cast<int>(rec.steps.size()), "all_gather noise-scale norms", "",
                       static_cast<std::int64_t>(per_rank * sizeof(double)), ns_of(t1), ns_of(t2)});
}

}  // namespace

std::int64_t ExecConfig::memory_per_rank_bytes() const {
  const std::int64_t opt = Optimizer::state_bytes_per_param(optimizer.kind);
  const std::int64_t samples =
      static_cast<std::int64_t>(total_steps()) * grad_accumulation * per_gpu_batch;
  if (gpt2) {
    // parameters, gradients, bucket buffers (+ their 16-bit copies), optimizer state; the
    // activations of one micro-batch; the shard's tokens.
    const std::int64_t p = gpt2_param_count(*gpt2);
    return p * (4 + 4 + 4 + (hook == Hook::kNone ? 0 : 2) + opt) +
           gpt2_activation_bytes(*gpt2, per_gpu_batch) + samples * gpt2->seq * 4;
  }
  std::int64_t p = 0, width_sum = 0, width_max = 0;
  for (std::size_t i = 0; i + 1 < spec.widths.size(); ++i) {
    p += spec.widths[i] * spec.widths[i + 1] + (spec.bias ? spec.widths[i + 1] : 0);
  }
  for (auto w : spec.widths) width_sum += w, width_max = std::max(width_max, w);
  // parameters, gradients, bucket buffers (+ their 16-bit copies), optimizer state, teacher.
  const std::int64_t model = p * (4 + 4 + 4 + (hook == Hook::kNone ? 0 : 2) + opt + 4);
  // Saved inputs, pre-activations and outputs per layer: 3 floats per width per row, for the
  // student's micro-batch and for the teacher run over the whole shard.
  const std::int64_t acts = 3 * 4 * width_sum * (per_gpu_batch + samples);
  const std::int64_t data = samples * (4 * (spec.widths.front() + spec.widths.back()) + 4);
  return model + acts + data + 4 * width_max * per_gpu_batch * 2;
}

std::unique_ptr<Network> make_network(const ExecConfig& c, int rank, int world) {
  std::vector<std::int64_t> samples;
  const std::int64_t per_rank = static_cast<std::int64_t>(c.total_steps()) * c.rank_batch();
  samples.reserve(static_cast<std::size_t>(per_rank));
  for (std::int64_t pos = 0; pos < per_rank; ++pos) samples.push_back(pos * world + rank);
  const std::uint64_t init_seed = c.seed * 1000003ull + static_cast<std::uint64_t>(rank) + 1;
  if (c.gpt2) return std::make_unique<Gpt2>(*c.gpt2, init_seed, c.seed, samples, c.per_gpu_batch);
  return std::make_unique<MlpNetwork>(c.spec, init_seed, c.seed, samples, c.per_gpu_batch, c.loss);
}

std::int64_t mem_available_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

void check_memory(const ExecConfig& c, std::int64_t available) {
  const std::int64_t need = c.memory_per_rank_bytes() * c.ranks;
  if (available > 0 && static_cast<double>(need) > 0.8 * static_cast<double>(available)) {
    throw UnsupportedError(fmt::format(
        "{}: {} ranks need about {:.2f} GiB of host memory ({:.2f} GiB each) and this machine "
        "has {:.2f} GiB available (the executor uses at most 80%); use a smaller MLP, batch or "
        "fewer ranks",
        c.scenario_file, c.ranks, need / 1073741824.0, c.memory_per_rank_bytes() / 1073741824.0,
        available / 1073741824.0));
  }
}

ExecConfig config_from_scenario(const model::Scenario& s, const ExecOverrides& o) {
  auto refuse = [&](const std::string& why) {
    throw UnsupportedError(s.file + ": the executor cannot run this scenario: " + why);
  };
  if (!s.sweep.empty()) {
    refuse("it sweeps " + s.sweep.front().key + "; the executor runs one configuration");
  }
  const json& model = s.doc.at("model");
  if (!model.contains("mlp") && !model.contains("hf_config")) {
    refuse("its model is " + s.model_label +
           "; the executor trains \"mlp\" models and GPT-2 \"hf_config\" transformers");
  }
  if (s.parallelism.strategy != model::Strategy::kDdp &&
      s.parallelism.strategy != model::Strategy::kZero1) {
    refuse(std::string("strategy ") + model::strategy_name(s.parallelism.strategy) +
           " is not implemented; the executor runs ddp and zero1");
  }
  if (o.cuda && s.training.precision != model::Precision::kAmpBf16) {
    refuse(std::string("precision ") + model::precision_name(s.training.precision) +
           "; the CUDA backend trains amp_bf16 (autocast bf16 with fp32 master weights)");
  }
  if (!o.cuda && s.training.precision != model::Precision::kFp32) {
    refuse(std::string("precision ") + model::precision_name(s.training.precision) +
           "; the CPU executor trains in fp32 (use comm_hook fp16/bf16 for 16-bit gradients)");
  }
  ExecConfig c;
  c.scenario_file = s.file;
  c.scenario_name = s.name;
  c.model_label = s.model_label;
  c.workload = s.workload;
  if (model.contains("mlp")) {
    const json& m = model.at("mlp");
    for (const json& w : m.at("widths")) c.spec.widths.push_back(w.get<std::int64_t>());
    c.spec.bias = m.value("bias", true);
    c.spec.activation = parse_activation(m.value("activation", std::string("relu")));
  } else {
    if (s.workload->attention != model::AttentionImpl::kEager) {
      refuse(
          std::string("model.attention ") +
          model::attention_impl_name(s.workload->attention.value_or(model::AttentionImpl::kSdpa)) +
          "; the executor's GPT-2 materialises the s x s scores: set \"attention\": \"eager\"");
    }
    namespace fs = std::filesystem;
    fs::path cfg = model.at("hf_config").get<std::string>();
    if (cfg.is_relative()) cfg = fs::path(s.file).parent_path() / cfg;
    std::ifstream in(cfg);
    if (!in) refuse("cannot read its hf_config " + cfg.string());
    c.gpt2 = gpt2_spec_from_config(json::parse(in), s.workload->seq_len, cfg.string());
  }

  using Kind = model::CommHook::Kind;
  switch (s.parallelism.comm_hook.kind) {
    case Kind::kNone:
      break;
    case Kind::kFp16:
      c.hook = Hook::kFp16;
      break;
    case Kind::kBf16:
      c.hook = Hook::kBf16;
      break;
    default:
      refuse("comm_hook " + s.parallelism.comm_hook.text +
             " is not implemented (none, fp16, bf16)");
  }
  if (s.training.grad_reduce_dtype && c.hook == Hook::kNone) {
    if (*s.training.grad_reduce_dtype == model::DType::kFp16) c.hook = Hook::kFp16;
    if (*s.training.grad_reduce_dtype == model::DType::kBf16) c.hook = Hook::kBf16;
  }
  c.zero1 = s.parallelism.strategy == model::Strategy::kZero1;
  if (c.zero1 && c.hook != Hook::kNone) refuse("zero1 with a compression hook is not implemented");
  c.hook_name = c.hook == Hook::kNone ? "none" : c.hook == Hook::kFp16 ? "fp16" : "bf16";

  c.ranks = o.ranks.value_or(s.cluster.gpus);
  if (c.ranks < 1 || c.ranks > 64)
    refuse(fmt::format("{} ranks; this executor runs 1 to 64", c.ranks));
  c.per_gpu_batch = o.per_gpu_batch.value_or(s.training.per_gpu_batch);
  c.grad_accumulation = o.grad_accumulation.value_or(s.training.grad_accumulation);
  c.overlap = o.overlap.value_or(s.parallelism.overlap);
  c.steps = o.steps.value_or(s.simulation.steps);
  c.warmup_steps = o.warmup_steps;
  c.loss = o.loss;
  c.seed = s.simulation.seed;
  c.noise_scale = o.noise_scale;
  c.noise_ema_beta = o.noise_ema_beta;
  c.independent = o.independent;
  c.cuda = o.cuda;
  if (c.independent && c.zero1) refuse("--independent (no collectives) runs ddp only, not zero1");
  if (c.independent) c.noise_scale = false;  // its all_gather is a collective
  if (!(c.noise_ema_beta >= 0 && c.noise_ema_beta < 1)) {
    throw Error(
        fmt::format("the noise-scale EMA factor must be in [0, 1), got {}", c.noise_ema_beta));
  }
  if (c.per_gpu_batch < 1 || c.grad_accumulation < 1 || c.steps < 1 || c.warmup_steps < 0) {
    refuse("batch, accumulation and steps must be >= 1");
  }

  switch (s.training.optimizer) {
    case model::Optimizer::kSgd:
      c.optimizer.kind = OptimizerKind::kSgd;
      break;
    case model::Optimizer::kMomentum:
      c.optimizer.kind = OptimizerKind::kMomentum;
      break;
    case model::Optimizer::kAdam:
      c.optimizer.kind = OptimizerKind::kAdam;
      break;
    case model::Optimizer::kAdamW:
      c.optimizer.kind = OptimizerKind::kAdamW;
      c.optimizer.weight_decay = 0.01f;  // torch.optim.AdamW's default
      break;
  }
  c.optimizer_name = model::optimizer_name(s.training.optimizer);
  const bool adam =
      c.optimizer.kind == OptimizerKind::kAdam || c.optimizer.kind == OptimizerKind::kAdamW;
  if (o.lr) {
    c.lr_base = *o.lr;
  } else if (s.training.lr) {
    const auto& lr = *s.training.lr;
    const double ratio = static_cast<double>(c.global_batch()) / static_cast<double>(lr.base_batch);
    c.lr_base = lr.scaling == model::LrScaling::kLinear ? lr.base * ratio
                : lr.scaling == model::LrScaling::kSqrt ? lr.base * std::sqrt(ratio)
                                                        : lr.base;
    c.lr_warmup_steps = lr.warmup_steps;
  } else {
    c.lr_base = adam ? 1e-3 : 0.05;
  }
  c.optimizer.lr = static_cast<float>(c.lr_base);

  c.bucket_cap_mb = s.parallelism.bucket_cap_mb;
  c.buckets.grad_bytes = 4;  // buckets hold the fp32 gradients; a hook halves only the wire
  c.buckets.cap_bytes = static_cast<std::int64_t>(s.parallelism.bucket_cap_mb * 1024 * 1024);
  c.buckets.cap_defaulted = s.parallelism.bucket_cap_defaulted;
  if (s.parallelism.first_bucket_mb) {
    c.buckets.first_bucket_bytes =
        static_cast<std::int64_t>(*s.parallelism.first_bucket_mb * 1024 * 1024);
  }
  c.buckets.find_unused_parameters = s.parallelism.find_unused_parameters;
  c.buckets.static_graph = s.parallelism.static_graph;

  // The executor's network must be the workload the simulator predicts.
  const auto numels = c.gpt2 ? gpt2_tensor_numels(*c.gpt2) : tensor_numels(c.spec);
  DDPSIM_ASSERT(numels.size() == c.workload->tensors.size(),
                "executor MLP and model::build_mlp disagree on the tensors");
  for (std::size_t t = 0; t < numels.size(); ++t) {
    DDPSIM_ASSERT(numels[t] == c.workload->tensors[t].numel(),
                  "executor MLP and model::build_mlp disagree on a tensor's size");
  }
  return c;
}

namespace {

// One step's forward and backward passes over its k micro-batches (no_sync for all but the
// last, whose backward hands each layer's gradients to the reducer), with a span per layer.
struct MicroBatches {
  Clock::duration fwd{0}, bwd{0}, noise_norm{0};
  double loss_sum = 0;
  double local_sq = 0;  // this rank's squared gradient norm (the noise scale's |G_small|^2)
};

MicroBatches run_micro_batches(const ExecConfig& c, Network& net, Reducer& red, bool reduce,
                               int step, RankRecord& rec) {
  const int k = c.grad_accumulation;
  MicroBatches m;
  for (int mb = 0; mb < k; ++mb) {
    const bool sync = mb == k - 1;  // no_sync() for the first k-1 micro-batches
    if (sync && reduce) red.prepare();
    auto t_prev = Clock::now();
    const auto tf0 = t_prev;
    const float loss = net.forward_loss(
        static_cast<std::int64_t>(step) * k + mb, 1.0f / static_cast<float>(k), [&](int l) {
          const auto t = Clock::now();
          rec.spans.push_back({1, step, "fwd " + net.layer_name(l), net.layer_name(l), -1,
                               ns_of(t_prev), ns_of(t)});
          t_prev = t;
        });
    m.loss_sum += loss;
    const auto tb0 = Clock::now();
    rec.spans.push_back({1, step, "loss", "", -1, ns_of(t_prev), ns_of(tb0)});
    m.fwd += tb0 - tf0;
    t_prev = tb0;
    net.backward(/*accumulate=*/mb > 0, [&](int l) {
      if (sync && c.noise_scale) {
        // This rank's (accumulated) gradient of layer l, before layer_ready hands it to the
        // reducer, whose finalize() copies the average back over it.
        const auto tn = Clock::now();
        for (int t : net.grads_final_after(l)) {
          m.local_sq += squared_norm(net.grads().data() + net.offset(t),
                                     static_cast<std::size_t>(net.numel(t)));
        }
        m.noise_norm += Clock::now() - tn;
      }
      if (sync && reduce) red.layer_ready(l);
      const auto t = Clock::now();
      rec.spans.push_back(
          {1, step, "bwd " + net.layer_name(l), net.layer_name(l), -1, ns_of(t_prev), ns_of(t)});
      t_prev = t;
    });
    m.bwd += Clock::now() - tb0;
  }
  return m;
}

}  // namespace

RankRecord run_rank(const ExecConfig& c, comm::Communicator& comm) {
  const int rank = comm.rank(), n = comm.size();
  DDPSIM_ASSERT(n == c.ranks, "communicator size differs from the configured ranks");
  RankRecord rec;
  rec.rank = rank;
  const int k = c.grad_accumulation;

  // Each rank starts from different weights; DDP's constructor makes them rank 0's.
  const std::unique_ptr<Network> net_owner = make_network(c, rank, n);
  Network& net = *net_owner;
  auto& p = net.params();
  for (std::size_t off = 0; off < p.size(); off += kBroadcastBucketFloats) {
    const std::size_t cnt = std::min(kBroadcastBucketFloats, p.size() - off);
    comm.broadcast(p.data() + off, p.data() + off, cnt, 0);
  }

  // ZeRO-1 pads the flat parameters to a multiple of N; rank r owns [r*S, (r+1)*S).
  const std::size_t shard =
      (p.size() + static_cast<std::size_t>(n) - 1) / static_cast<std::size_t>(n);
  std::vector<float> full_pad, shard_p, shard_g;
  if (c.zero1) {
    full_pad.assign(shard * static_cast<std::size_t>(n), 0.0f);
    shard_p.assign(shard, 0.0f);
    shard_g.assign(shard, 0.0f);
  }
  Optimizer opt(c.optimizer, c.zero1 ? shard : p.size());
  Reducer red(comm, net, c.hook, c.overlap);
  // The Reducer runs with two ranks or more: one rank trains as a script without DDP would (no
  // gradient copies into buckets and back), which is what the simulator's one-GPU step is.
  const bool reduce = !c.zero1 && !c.independent && n > 1;
  model::BucketOptions first = c.buckets;
  first.first_iteration = true;
  const model::BucketPlan first_plan = model::assign_buckets(*c.workload, first);
  const model::BucketPlan plan = model::assign_buckets(*c.workload, c.buckets);

  comm.barrier();
  if (rank == 0) {
    std::fprintf(stderr, "ddpsim-exec: training started: %d ranks, %d warm-up + %d steps\n", n,
                 c.warmup_steps, c.steps);
  }
  for (int step = 0; step < c.total_steps(); ++step) {
    maybe_fault(rank, step);
    if (step == 0) red.set_plan(first_plan);  // PyTorch's first iteration: one bucket
    if (step == 1) red.set_plan(plan);        // rebuilt in gradient-ready order
    StepRecord sr;
    const auto t_step = Clock::now();
    sr.start_ns = ns_of(t_step);
    const MicroBatches mbs = run_micro_batches(c, net, red, reduce, step, rec);
    Clock::duration fwd = mbs.fwd, bwd = mbs.bwd;
    const Clock::duration noise_norm = mbs.noise_norm;
    const double loss_sum = mbs.loss_sum, local_sq = mbs.local_sq;
    Clock::duration wait{0};
    Clock::time_point rs0, rs1, ag0, ag1;
    if (c.zero1) {
      // Averaged gradients, this rank's shard only.
      rs0 = Clock::now();
      const float inv_n = 1.0f / static_cast<float>(n);
      const auto& g = net.grads();
      for (std::size_t i = 0; i < g.size(); ++i) full_pad[i] = g[i] * inv_n;
      std::fill(full_pad.begin() + static_cast<std::ptrdiff_t>(g.size()), full_pad.end(), 0.0f);
      comm.reduce_scatter(full_pad.data(), shard_g.data(), shard);
      rs1 = Clock::now();
      wait = rs1 - rs0;
    } else if (reduce) {
      // finalize_backward: its copies back into the gradients are backward (compute) time,
      // the rest is waiting for communication.
      const Finalized fin = red.finalize();
      wait = fin.wait;
      bwd += fin.copy;
    }
    const auto t_opt = Clock::now();
    const double warm =
        c.lr_warmup_steps > 0
            ? std::min(1.0, static_cast<double>(step + 1) / static_cast<double>(c.lr_warmup_steps))
            : 1.0;
    sr.lr = c.lr_base * warm;
    opt.set_lr(static_cast<float>(sr.lr));
    Clock::time_point t_end;
    if (c.zero1) {
      const std::size_t base = shard * static_cast<std::size_t>(rank);
      for (std::size_t i = 0; i < shard; ++i) {
        shard_p[i] = base + i < p.size() ? p[base + i] : 0.0f;
      }
      opt.step(shard_p, shard_g);
      ag0 = Clock::now();
      rec.spans.push_back({1, step, "optimizer", "", -1, ns_of(t_opt), ns_of(ag0)});
      comm.all_gather(shard_p.data(), full_pad.data(), shard);
      std::copy_n(full_pad.begin(), p.size(), p.begin());
      ag1 = t_end = Clock::now();
      wait += ag1 - ag0;
    } else {
      opt.step(p, net.grads());
      t_end = Clock::now();
      rec.spans.push_back({1, step, "optimizer", "", -1, ns_of(t_opt), ns_of(t_end)});
    }

    sr.forward_time_s = secs(fwd);
    sr.backward_time_s = secs(bwd);
    sr.exposed_comm_s = secs(wait);
    sr.optimizer_time_s = secs(t_end - t_opt) - (c.zero1 ? secs(ag1 - ag0) : 0.0);
    sr.step_time_s = secs(t_end - t_step);
    sr.loss = loss_sum / k;
    if (c.zero1) {
      const std::int64_t bytes = static_cast<std::int64_t>(full_pad.size() * sizeof(float));
      sr.comm_time_s = secs(rs1 - rs0) + secs(ag1 - ag0);
      sr.buckets.push_back({{"bytes", bytes},
                            {"ready_s", secs(rs0 - t_step)},
                            {"start_s", secs(rs0 - t_step)},
                            {"end_s", secs(rs1 - t_step)}});
      rec.spans.push_back({2, step, "reduce_scatter grads", "", bytes, ns_of(rs0), ns_of(rs1)});
      rec.spans.push_back({2, step, "all_gather params", "", bytes, ns_of(ag0), ns_of(ag1)});
    }
    for (int bi = 0; reduce && bi < red.bucket_count(); ++bi) {
      const BucketTimes& bt = red.times()[static_cast<std::size_t>(bi)];
      sr.comm_time_s += secs(bt.end - bt.start);
      sr.buckets.push_back({{"bytes", bt.bytes},
                            {"ready_s", secs(bt.ready - t_step)},
                            {"start_s", secs(bt.start - t_step)},
                            {"end_s", secs(bt.end - t_step)}});
      rec.spans.push_back({2, step, fmt::format("allreduce bucket {}", bi), "", bt.bytes,
                           ns_of(bt.start), ns_of(bt.end)});
    }
    if (c.noise_scale) measure_noise(c, comm, net, shard_g, local_sq, noise_norm, sr, rec);
    rec.steps.push_back(std::move(sr));
  }
  comm.barrier();
  if (rank == 0) rec.final_params = p;
  return rec;
}

}  // namespace ddpsim::exec
