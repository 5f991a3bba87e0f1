// The trace comparison of trace_compare.hpp.
#include "simulator/cli/validate/trace_compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "model/atomic_file.hpp"
#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/cli/validate/report.hpp"
#include "simulator/measured/trace_replay.hpp"
#include "simulator/report.hpp"
#include "simulator/run.hpp"

namespace ddpsim::validate {

using nlohmann::json;

namespace {

// One row with the replay beside the engines: relative errors against the trace, and the
// replay's error as a fraction of the traced step (the scale the goal is stated in).
json replay_row(const std::string& quantity, double analytic, double event,
                std::optional<double> replay, double measured, double traced_step) {
  json r = row(quantity, analytic, event, measured);
  r["replay"] = replay ? json(*replay) : json();
  r["error_replay"] = replay ? relative_error(*replay, measured) : json();
  r["error_replay_of_step"] =
      replay && traced_step > 0 ? json((*replay - measured) / traced_step) : json();
  return r;
}

std::string ms_or_dash(const json& v) { return v.is_null() ? "-" : ms(v.get<double>()); }

// The sweep must keep what the trace measured: the model, the per-GPU batch and the precision.
void check_extrapolation(const model::Scenario& base, const model::Scenario& p) {
  const auto differs = [&](const char* what, bool d) {
    if (!d) return;
    throw InputError(base.file, "/sweep",
                     "a sweep that keeps the traced compute for --extrapolate (the same model, "
                     "training.per_gpu_batch, grad_accumulation and precision as the trace)",
                     std::string("a point that changes ") + what + " (" + p.point.dump() + ")");
  };
  differs("the model", p.doc.value("model", json()) != base.doc.value("model", json()));
  differs("training.per_gpu_batch", p.training.per_gpu_batch != base.training.per_gpu_batch);
  differs("training.grad_accumulation",
          p.training.grad_accumulation != base.training.grad_accumulation);
  differs("training.precision", p.training.precision != base.training.precision);
}

// The traced job's own compute, optimizer and bucket all-reduces laid out at point `s` (its
// analytic prediction `a`), when `s` is DDP at the traced world size; else nullopt with a note.
std::optional<sim::Prediction> replay(const sim::TracedJob& job, const model::Scenario& s,
                                      const sim::Prediction& a, const model::Workload& workload,
                                      sim::PredictorCache& cache,
                                      const std::function<void(const std::string&)>& note) {
  if (job.world_size && *job.world_size != s.cluster.gpus) {
    note(
        fmt::format("replay: only at the traced world size ({} ranks); other points: "
                    "--extrapolate",
                    *job.world_size));
  } else if (s.parallelism.strategy != model::Strategy::kDdp) {
    note("replay: DDP only (the trace's all-reduces are its buckets)");
  } else {
    const bool buckets = !job.allreduce_s.empty() && job.allreduce_s.size() == a.buckets.size();
    if (!buckets && !job.allreduce_s.empty()) {
      note(fmt::format(
          "replay at {}: the trace has {} all-reduces per step, the point {} "
          "buckets: the model costs the collectives",
          label_text(s.point, s.cluster.gpus), job.allreduce_s.size(), a.buckets.size()));
    }
    std::vector<std::string> how;
    sim::RunOptions rr;
    rr.engine = model::Engine::kAnalytic;
    rr.measured = std::make_shared<sim::MeasuredCosts>(
        sim::measured_costs(job, workload, s.training.grad_accumulation, buckets, &how));
    for (const std::string& h : how) note("replay " + h);
    return sim::predict_point(s, rr, cache);
  }
  return std::nullopt;
}

// --extrapolate at point `s`: the traced compute and optimizer in place, the collectives from
// the model for this N, cap and network; its row is added to `table`.
json extrapolated(const sim::TracedJob& job, const model::Scenario& s,
                  const model::Workload& workload, sim::PredictorCache& cache, std::string& table) {
  sim::RunOptions x;
  x.engine = model::Engine::kAnalytic;
  x.measured = std::make_shared<sim::MeasuredCosts>(
      sim::measured_costs(job, workload, s.training.grad_accumulation, false));
  const sim::Prediction p = sim::predict_point(s, x, cache);
  if (table.empty()) {
    table = fmt::format("  {:<40} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>12}\n", "point",
                        "step_ms", "fwd_ms", "bwd_ms", "comm_ms", "exposed", "opt_ms", "buckets",
                        "samples/s");
  }
  table += fmt::format(
      "  {:<40} {:>10.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>8.3f} {:>8} {:>12.1f}\n",
      label_text(s.point, s.cluster.gpus), 1e3 * p.step_time_s, 1e3 * p.forward_time_s,
      1e3 * p.backward_time_s, 1e3 * p.comm_time_s, 1e3 * p.exposed_comm_s,
      1e3 * p.optimizer_time_s, p.buckets.size(), p.throughput_samples_per_s);
  return {{"step_time_s", p.step_time_s},
          {"forward_time_s", p.forward_time_s},
          {"backward_time_s", p.backward_time_s},
          {"comm_time_s", p.comm_time_s},
          {"exposed_comm_s", p.exposed_comm_s},
          {"optimizer_time_s", p.optimizer_time_s},
          {"bucket_count", p.buckets.size()},
          {"throughput_samples_per_s", p.throughput_samples_per_s}};
}

// The --out document: the context, the scenario, the traces and what they measured, the points.
json trace_document(const model::Scenario& base, const sim::TracedJob& job,
                    const std::vector<std::string>& traces, const std::vector<std::string>& notes,
                    json points) {
  json doc;
  doc["context"] = sim::context_json("analytic+event+replay vs PyTorch profiler traces");
  doc["scenario"] = sim::scenario_json(base);
  json traced = json::array();
  for (const std::string& f : traces) traced.push_back({{"file", f}});
  doc["traces"] = std::move(traced);
  doc["traced"] = {{"world_size", job.world_size ? json(*job.world_size) : json()},
                   {"backend", job.backend},
                   {"steps", job.steps},
                   {"whole_model", job.whole_model},
                   {"step_s", job.step_s},
                   {"forward_s", job.forward_s},
                   {"backward_s", job.backward_s},
                   {"optimizer_s", job.optimizer_s},
                   {"comm_s", job.comm_s},
                   {"exposed_s", job.exposed_s}};
  doc["errors_are"] =
      "(predicted - traced) / traced; error_replay_of_step: (replay - traced) / traced step; "
      "null where nothing was traced or replayed";
  doc["notes"] = notes;
  doc["points"] = std::move(points);
  return doc;
}

}  // namespace

int run_trace_comparison(const std::string& scenario, const std::vector<std::string>& traces,
                         const std::string& out, bool extrapolate) {
  const model::Scenario base = model::load_scenario(scenario);
  const sim::TracedJob job = sim::load_traced_job(traces);
  json measured_buckets = json::array();
  for (double b : job.allreduce_bytes)
    measured_buckets.push_back(b >= 0 ? json(static_cast<std::int64_t>(b)) : json());
  json measured_bucket_s = json::array();
  for (double d : job.allreduce_s) measured_bucket_s.push_back(d);

  const std::vector<model::Scenario> sweep = model::expand_sweep(base);
  if (extrapolate) {
    for (const model::Scenario& p : sweep) check_extrapolation(base, p);
  }
  json points = json::array();
  std::string table, extrapolated_table;
  std::vector<std::string> notes = job.notes;
  const auto note = [&](const std::string& n) {
    if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
  };
  sim::PredictorCache cache;
  for (const model::Scenario& s : sweep) {
    sim::RunOptions run;
    run.engine = model::Engine::kAnalytic;
    const sim::Prediction a = sim::predict_point(s, run, cache);
    run.engine = model::Engine::kEvent;
    const sim::Prediction e = sim::predict_point(s, run, cache);
    const model::Workload& workload = cache.get(s)->workload();

    // The replay: the traced job's own costs at the traced world size.
    const std::optional<sim::Prediction> r = replay(job, s, a, workload, cache, note);
    const auto rv = [&](double sim::Prediction::*f) {
      return r ? std::optional<double>((*r).*f) : std::nullopt;
    };
    using P = sim::Prediction;
    json rows = json::array({replay_row("step", a.step_time_s, e.step_time_s, rv(&P::step_time_s),
                                        job.step_s, job.step_s),
                             replay_row("forward", a.forward_time_s, e.forward_time_s,
                                        rv(&P::forward_time_s), job.forward_s, job.step_s),
                             replay_row("backward", a.backward_time_s, e.backward_time_s,
                                        rv(&P::backward_time_s), job.backward_s, job.step_s),
                             replay_row("optimizer", a.optimizer_time_s, e.optimizer_time_s,
                                        rv(&P::optimizer_time_s), job.optimizer_s, job.step_s),
                             replay_row("comm (sum)", a.comm_time_s, e.comm_time_s,
                                        rv(&P::comm_time_s), job.comm_s, job.step_s),
                             replay_row("exposed comm", a.exposed_comm_s, e.exposed_comm_s,
                                        rv(&P::exposed_comm_s), job.exposed_s, job.step_s)});
    json predicted_buckets = json::array();
    for (const sim::BucketTiming& b : a.buckets) predicted_buckets.push_back(b.bytes);
    table += label_text(s.point, s.cluster.gpus) + "\n";
    char line[256];
    std::snprintf(line, sizeof line, "  %-14s %12s %12s %12s %12s %9s %9s %9s\n", "quantity",
                  "analytic", "event", "replay", "traced", "err a", "err e", "err r");
    table += line;
    for (const json& x : rows) {
      std::snprintf(line, sizeof line, "  %-14s %12s %12s %12s %12s %9s %9s %9s\n",
                    x.at("quantity").get<std::string>().c_str(),
                    ms(x.at("analytic").get<double>()).c_str(),
                    ms(x.at("event").get<double>()).c_str(), ms_or_dash(x.at("replay")).c_str(),
                    ms(x.at("measured").get<double>()).c_str(), pct(x.at("error_analytic")).c_str(),
                    pct(x.at("error_event")).c_str(), pct(x.at("error_replay")).c_str());
      table += line;
    }
    table += "  buckets (bytes): predicted " + predicted_buckets.dump() + ", traced all-reduces " +
             measured_buckets.dump() + "\n";
    json point = {{"point", s.point},
                  {"gpus", s.cluster.gpus},
                  {"rows", std::move(rows)},
                  {"buckets",
                   {{"predicted_bytes", std::move(predicted_buckets)},
                    {"measured_bytes", measured_buckets},
                    {"measured_s", measured_bucket_s}}}};
    if (r) {
      const double err = job.step_s > 0 ? (r->exposed_comm_s - job.exposed_s) / job.step_s : 0.0;
      table += fmt::format(
          "  replay exposed comm {} ms vs traced {} ms: {:+.1f}% of the traced step ({} ms)\n",
          ms(r->exposed_comm_s), ms(job.exposed_s), 100 * err, ms(job.step_s));
      point["replay_exposed_error_of_step"] = err;
    }
    if (extrapolate) {
      point["extrapolated"] = extrapolated(job, s, workload, cache, extrapolated_table);
    }
    points.push_back(std::move(point));
  }
  std::printf(
      "times in ms per step; traced: the mean of %zu trace(s); replay: the analytic "
      "layout of the trace's own compute, optimizer and bucket all-reduces\n%s",
      traces.size(), table.c_str());
  if (extrapolate) {
    std::printf("extrapolated: the traced compute and optimizer, collectives from the model\n%s",
                extrapolated_table.c_str());
  }
  for (const std::string& n : notes) std::printf("note: %s\n", one_line(n).c_str());
  if (!out.empty()) {
    model::write_file_atomic(
        out, trace_document(base, job, traces, notes, std::move(points)).dump(2) + "\n");
    std::printf("wrote %s\n", one_line(out).c_str());
  }
  return 0;
}

}  // namespace ddpsim::validate
