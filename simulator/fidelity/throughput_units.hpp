// throughput_units.hpp: the one place published training throughput is converted between units.
//
// Published end-to-end runs report tokens/s (all GPUs or per GPU), samples or images/s, step
// time, model TFLOP/s per GPU or MFU. ddpsim predicts a step time for a global batch; these
// functions turn one into the other, with the formulas results/FIDELITY.md states:
//   samples/s          = global_batch / step_time_s
//   tokens/s           = global_batch * seq_len / step_time_s
//   model FLOPs/token  = 6 P + 12 L d s    (llm-foundry scripts/train/benchmarking/README.md:
//                        3 * (2 P s + 2*2 L d s^2) per sequence of s tokens, divided by s;
//                        Megatron/PaLM count the same 6 P plus attention's 12 L d s)
//   TFLOP/s per GPU    = tokens/s per GPU * FLOPs/token / 1e12
//   MFU                = TFLOP/s per GPU / the publisher's peak TFLOP/s
//
//   double tps = tokens_per_s(96, 2048, 5.3);                      // all GPUs
//   double f = model_flops_per_token(6.66e9, 32, 4096, 2048);     // 4.317e10
//   double m = mfu(tps / 8, f, 312);                              // fraction of the peak
#pragma once

#include <cstdint>
#include <string>

namespace ddpsim::sim {

/// What a published training row reports; the JSON names are the row's "quantity".
enum class ThroughputKind {
  kSamplesPerS,       ///< "samples_per_s": samples (images, sequences) per second, all GPUs
  kTokensPerS,        ///< "tokens_per_s": tokens per second, all GPUs
  kTokensPerSPerGpu,  ///< "tokens_per_s_per_gpu"
  kStepTimeS,         ///< "step_time_s": seconds per optimizer step
  kTflopsPerGpu,      ///< "tflops_per_gpu": model TFLOP/s per GPU (6P + 12Lds per token)
  kMfu,               ///< "mfu": model FLOPs utilization, a fraction of the publisher's peak
};
/// The JSON name of a kind, and back (nullopt-like: throws ddpsim::Error naming `where`).
const char* throughput_kind_name(ThroughputKind k);
ThroughputKind parse_throughput_kind(const std::string& name, const std::string& where);
/// "images/s", "tokens/s", "tokens/s/GPU", "s", "TFLOP/s/GPU", "MFU".
const char* throughput_kind_unit(ThroughputKind k);

double samples_per_s(double global_batch, double step_time_s);
double tokens_per_s(double global_batch, double seq_len, double step_time_s);
/// Inverse of tokens_per_s: the step time that processes global_batch_tokens at that rate.
double step_time_s_from_tokens_per_s(double global_batch_tokens, double tokens_per_s);
/// 6 P + 12 L d s: training FLOPs per token of a decoder with P parameters, L layers of width d
/// at sequence length s (forward 2P + 4Lds, backward twice that; no recomputation counted).
double model_flops_per_token(double params, std::int64_t layers, std::int64_t d_model,
                             std::int64_t seq_len);
double tflops_per_gpu(double tokens_per_s_per_gpu, double flops_per_token);
/// peak_tflops: the peak the publisher divides by (e.g. 312 for A100 bf16, 989.4 for H100).
double mfu(double tokens_per_s_per_gpu, double flops_per_token, double peak_tflops);

/// A step prediction in the unit of a published row.
struct StepInUnits {
  double global_batch = 0;  ///< samples per optimizer step, all GPUs
  double seq_len = 1;       ///< tokens per sample (1 for images)
  int gpus = 1;
  double flops_per_token = 0;  ///< needed by kTflopsPerGpu and kMfu only
  double peak_tflops = 0;      ///< needed by kMfu only
};
/// step_time_s expressed as `k` for the run described by `u`.
double step_time_in(ThroughputKind k, double step_time_s, const StepInUnits& u);

}  // namespace ddpsim::sim
