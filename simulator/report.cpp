#include "simulator/report.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <boost/version.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "model/error.hpp"
#include "model/run_context.hpp"
#include "simulator/optional_json.hpp"

namespace ddpsim::sim {

using nlohmann::json;

namespace {}  // namespace

json context_json(const std::string& engine) {
  json c = model::run_context_json("ddpsim");
  c["engine"] = engine;
  c["device"] = "none (model prediction; no hardware was measured)";
  return c;
}

namespace {

// The "goodput" object of a result (simulator/prediction/goodput.hpp): what failures and
// checkpoints cost.
json goodput_json(const Goodput& g) {
  return {{"job_mtbf_s", g.job_mtbf_s},
          {"mtbf_source", g.mtbf_source},
          {"checkpoint_bytes", g.volume.total_bytes},
          {"checkpoint_write_bytes_per_node", g.volume.write_bytes_max_node},
          {"checkpoint_read_bytes_per_rank", g.volume.read_bytes_per_rank},
          {"checkpoint_time_s", g.checkpoint_time_s},
          {"checkpoint_async", g.async},
          {"checkpoint_blocking_s", g.checkpoint_blocking_s},
          {"restore_read_s", g.restore_read_s},
          {"restart_time_s", g.restart_time_s},
          {"young_interval_s", g.young_interval_s},
          // "none": the interval reaches the end of the job, no checkpoint is taken.
          {"interval_rule", !g.checkpoints     ? "none"
                            : g.interval_given ? "given"
                                               : "young"},
          {"interval_steps", g.interval_steps},
          {"interval_s", g.interval_s},
          {"lost_per_failure_s", g.lost_per_failure_s},
          {"ettr", g.ettr},
          {"time_to_train_s", optional_json(g.time_to_train_s)},
          {"gpu_hours", optional_json(g.gpu_hours)},
          {"cost_usd", optional_json(g.cost_usd)},
          {"expected_failures", optional_json(g.expected_failures)}};
}

}  // namespace

std::optional<Uncertainty> point_uncertainty(const model::Scenario& point, const Prediction& p) {
  return uncertainty_for(point.hardware.gpu.name, p.strategy,
                         static_cast<double>(point.workload->param_count()));
}

json prediction_json(const model::Scenario& point, const Prediction& p) {
  json r;
  if (!point.point.empty()) r["sweep_point"] = point.point;
  r["gpus"] = p.gpus;
  r["nodes"] = p.nodes;
  r["per_gpu_batch"] = p.per_gpu_batch;
  r["grad_accumulation"] = p.grad_accumulation;
  r["global_batch"] = p.global_batch;
  r["strategy"] = model::strategy_name(p.strategy);
  r["step_time_s"] = p.step_time_s;
  r["first_step_time_s"] = p.first_step_time_s;
  r["forward_time_s"] = p.forward_time_s;
  r["backward_time_s"] = p.backward_time_s;
  r["grad_copy_time_s"] = p.grad_copy_time_s;
  r["optimizer_time_s"] = p.optimizer_time_s;
  r["comm_time_s"] = p.comm_time_s;
  r["exposed_comm_s"] = p.exposed_comm_s;
  if (p.p50_step_time_s) {
    r["p50_step_time_s"] = *p.p50_step_time_s;
    r["p99_step_time_s"] = *p.p99_step_time_s;
    if (p.p95_step_time_s) r["p95_step_time_s"] = *p.p95_step_time_s;
    r["step_time_interval_s"] = {*p.p50_step_time_s, *p.p99_step_time_s};
  }
  if (p.step_time_low_s && p.step_time_high_s) {
    // A calibrated profile: the step at the low and high ends of the measured intervals; the
    // step itself, laid out on the medians, is the p50.
    r["step_time_interval_s"] = {*p.step_time_low_s, *p.step_time_high_s};
    if (!p.p50_step_time_s) r["p50_step_time_s"] = p.step_time_s;
  }
  if (p.measured) {
    const MeasuredSources& m = *p.measured;
    r["measured"] = {{"profile", m.profile},
                     {"gemms_measured", m.gemms_measured},
                     {"gemms_total", m.gemms_total},
                     {"collectives", m.collectives},
                     {"collectives_measured", m.collectives_measured},
                     {"collectives_total", m.collectives_total},
                     {"optimizer", m.optimizer},
                     {"extrapolated", m.extrapolated},
                     {"notes", m.notes}};
  }
  // PowerSGD only: the step time while the hook still runs plain all-reduce.
  if (p.warmup_step_time_s) r["warmup_step_time_s"] = *p.warmup_step_time_s;
  r["bucket_count"] = p.buckets.size();
  json buckets = json::array();
  const bool sharded = model::is_sharded(p.strategy);
  for (const BucketTiming& b : p.buckets) {
    json bj = {{"bytes", b.bytes},
               {"grad_bytes", b.grad_bytes},
               {"tensors", b.tensors},
               {"ready_s", b.ready_s},
               {"start_s", b.start_s},
               {"end_s", b.end_s},
               {"algorithm", model::algorithm_name(b.algorithm)},
               {"protocol", model::protocol_name(b.protocol)},
               {"channels", b.channels},
               {"busbw_gbytes_per_s", b.busbw_gbytes_per_s}};
    if (sharded) {
      // Every collective of a sharded step; DDP buckets keep their original keys (all
      // all-reduces of the backward).
      bj["kind"] = model::collective_op_name(b.kind);
      bj["phase"] = comm_phase_name(b.phase);
      bj["calls"] = b.calls;
      bj["layer"] = b.layer >= 0 ? json(b.layer) : json(nullptr);
      bj["micro_batch"] = b.micro_batch >= 0 ? json(b.micro_batch) : json(nullptr);
    }
    if (b.contention_slowdown) bj["contention_slowdown"] = *b.contention_slowdown;
    buckets.push_back(std::move(bj));
  }
  r["buckets"] = std::move(buckets);
  if (p.contention) {
    // simulation.network "flow" (simulator/event/contention.hpp): which collectives links slowed.
    const ContentionSummary& c = *p.contention;
    r["contention"] = {{"network", "flow"},
                       {"background_traffic", c.background_traffic},
                       {"concurrent_jobs", c.concurrent_jobs},
                       {"collectives", c.collectives},
                       {"collectives_slowed", c.collectives_slowed},
                       {"max_slowdown", c.max_slowdown},
                       {"comm_time_uncontended_s", c.comm_time_uncontended_s},
                       {"comm_time_s", c.comm_time_s}};
  }
  r["grad_bytes_per_step"] = p.grad_bytes_total;
  r["throughput_samples_per_s"] = p.throughput_samples_per_s;
  r["weak_scaling_efficiency"] = p.weak_scaling_efficiency;
  r["strong_scaling_efficiency"] = p.strong_scaling_efficiency;
  r["model_flops_per_gpu_per_step"] = p.model_flops_per_step;
  r["hardware_flops_per_gpu_per_step"] = p.hardware_flops_per_step;
  r["model_tflops_per_gpu"] = model_tflops_per_gpu(p);
  r["mfu"] = mfu(p);
  r["hfu"] = hfu(p);
  r["tokens_per_s_per_gpu"] = tokens_per_s_per_gpu(p);
  r["memory_per_gpu_bytes"] = p.memory.total();
  r["memory"] = {{"params_bytes", p.memory.params_bytes},
                 {"grads_bytes", p.memory.grads_bytes},
                 {"optimizer_bytes", p.memory.optimizer_bytes},
                 {"activation_bytes", p.memory.activation_bytes},
                 {"buffer_bytes", p.memory.buffer_bytes},
                 {"runtime_bytes", p.memory.runtime_bytes},
                 {"fragmentation_bytes", p.memory.fragmentation_bytes}};
  r["fits_in_memory"] = p.fits_in_memory;
  r["lr"] = optional_json(p.lr);
  r["steps_to_target"] = optional_json(p.steps_to_target);
  r["time_to_train_s"] = optional_json(p.time_to_train_s);
  r["gpu_hours"] = optional_json(p.gpu_hours);
  r["cost_usd"] = optional_json(p.cost_usd);
  const auto band = point_uncertainty(point, p);
  r["uncertainty"] = band ? uncertainty_json(*band, p.step_time_s) : json(nullptr);
  r["goodput"] = p.goodput ? goodput_json(*p.goodput) : json(nullptr);
  r["warnings"] = p.warnings;
  return r;
}

json scenario_json(const model::Scenario& s) {
  const model::Workload& w = *s.workload;
  return {{"file", s.file},
          {"name", s.name},
          {"model", s.model_label},
          {"model_name", w.name},
          {"params", w.param_count()},
          {"parameter_tensors", w.tensors.size()},
          {"hardware", s.hardware.name},
          {"gpu", s.hardware.gpu.name}};
}

json results_json(const model::Scenario& base, const std::vector<model::Scenario>& points,
                  const std::vector<Prediction>& predictions, const std::string& engine) {
  DDPSIM_ASSERT(points.size() == predictions.size(), "one prediction per point");
  json doc;
  doc["context"] = context_json(engine);
  doc["scenario"] = scenario_json(base);
  json results = json::array();
  for (std::size_t i = 0; i < points.size(); ++i) {
    results.push_back(prediction_json(points[i], predictions[i]));
  }
  doc["results"] = std::move(results);
  check_finite(doc);
  return doc;
}

std::string results_table(const model::Scenario& base, const std::vector<model::Scenario>& points,
                          const std::vector<Prediction>& predictions) {
  const model::Workload& w = *base.workload;
  std::string out = fmt::format("{}: {} ({:.3f} B params, {} tensors) on {} ({})\n",
                                base.name.empty() ? base.file : base.name, w.name,
                                static_cast<double>(w.param_count()) / 1e9, w.tensors.size(),
                                base.hardware.name, base.hardware.gpu.name);
  std::vector<std::string> extra_keys;
  for (const model::Scenario& p : points) {
    for (const auto& [k, v] : p.point.items()) {
      if (k != "cluster.gpus" &&
          std::find(extra_keys.begin(), extra_keys.end(), k) == extra_keys.end()) {
        extra_keys.push_back(k);
      }
    }
  }
  const bool goodput = std::any_of(predictions.begin(), predictions.end(),
                                   [](const Prediction& p) { return p.goodput.has_value(); });
  std::vector<std::string> bands;
  std::string head;
  for (const auto& k : extra_keys) head += fmt::format("{:>14} ", k.substr(k.rfind('.') + 1));
  out += head + fmt::format(
                    "{:>6} {:>5} {:>8} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8} {:>7} {:>12} {:>11} "
                    "{:>6} {:>6} {:>6} {:>8} {:>4}\n",
                    "gpus", "nodes", "g.batch", "step_ms", "fwd_ms", "bwd_ms", "comm_ms", "exposed",
                    "opt_ms", "buckets", "samples/s", "tok/s/gpu", "MFU", "weak", "strong",
                    "mem_GiB", "fits");
  if (goodput)
    out.insert(out.size() - 1, fmt::format(" {:>7} {:>8} {:>8}", "ETTR", "mtbf_h", "ckpt_s"));
  for (std::size_t i = 0; i < predictions.size(); ++i) {
    const Prediction& p = predictions[i];
    std::string row;
    for (const auto& k : extra_keys) {
      const auto it = points[i].point.find(k);
      row += fmt::format("{:>14} ", it == points[i].point.end() ? std::string("-")
                                    : k == "training.activation_checkpointing"
                                        ? model::checkpointing_short_name(
                                              points[i].training.activation_checkpointing)
                                    : it->is_string() ? it->get<std::string>()
                                                      : it->dump());
    }
    out += row + fmt::format(
                     "{:>6} {:>5} {:>8} {:>10.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>8.2f} "
                     "{:>7} {:>12.1f} {:>11.0f} {:>6.3f} {:>6.3f} {:>6.3f} {:>8.1f} {:>4}\n",
                     p.gpus, p.nodes, p.global_batch, p.step_time_s * 1e3, p.forward_time_s * 1e3,
                     p.backward_time_s * 1e3, p.comm_time_s * 1e3, p.exposed_comm_s * 1e3,
                     p.optimizer_time_s * 1e3, p.buckets.size(), p.throughput_samples_per_s,
                     tokens_per_s_per_gpu(p), mfu(p), p.weak_scaling_efficiency,
                     p.strong_scaling_efficiency, p.memory.total() / (1024.0 * 1024.0 * 1024.0),
                     p.fits_in_memory ? "yes" : "NO");
    if (const auto band = point_uncertainty(points[i], p)) {
      const std::string line = uncertainty_line(*band);
      if (std::find(bands.begin(), bands.end(), line) == bands.end()) bands.push_back(line);
    }
    if (p.goodput) {
      out.insert(out.size() - 1,
                 fmt::format(" {:>7.3f} {:>8.3g} {:>8.3g}", p.goodput->ettr,
                             p.goodput->job_mtbf_s / 3600.0, p.goodput->checkpoint_time_s));
    } else if (goodput) {
      out.insert(out.size() - 1, fmt::format(" {:>7} {:>8} {:>8}", "-", "-", "-"));
    }
  }
  // How far to trust these rows: the published runs of their class (uncertainty.hpp).
  for (const std::string& b : bands) out += b + "\n";
  return printable(out);  // names come from the user: no terminal escapes
}

std::string results_csv(const std::vector<model::Scenario>& points,
                        const std::vector<Prediction>& predictions) {
  std::string out =
      "point,gpus,nodes,per_gpu_batch,grad_accumulation,global_batch,strategy,step_time_s,"
      "forward_time_s,backward_time_s,optimizer_time_s,comm_time_s,exposed_comm_s,bucket_count,"
      "throughput_samples_per_s,weak_scaling_efficiency,strong_scaling_efficiency,"
      "memory_per_gpu_bytes,fits_in_memory,lr,steps_to_target,time_to_train_s,gpu_hours,"
      "tokens_per_s_per_gpu,model_tflops_per_gpu,mfu,hfu,ettr,job_mtbf_s,checkpoint_time_s,"
      "time_to_train_with_failures_s,cost_usd,uncertainty_median_abs_error,"
      "uncertainty_max_abs_error,uncertainty_rows\n";
  auto opt = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.9g}", *v) : std::string();
  };
  for (std::size_t i = 0; i < predictions.size(); ++i) {
    const Prediction& p = predictions[i];
    const std::optional<Uncertainty> band = point_uncertainty(points[i], p);
    std::string point = points[i].point.empty() ? std::string() : points[i].point.dump();
    // RFC 4180: quote the field and double its quotes.
    std::string quoted = "\"";
    for (char c : point) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    quoted += "\"";
    out += fmt::format(
        "{},{},{},{},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{},{:.9g},{:.9g},{:.9g},"
        "{:.9g},{},{},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{},{},{},{},{},{}\n",
        point.empty() ? std::string() : quoted, p.gpus, p.nodes, p.per_gpu_batch,
        p.grad_accumulation, p.global_batch, model::strategy_name(p.strategy), p.step_time_s,
        p.forward_time_s, p.backward_time_s, p.optimizer_time_s, p.comm_time_s, p.exposed_comm_s,
        p.buckets.size(), p.throughput_samples_per_s, p.weak_scaling_efficiency,
        p.strong_scaling_efficiency, p.memory.total(), p.fits_in_memory ? "true" : "false",
        opt(p.lr), opt(p.steps_to_target), opt(p.time_to_train_s), opt(p.gpu_hours),
        tokens_per_s_per_gpu(p), model_tflops_per_gpu(p), mfu(p), hfu(p),
        opt(p.goodput ? std::optional<double>(p.goodput->ettr) : std::nullopt),
        opt(p.goodput ? std::optional<double>(p.goodput->job_mtbf_s) : std::nullopt),
        opt(p.goodput ? std::optional<double>(p.goodput->checkpoint_time_s) : std::nullopt),
        opt(p.goodput ? p.goodput->time_to_train_s : std::nullopt), opt(p.cost_usd),
        opt(band ? std::optional<double>(band->median_abs) : std::nullopt),
        opt(band ? std::optional<double>(band->max_abs) : std::nullopt),
        band ? std::to_string(band->rows) : std::string());
  }
  return out;
}

void check_finite(const json& j, const std::string& where) {
  if (j.is_number_float()) {
    const double v = j.get<double>();
    if (!std::isfinite(v)) {
      // An internal error (exit code 1), never bad input: no NaN or inf reaches a report.
      throw std::logic_error("non-finite number in a result at " + (where.empty() ? "/" : where));
    }
  } else if (j.is_object()) {
    for (const auto& [k, v] : j.items()) check_finite(v, where + "/" + k);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) check_finite(j[i], where + "/" + std::to_string(i));
  }
}

}  // namespace ddpsim::sim
