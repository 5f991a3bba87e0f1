#include "simulator/analytic/torch_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/collective_op.hpp"
#include "model/workload/workload.hpp"

namespace ddpsim::sim {

using nlohmann::json;

std::optional<TorchCalibration> TorchCalibration::from_profile(const model::Profile& p) {
  if (!p.document().contains("torch")) return std::nullopt;
  const json& t = p.document().at("torch");
  TorchCalibration c;
  c.source_ = p.file();
  c.ranks_ = t.at("ranks").get<int>();
  c.gloo_threads_ = std::max(1, t.value("gloo_threads", 1));
  for (const json& e : t.at("workloads")) {
    Entry x;
    x.workload = e.at("workload").get<std::string>();
    x.parameters = e.at("parameters").get<std::int64_t>();
    x.per_gpu_batch = e.at("per_gpu_batch").get<std::int64_t>();
    x.optimizer = e.at("optimizer").get<std::string>();
    x.costs.source = "torch calibration " + p.file();
    for (const json& l : e.at("layers")) {
      x.layer_names.push_back(l.at("name").get<std::string>());
      x.costs.layer_fwd_s.push_back(l.at("forward_s").get<double>());
      x.costs.layer_bwd_s.push_back(l.at("backward_s").get<double>());
    }
    x.costs.optimizer_s = e.at("optimizer_s").get<double>();
    c.entries_.push_back(std::move(x));
  }
  for (const json& r : t.at("all_reduce")) {
    c.all_reduce_.push_back({r.at("size_bytes").get<double>(), r.at("sync_s").get<double>(),
                             r.at("pair_s").get<double>()});
  }
  std::sort(c.all_reduce_.begin(), c.all_reduce_.end(),
            [](const AllReduceRow& a, const AllReduceRow& b) { return a.bytes < b.bytes; });
  if (t.contains("contention")) {
    for (const json& r : t.at("contention").at("by_size")) {
      c.contention_.push_back({r.at("size_bytes").get<double>(),
                               std::max(1.0, r.at("compute_slowdown").get<double>()),
                               std::max(1.0, r.at("all_reduce_slowdown").get<double>())});
    }
    std::sort(c.contention_.begin(), c.contention_.end(),
              [](const ContentionRow& a, const ContentionRow& b) { return a.bytes < b.bytes; });
  }
  return c;
}

const TorchCalibration::Entry* TorchCalibration::entry(const model::Workload& w,
                                                       std::int64_t per_gpu_batch,
                                                       model::Optimizer optimizer,
                                                       std::string* why) const {
  const std::int64_t params = w.param_count();  // tied tensors once, as torch counts them
  const std::string opt = model::optimizer_name(optimizer);
  for (const Entry& e : entries_) {
    if (e.workload != w.name || e.parameters != params || e.per_gpu_batch != per_gpu_batch ||
        e.optimizer != opt) {
      continue;
    }
    if (e.layer_names.size() != w.layers.size()) {
      *why = fmt::format("{}: /torch: workload {} has {} layers, the torch calibration {}", source_,
                         w.name, w.layers.size(), e.layer_names.size());
      return nullptr;
    }
    for (std::size_t i = 0; i < w.layers.size(); ++i) {
      if (e.layer_names[i] != w.layers[i].name) {
        *why = fmt::format("{}: /torch: layer {} is {}, the workload's {}", source_, i,
                           e.layer_names[i], w.layers[i].name);
        return nullptr;
      }
    }
    return &e;
  }
  *why = fmt::format(
      "{}: /torch has no entry for workload {} ({} parameters), per_gpu_batch {}, {} (run "
      "ddpsim calibrate --backend torch --scenario on this scenario)",
      source_, w.name, params, per_gpu_batch, opt);
  return nullptr;
}

std::optional<double> TorchCalibration::all_reduce_s(double bytes, bool pair) const {
  const std::vector<AllReduceRow>& rows = all_reduce_;
  if (rows.empty()) return std::nullopt;
  const auto t = [pair](const AllReduceRow& r) { return pair ? r.pair_s : r.sync_s; };
  if (rows.size() == 1 || bytes <= rows.front().bytes) return t(rows.front());
  std::size_t hi = 1;
  while (hi + 1 < rows.size() && rows[hi].bytes < bytes) ++hi;
  const AllReduceRow& a = rows[hi - 1];
  const AllReduceRow& b = rows[hi];
  const double v = t(a) + (t(b) - t(a)) * (bytes - a.bytes) / (b.bytes - a.bytes);
  // Beyond the largest size a noisy (falling) last segment must not predict less than measured.
  return bytes > b.bytes ? std::max(v, t(b)) : v;
}

std::optional<TorchCalibration::ContentionRow> TorchCalibration::contention_at(double bytes) const {
  const std::vector<ContentionRow>& rows = contention_;
  if (rows.empty()) return std::nullopt;
  if (bytes <= rows.front().bytes)
    return ContentionRow{bytes, rows.front().compute_slowdown, rows.front().collective_slowdown};
  if (bytes >= rows.back().bytes)
    return ContentionRow{bytes, rows.back().compute_slowdown, rows.back().collective_slowdown};
  std::size_t i = 1;
  while (rows[i].bytes < bytes) ++i;
  const ContentionRow& a = rows[i - 1];
  const ContentionRow& b = rows[i];
  const double t = std::log2(bytes / a.bytes) / std::log2(b.bytes / a.bytes);
  return ContentionRow{bytes, a.compute_slowdown + t * (b.compute_slowdown - a.compute_slowdown),
                       a.collective_slowdown + t * (b.collective_slowdown - a.collective_slowdown)};
}

std::string apply_torch_collectives(StepPlan& sp, const TorchCalibration& c) {
  if (!c.all_reduce_s(0, false)) return "";
  for (PlannedBucket& b : sp.buckets) {
    const auto bytes = static_cast<double>(b.cost.bytes);
    b.collective_s = *c.all_reduce_s(bytes, false);
    b.paired_s = *c.all_reduce_s(bytes, true);
    b.overhead_s = 0;
    b.cost.busbw_gbytes_per_s =
        b.collective_s > 0 ? bytes / b.collective_s *
                                 model::busbw_factor(model::CollectiveOp::kAllReduce, sp.gpus) / 1e9
                           : 0.0;
    if (const std::optional<TorchCalibration::ContentionRow> row = c.contention_at(bytes)) {
      b.compute_slowdown = row->compute_slowdown;
      b.collective_slowdown = row->collective_slowdown;
    }
  }
  if (sp.first_iteration_allreduce_s > 0) {
    sp.first_iteration_allreduce_s = *c.all_reduce_s(sp.grad_bytes_total * sp.wire_scale, false);
  }
  sp.comm_lanes = c.gloo_threads();
  sp.interference_source = "torch";
  return fmt::format("{} bucket all-reduces from torch's gloo ({} at once){}", sp.buckets.size(),
                     sp.comm_lanes,
                     c.contention_at(0) ? ", their contention with the backward" : "");
}

}  // namespace ddpsim::sim
