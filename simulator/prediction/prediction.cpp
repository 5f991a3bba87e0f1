#include "simulator/prediction/prediction.hpp"

namespace ddpsim::sim {

const char* comm_phase_name(CommPhase p) {
  switch (p) {
    case CommPhase::kForward:
      return "forward";
    case CommPhase::kBackward:
      return "backward";
    case CommPhase::kOptimizer:
      return "optimizer";
  }
  return "?";
}

double model_tflops_per_gpu(const Prediction& p) {
  return p.step_time_s > 0 ? p.model_flops_per_step / p.step_time_s / 1e12 : 0.0;
}

double mfu(const Prediction& p) {
  if (p.step_time_s <= 0 || p.peak_flops_per_gpu <= 0) return 0.0;
  return p.model_flops_per_step / p.step_time_s / p.peak_flops_per_gpu;
}

double hfu(const Prediction& p) {
  if (p.step_time_s <= 0 || p.peak_flops_per_gpu <= 0) return 0.0;
  return p.hardware_flops_per_step / p.step_time_s / p.peak_flops_per_gpu;
}

double tokens_per_s_per_gpu(const Prediction& p) {
  if (p.gpus <= 0) return 0.0;
  return p.throughput_samples_per_s * static_cast<double>(p.tokens_per_sample) /
         static_cast<double>(p.gpus);
}

}  // namespace ddpsim::sim
