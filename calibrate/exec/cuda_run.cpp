#include "calibrate/exec/cuda_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "calibrate/exec/results.hpp"
#include "model/atomic_file.hpp"
#include "model/error.hpp"
#include "model/run_context.hpp"

namespace ddpsim::exec {

void check_cuda_backend(const ExecConfig& c) {
  auto refuse = [&](const std::string& why) {
    throw UnsupportedError(c.scenario_file + ": the CUDA backend cannot run this scenario: " + why);
  };
  if (!c.gpt2) refuse("its model is " + c.model_label + "; the CUDA backend trains GPT-2 configs");
  if (c.ranks != 1) {
    refuse(fmt::format(
        "{} ranks; the CUDA backend runs one rank on one GPU (NCCL refuses two ranks on one "
        "device; multi-GPU DDP over NCCL is not implemented yet): use --nproc 1",
        c.ranks));
  }
  if (c.zero1 || c.hook != Hook::kNone || c.grad_accumulation != 1) {
    refuse("zero1, compression hooks and gradient accumulation are CPU-only");
  }
  if (c.optimizer.kind != OptimizerKind::kAdamW) {
    refuse("optimizer " + c.optimizer_name + "; the CUDA backend steps AdamW");
  }
}

nlohmann::json cuda_results_json(const ExecConfig& c, const CudaRunResult& r) {
  std::vector<double> step, fwd, bwd, opt, loss;
  for (const CudaStep& s : r.steps) {
    step.push_back(s.step_s);
    fwd.push_back(s.forward_s);
    bwd.push_back(s.backward_s);
    opt.push_back(s.optimizer_s);
    loss.push_back(s.loss);
  }
  const double tokens = static_cast<double>(c.per_gpu_batch * c.gpt2->seq);
  nlohmann::json res = {
      {"mode", "cuda"},
      {"gpus", 1},
      {"per_gpu_batch", c.per_gpu_batch},
      {"global_batch", c.per_gpu_batch},
      {"precision", "bf16 autocast, fp32 master weights"},
      {"optimizer", "adamw"},
      {"param_count", r.param_count},
      {"steps", c.steps},
      {"warmup_steps", c.warmup_steps},
      {"measured_steps", r.steps.size()},
      {"step_time_s", median(step)},
      {"forward_time_s", median(fwd)},
      {"backward_time_s", median(bwd)},
      {"optimizer_time_s", median(opt)},
      {"comm_time_s", 0.0},
      {"exposed_comm_s", 0.0},
      {"throughput_samples_per_s", median(step) > 0 ? c.per_gpu_batch / median(step) : 0.0},
      {"tokens_per_s", median(step) > 0 ? tokens / median(step) : 0.0},
      {"peak_memory_bytes", r.peak_bytes},
      {"device_used_bytes", r.device_used_bytes},
      {"loss_first", loss.empty() ? 0.0 : loss.front()},
      {"loss_last", loss.empty() ? 0.0 : loss.back()},
      {"per_step",
       {{"step_time_s", step},
        {"forward_time_s", fwd},
        {"backward_time_s", bwd},
        {"optimizer_time_s", opt},
        {"loss", loss}}}};
  nlohmann::json ctx = model::run_context_json("ddpsim-exec");
  ctx["device"] = r.device;
  ctx["backend"] = "cuda";
  return {{"scenario", c.scenario_file},
          {"name", c.scenario_name},
          {"model", c.model_label},
          {"context", ctx},
          {"results", nlohmann::json::array({res})}};
}

int run_cuda_backend(const ExecConfig& c, const std::string& out_path) {
  CudaRunOptions o;
  o.batch = c.per_gpu_batch;
  o.steps = c.steps;
  o.warmup_steps = c.warmup_steps;
  o.lr = static_cast<float>(c.lr_base);
  o.seed = c.seed;
  const CudaRunResult r = run_gpt2_cuda(*c.gpt2, o);
  if (!r.ran) {
    std::fprintf(stderr, "ddpsim-exec: --backend cuda: %s\n", r.why.c_str());
    return kNoDeviceExit;
  }
  const nlohmann::json doc = cuda_results_json(c, r);
  const auto& res = doc.at("results")[0];
  std::printf("ddpsim-exec: %s on %s (CUDA backend, bf16 GEMMs, fp32 masters), batch %lld\n",
              c.model_label.c_str(), r.device.c_str(), static_cast<long long>(c.per_gpu_batch));
  std::printf(
      "median of %zu steps: step %.3f ms = forward %.3f + backward %.3f + optimizer %.3f ms; "
      "peak %.3f GiB allocated (%.3f GiB in use on the device); loss %.4f -> %.4f\n",
      r.steps.size(), 1e3 * res.at("step_time_s").get<double>(),
      1e3 * res.at("forward_time_s").get<double>(), 1e3 * res.at("backward_time_s").get<double>(),
      1e3 * res.at("optimizer_time_s").get<double>(), r.peak_bytes / 1073741824.0,
      r.device_used_bytes / 1073741824.0, res.at("loss_first").get<double>(),
      res.at("loss_last").get<double>());
  if (!out_path.empty()) model::write_file_atomic(out_path, doc.dump(2) + "\n");
  return 0;
}

}  // namespace ddpsim::exec
