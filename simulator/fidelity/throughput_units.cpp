// Conversions between the units published training runs report; see the header for the
// formulas and their sources.
#include "simulator/fidelity/throughput_units.hpp"

#include "model/error.hpp"

namespace ddpsim::sim {

namespace {

struct KindName {
  ThroughputKind kind;
  const char* name;
  const char* unit;
};

constexpr KindName kKinds[] = {
    {ThroughputKind::kSamplesPerS, "samples_per_s", "samples/s"},
    {ThroughputKind::kTokensPerS, "tokens_per_s", "tokens/s"},
    {ThroughputKind::kTokensPerSPerGpu, "tokens_per_s_per_gpu", "tokens/s/GPU"},
    {ThroughputKind::kStepTimeS, "step_time_s", "s"},
    {ThroughputKind::kTflopsPerGpu, "tflops_per_gpu", "TFLOP/s/GPU"},
    {ThroughputKind::kMfu, "mfu", "MFU"},
};

const KindName& entry(ThroughputKind k) {
  for (const auto& e : kKinds) {
    if (e.kind == k) return e;
  }
  return kKinds[0];
}

}  // namespace

const char* throughput_kind_name(ThroughputKind k) { return entry(k).name; }
const char* throughput_kind_unit(ThroughputKind k) { return entry(k).unit; }

ThroughputKind parse_throughput_kind(const std::string& name, const std::string& where) {
  std::string names;
  for (const auto& e : kKinds) {
    if (name == e.name) return e.kind;
    names += names.empty() ? e.name : std::string(", ") + e.name;
  }
  throw Error(where + ": expected one of " + names + ", got \"" + name + "\"");
}

double samples_per_s(double global_batch, double step_time_s) { return global_batch / step_time_s; }

double tokens_per_s(double global_batch, double seq_len, double step_time_s) {
  return global_batch * seq_len / step_time_s;
}

double step_time_s_from_tokens_per_s(double global_batch_tokens, double tokens_per_s) {
  return global_batch_tokens / tokens_per_s;
}

double model_flops_per_token(double params, std::int64_t layers, std::int64_t d_model,
                             std::int64_t seq_len) {
  // Per sequence: 3 * (2 P s) for the weights plus 3 * (2 * 2 L d s^2) for QK^T and AV
  // (llm-foundry's attn_flops_per_seq); per token divide by s.
  return 6.0 * params + 12.0 * static_cast<double>(layers) * static_cast<double>(d_model) *
                            static_cast<double>(seq_len);
}

double tflops_per_gpu(double tokens_per_s_per_gpu, double flops_per_token) {
  return tokens_per_s_per_gpu * flops_per_token / 1e12;
}

double mfu(double tokens_per_s_per_gpu, double flops_per_token, double peak_tflops) {
  return tflops_per_gpu(tokens_per_s_per_gpu, flops_per_token) / peak_tflops;
}

double step_time_in(ThroughputKind k, double step_time_s, const StepInUnits& u) {
  const double per_gpu = tokens_per_s(u.global_batch, u.seq_len, step_time_s) / u.gpus;
  switch (k) {
    case ThroughputKind::kSamplesPerS:
      return samples_per_s(u.global_batch, step_time_s);
    case ThroughputKind::kTokensPerS:
      return tokens_per_s(u.global_batch, u.seq_len, step_time_s);
    case ThroughputKind::kTokensPerSPerGpu:
      return per_gpu;
    case ThroughputKind::kStepTimeS:
      return step_time_s;
    case ThroughputKind::kTflopsPerGpu:
      return tflops_per_gpu(per_gpu, u.flops_per_token);
    case ThroughputKind::kMfu:
      return mfu(per_gpu, u.flops_per_token, u.peak_tflops);
  }
  return step_time_s;
}

}  // namespace ddpsim::sim
