#include "simulator/measured/torch_costs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "model/workload/workload.hpp"

namespace ddpsim::sim {

using nlohmann::json;

std::vector<TorchAllReduceRow> torch_all_reduce_rows(const json& torch) {
  std::vector<TorchAllReduceRow> rows;
  for (const json& r : torch.value("all_reduce", json::array())) {
    rows.push_back({r.at("size_bytes").get<double>(), r.at("sync_s").get<double>(),
                    r.at("pair_s").get<double>()});
  }
  std::sort(rows.begin(), rows.end(), [](const TorchAllReduceRow& a, const TorchAllReduceRow& b) {
    return a.bytes < b.bytes;
  });
  return rows;
}

double torch_all_reduce_s(const std::vector<TorchAllReduceRow>& rows, double bytes, bool pair) {
  const auto t = [pair](const TorchAllReduceRow& r) { return pair ? r.pair_s : r.sync_s; };
  if (rows.size() == 1 || bytes <= rows.front().bytes) return t(rows.front());
  std::size_t hi = 1;
  while (hi + 1 < rows.size() && rows[hi].bytes < bytes) ++hi;
  const TorchAllReduceRow& a = rows[hi - 1];
  const TorchAllReduceRow& b = rows[hi];
  const double v = t(a) + (t(b) - t(a)) * (bytes - a.bytes) / (b.bytes - a.bytes);
  // Beyond the largest size a noisy (falling) last segment must not predict less than measured.
  return bytes > b.bytes ? std::max(v, t(b)) : v;
}

std::vector<double> gloo_bucket_costs(const std::vector<double>& ready_s,
                                      const std::vector<double>& sync_s,
                                      const std::vector<double>& pair_s) {
  std::vector<double> out(ready_s.size());
  for (std::size_t i = 0; i < ready_s.size(); ++i) {
    bool shared = false;
    for (std::size_t j = 0; j < ready_s.size() && !shared; ++j) {
      shared = j != i && ready_s[j] < ready_s[i] + sync_s[i] && ready_s[i] < ready_s[j] + sync_s[j];
    }
    out[i] = shared ? pair_s[i] : sync_s[i];
  }
  return out;
}

TorchContention::Row TorchContention::at(double bytes) const {
  if (by_size.empty()) return {bytes, compute_slowdown, all_reduce_slowdown};
  if (bytes <= by_size.front().bytes)
    return {bytes, by_size.front().compute_slowdown, by_size.front().all_reduce_slowdown};
  if (bytes >= by_size.back().bytes)
    return {bytes, by_size.back().compute_slowdown, by_size.back().all_reduce_slowdown};
  std::size_t i = 1;
  while (by_size[i].bytes < bytes) ++i;
  const Row& a = by_size[i - 1];
  const Row& b = by_size[i];
  const double t = std::log2(bytes / a.bytes) / std::log2(b.bytes / a.bytes);
  return {bytes, a.compute_slowdown + t * (b.compute_slowdown - a.compute_slowdown),
          a.all_reduce_slowdown + t * (b.all_reduce_slowdown - a.all_reduce_slowdown)};
}

std::optional<TorchContention> torch_contention(const json& torch) {
  if (!torch.contains("contention")) return std::nullopt;
  const json& c = torch.at("contention");
  // Sharing the cores cannot speed either up: a ratio below 1 is the measurement's noise (a
  // small model's window is milliseconds), taken as no slowdown.
  TorchContention out{std::max(1.0, c.at("compute_slowdown").get<double>()),
                      std::max(1.0, c.at("all_reduce_slowdown").get<double>()),
                      {}};
  for (const json& r : c.value("by_size", json::array())) {
    out.by_size.push_back({r.at("size_bytes").get<double>(),
                           std::max(1.0, r.at("compute_slowdown").get<double>()),
                           std::max(1.0, r.at("all_reduce_slowdown").get<double>())});
  }
  std::sort(out.by_size.begin(), out.by_size.end(),
            [](const TorchContention::Row& a, const TorchContention::Row& b) {
              return a.bytes < b.bytes;
            });
  return out;
}

std::vector<double> contended_bucket_costs(const std::vector<double>& start_s,
                                           const std::vector<double>& cost_s, double compute_end_s,
                                           double slowdown) {
  return contended_bucket_costs(start_s, cost_s, compute_end_s,
                                std::vector<double>(cost_s.size(), slowdown));
}

std::vector<double> contended_bucket_costs(const std::vector<double>& start_s,
                                           const std::vector<double>& cost_s, double compute_end_s,
                                           const std::vector<double>& slowdown) {
  std::vector<double> out(cost_s);
  for (std::size_t i = 0; i < out.size() && i < start_s.size() && i < slowdown.size(); ++i) {
    const double k = slowdown[i];
    const double d = compute_end_s - start_s[i];
    if (!(k > 1) || d <= 0) continue;
    out[i] = cost_s[i] * k <= d ? cost_s[i] * k : d + (cost_s[i] - d / k);
  }
  return out;
}

std::vector<double> settled_contended_costs(
    const std::vector<double>& cost_s, const std::vector<double>& slowdown,
    const std::function<BucketSchedule(const std::vector<double>&)>& schedule, int* rounds) {
  const std::size_t plain = cost_s.size() + 1, limit = 4 * plain;
  std::vector<double> c = cost_s;
  std::size_t made = 0;
  while (made < limit) {
    const BucketSchedule sch = schedule(c);
    ++made;
    std::vector<double> next =
        contended_bucket_costs(sch.start_s, cost_s, sch.compute_end_s, slowdown);
    double moved = 0;
    for (std::size_t i = 0; i < next.size() && i < c.size(); ++i)
      moved = std::max(moved, std::abs(next[i] - c[i]));
    if (made > plain) {
      for (std::size_t i = 0; i < next.size() && i < c.size(); ++i)
        next[i] = 0.5 * (next[i] + c[i]);
    }
    c = std::move(next);
    if (moved <= 1e-9) break;
  }
  if (rounds) *rounds = static_cast<int>(made);
  return c;
}

namespace {

/// The section's workload entry for `s` (name, untied parameters, per-GPU batch, optimizer).
const json* torch_entry(const json& torch, const model::Scenario& s) {
  const model::Workload& w = *s.workload;
  const std::int64_t params = w.param_count();  // tied tensors once, as torch counts them
  const std::string opt = model::optimizer_name(s.training.optimizer);
  if (!torch.contains("workloads")) return nullptr;
  for (const json& e : torch.at("workloads")) {
    if (e.at("workload").get<std::string>() == w.name &&
        e.at("parameters").get<std::int64_t>() == params &&
        e.at("per_gpu_batch").get<std::int64_t>() == s.training.per_gpu_batch &&
        e.at("optimizer").get<std::string>() == opt) {
      return &e;
    }
  }
  return nullptr;
}

/// The entry's job pass for `s`'s overlap setting: "job_overlap_off" when the scenario launches
/// its all-reduces after the backward and the calibration ran that pass, else "job".
const json* job_pass(const json& entry, const model::Scenario& s) {
  if (!s.parallelism.overlap && entry.contains("job_overlap_off")) {
    return &entry.at("job_overlap_off");
  }
  return entry.contains("job") ? &entry.at("job") : nullptr;
}

}  // namespace

std::optional<TorchJob> torch_job_comm_pass(const json& torch, const model::Scenario& s) {
  const json* e = torch_entry(torch, s);
  if (e == nullptr) return std::nullopt;
  const json* pass = e->contains("job_overlap_off") ? &e->at("job_overlap_off")
                     : e->contains("job")           ? &e->at("job")
                                                    : nullptr;
  if (pass == nullptr) return std::nullopt;
  const json& j = *pass;
  TorchJob out;
  out.bucket_cap_mb = j.at("bucket_cap_mb").get<double>();
  out.comm_occupancy_s = j.at("comm_occupancy_s").get<double>();
  for (const json& b : j.at("bucket_bytes")) out.bucket_bytes.push_back(b.get<double>());
  return out;
}

std::optional<double> torch_job_step_s(const json& torch, const model::Scenario& s) {
  const json* e = torch_entry(torch, s);
  const json* pass = e == nullptr ? nullptr : job_pass(*e, s);
  if (pass == nullptr || !pass->contains("step_s") || s.training.grad_accumulation != 1 ||
      pass->value("bucket_cap_mb", -1.0) != s.parallelism.bucket_cap_mb) {
    return std::nullopt;
  }
  return pass->at("step_s").get<double>();
}

std::optional<double> torch_job_comm_factor(const TorchJob& job,
                                            const std::vector<TorchAllReduceRow>& rows) {
  if (job.bucket_bytes.empty() || rows.empty()) return std::nullopt;
  double alone = 0;
  for (double b : job.bucket_bytes) alone += torch_all_reduce_s(rows, b, false);
  if (!(alone > 0)) return std::nullopt;
  return std::max(1.0, job.comm_occupancy_s / alone);
}

std::optional<double> torch_job_backward_factor(const json& entry) {
  if (!entry.contains("job_overlap_off") || !entry.at("job_overlap_off").contains("backward_s")) {
    return std::nullopt;
  }
  double layers = 0;
  for (const json& l : entry.at("layers")) layers += l.at("backward_s").get<double>();
  const double job = entry.at("job_overlap_off").at("backward_s").get<double>();
  if (!(layers > 0) || !(job > 0)) return std::nullopt;
  return job / layers;
}

std::optional<MeasuredCosts> torch_compute_costs(const json& torch, const model::Scenario& s,
                                                 const std::string& source, std::string* why) {
  const model::Workload& w = *s.workload;
  const std::int64_t params = w.param_count();
  const std::string opt = model::optimizer_name(s.training.optimizer);
  if (const json* found = torch_entry(torch, s)) {
    const json& e = *found;
    const json& layers = e.at("layers");
    if (layers.size() != w.layers.size()) {
      *why = source + ": /torch: workload " + w.name + " has " + std::to_string(w.layers.size()) +
             " layers, the torch calibration " + std::to_string(layers.size());
      return std::nullopt;
    }
    MeasuredCosts m;
    m.source = "torch calibration " + source;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      if (layers[i].at("name").get<std::string>() != w.layers[i].name) {
        *why = source + ": /torch: layer " + std::to_string(i) + " is " +
               layers[i].at("name").get<std::string>() + ", the workload's " + w.layers[i].name;
        return std::nullopt;
      }
      m.layer_fwd_s.push_back(layers[i].at("forward_s").get<double>());
      m.layer_bwd_s.push_back(layers[i].at("backward_s").get<double>());
    }
    // The backward as the job computes it: every layer's backward times the job's (the pass with
    // the all-reduces after the backward, so nothing beside it) over the layers' sum.
    if (const std::optional<double> k = torch_job_backward_factor(e)) {
      for (double& b : m.layer_bwd_s) b *= *k;
      char said[80];
      std::snprintf(said, sizeof said, " (backward x%.3f as its DDP job pass computed it)", *k);
      m.source += said;
    }
    // Inside the job the optimizer's temporaries fault as the job's allocation history decides
    // (issue 16: 1.6-1.9x the step timed beside the layers on the smallest MLP).
    const json* pass = job_pass(e, s);
    m.optimizer_s =
        pass != nullptr ? pass->at("optimizer_s").get<double>() : e.at("optimizer_s").get<double>();
    return m;
  }
  *why = source + ": /torch has no entry for workload " + w.name + " (" + std::to_string(params) +
         " parameters), per_gpu_batch " + std::to_string(s.training.per_gpu_batch) + ", " + opt +
         " (run ddpsim-calibrate --backend torch --scenario on this scenario)";
  return std::nullopt;
}

}  // namespace ddpsim::sim
