#include "simulator/run.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

#include "model/atomic_file.hpp"
#include "model/error.hpp"
#include "model/interrupt.hpp"
#include "simulator/event/trace.hpp"
#include "simulator/input_guards.hpp"
#include "simulator/report.hpp"

namespace ddpsim::sim {

namespace {

// Checked for every point before anything runs, so no trace of an earlier point is left.
void check_straggler(const model::Scenario& p, bool swept) {
  if (p.simulation.straggler_rank < p.cluster.gpus) return;
  throw InputError(p.file, "/simulation/straggler_rank",
                   "-1 or a rank below cluster.gpus (" + std::to_string(p.cluster.gpus) +
                       (swept ? " at sweep point " + p.point.dump() : std::string()) + ")",
                   std::to_string(p.simulation.straggler_rank));
}

model::Engine engine_of(const model::Scenario& p, const RunOptions& o) {
  return o.engine ? *o.engine : p.simulation.engine;
}

std::string cache_key(const model::Scenario& s) {
  const auto part = [&](const char* k) { return s.doc.contains(k) ? s.doc.at(k).dump() : "-"; };
  return s.file + "\n" + part("model") + "\n" + part("hardware") + "\n" +
         std::to_string(s.cluster.gpus_per_node);
}

// One file per sweep point: trace.json, or trace.1.json, trace.2.json, ... for sweeps.
std::string trace_file(const std::string& trace, std::size_t index, std::size_t points) {
  if (points <= 1) return trace;
  std::filesystem::path tp(trace);
  tp.replace_extension("." + std::to_string(index + 1) +
                       std::filesystem::path(trace).extension().string());
  return tp.string();
}

// The event engine's bounds for one point (check_event_bounds; the steps that run, which
// RunOptions::steps may override), from its analytic step time and plan.
void check_event_point(const model::Scenario& p, const RunOptions& o, const Prediction& pred,
                       const StepPlan& plan, double* sweep_work) {
  const EventOptions eo = event_options(p, o);
  if (eo.steps == p.simulation.steps) {
    check_event_bounds(p.file, p, plan, pred.step_time_s, sweep_work);  // exit 2, no hang
  } else {
    model::Scenario q = p;  // the bounds of the steps that run
    q.simulation.steps = eo.steps;
    check_event_bounds(p.file, q, plan, pred.step_time_s, sweep_work);
  }
}

// Spans a recorded timeline of the point will hold: one step simulated with the point's own
// options (the ranks shown, the streams, local SGD and staleness as configured) counts them,
// times the steps that run. Jitter, seeds and the straggler move spans, not their number.
double estimated_spans(const model::Scenario& p, const RunOptions& o, const StepPlan& plan) {
  EventOptions eo = event_options(p, o);
  const double steps = eo.steps;
  eo.steps = 1;
  eo.record_timeline = true;
  return steps * static_cast<double>(simulate_event(plan, eo).timeline.size());
}

void check_timeline_spans(const model::Scenario& p, double spans, double* sweep_spans) {
  const std::string where = p.point.empty() ? std::string() : " at sweep point " + p.point.dump();
  if (!(spans <= kTimelineSpanLimit)) {
    throw InputError(p.file, "/simulation/steps",
                     fmt::format("a recorded timeline (--trace, the GUI's timeline) of at most "
                                 "{:.0e} spans (steps x ranks shown x operations per step); "
                                 "lower simulation.steps or simulation.trace_ranks{}",
                                 kTimelineSpanLimit, where),
                     fmt::format("{:.3g} spans", spans));
  }
  *sweep_spans += spans;
  if (!(*sweep_spans <= kSweepTimelineSpanLimit)) {
    throw InputError(p.file, "/sweep",
                     fmt::format("recorded timelines of at most {:.0e} spans over all sweep "
                                 "points; sweep fewer points or lower simulation.steps",
                                 kSweepTimelineSpanLimit),
                     fmt::format("{:.3g} spans by{}", *sweep_spans, where));
  }
}

Prediction predict_with(const model::Scenario& p, const RunOptions& o, Predictor& predictor,
                        std::vector<Span>* timeline, double* sweep_work) {
  predictor.set_measured(o.measured);  // a cached Predictor: set (or cleared) for every point
  if (engine_of(p, o) == model::Engine::kAnalytic) {
    Prediction pred = predictor.predict(p.cluster, p.training, p.parallelism, p.gpu_hour_usd,
                                        p.simulation.jitter_cv);
    apply_goodput(p.reliability, predictor.workload(), p.cluster, p.training, p.parallelism,
                  p.gpu_hour_usd, pred, p.hardware.gpus_per_host);
    if (p.simulation.network_flow) {
      pred.warnings.push_back(
          "simulation.network \"flow\" (with background_traffic and concurrent_jobs) is "
          "simulated by the event engine only (--engine event): the analytic engine times "
          "each collective alone");
    }
    return pred;
  }
  // The analytic model supplies everything that is not a timing (memory, lr, ...); the event
  // simulator replaces the timings.
  Prediction pred = predictor.predict(p.cluster, p.training, p.parallelism, p.gpu_hour_usd, 0.0);
  const StepPlan plan = predictor.plan(p.cluster, p.training, p.parallelism);
  EventOptions eo = event_options(p, o);
  eo.hardware = &predictor.hardware();  // the network flows run on the NIC the plan used
  eo.record_timeline = timeline != nullptr;
  check_event_point(p, o, pred, plan, sweep_work);
  EventResult r = simulate_event(plan, eo);
  apply_event_result(pred, r, eo, plan);
  apply_goodput(p.reliability, predictor.workload(), p.cluster, p.training, p.parallelism,
                p.gpu_hour_usd, pred, p.hardware.gpus_per_host);
  if (timeline != nullptr) *timeline = std::move(r.timeline);
  return pred;
}

}  // namespace

const char* engine_name(model::Engine e) {
  return e == model::Engine::kEvent ? "event" : "analytic";
}

std::shared_ptr<Predictor> PredictorCache::get(const model::Scenario& point) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string key = cache_key(point);
  if (!predictor_ || key != key_) {
    predictor_ = std::make_shared<Predictor>(point);
    key_ = key;
  }
  std::string source;
  const double factor = resolve_interference(point, &source);
  predictor_->set_interference(factor, source);
  return predictor_;
}

EventOptions event_options(const model::Scenario& p, const RunOptions& o) {
  EventOptions e;
  e.steps = o.steps ? *o.steps : p.simulation.steps;
  e.jitter_cv = p.simulation.jitter_cv;
  e.jitter_distribution = p.simulation.jitter_distribution;
  e.seed = p.simulation.seed;
  e.straggler_rank = p.simulation.straggler_rank;
  e.straggler_slowdown = p.simulation.straggler_slowdown;
  e.network_flow = p.simulation.network_flow;
  e.contention = {p.simulation.background_traffic, p.simulation.concurrent_jobs};
  e.hardware = &p.hardware;
  e.local_sgd_period = p.simulation.local_sgd_period;
  e.staleness = p.simulation.staleness;
  e.target_steps_multiplier = p.training.target_steps_multiplier;
  e.timeline_max_ranks = o.timeline_ranks ? *o.timeline_ranks : p.simulation.trace_ranks;
  e.record_timeline = !o.trace_path.empty() || o.keep_timeline;
  return e;
}

Run predict(const model::Scenario& s, const RunOptions& o, PredictorCache* cache) {
  check_has_work(s.file, s);
  Run run;
  run.engine = engine_of(s, o);
  const bool event = run.engine == model::Engine::kEvent;
  if (!o.trace_path.empty() && !event) throw Error("--trace needs --engine event");
  run.points = model::expand_sweep(s);
  for (model::Scenario& p : run.points) {
    p.simulation.engine = run.engine;
    check_straggler(p, run.points.size() > 1);
  }
  if (!o.trace_path.empty()) {
    // Every point's own file (a sweep writes t.1.json, t.2.json, ...): never the scenario,
    // never a FIFO or a device (model/atomic_file.hpp check_output_path).
    check_trace_path(o.trace_path);
    for (std::size_t i = 0; run.points.size() > 1 && i < run.points.size(); ++i) {
      model::check_output_path("--trace", trace_file(o.trace_path, i, run.points.size()), {s.file});
    }
  }
  PredictorCache own;
  PredictorCache& c = cache != nullptr ? *cache : own;
  const bool record = event && (o.keep_timeline || !o.trace_path.empty());
  const auto check_cancelled = [&] {
    if (o.cancelled && o.cancelled()) throw Cancelled();
  };
  if (event) {
    // Every point's bounds before any point runs: a sweep refused at its 125th point leaves no
    // trace of the first 124 and has not spent their simulation time.
    double work = 0, spans = 0;
    for (const model::Scenario& p : run.points) {
      check_cancelled();
      Predictor& predictor = *c.get(p);
      predictor.set_measured(o.measured);
      const Prediction pred =
          predictor.predict(p.cluster, p.training, p.parallelism, p.gpu_hour_usd, 0.0);
      const StepPlan plan = predictor.plan(p.cluster, p.training, p.parallelism);
      check_event_point(p, o, pred, plan, &work);
      if (record) check_timeline_spans(p, estimated_spans(p, o, plan), &spans);
    }
  }
  run.predictions.reserve(run.points.size());
  // A run that fails or is interrupted (SIGINT/SIGTERM, a cancel) after writing some points'
  // traces (a full disk) removes them: no file of an incomplete run is left behind.
  model::RunOutputs own_outputs;
  model::RunOutputs& written = o.outputs != nullptr ? *o.outputs : own_outputs;
  for (std::size_t i = 0; i < run.points.size(); ++i) {
    check_cancelled();
    const model::Scenario& p = run.points[i];
    std::vector<Span> timeline;
    run.predictions.push_back(predict_with(p, o, *c.get(p), record ? &timeline : nullptr, nullptr));
    if (!o.trace_path.empty()) {
      const EventOptions eo = event_options(p, o);
      const std::string file = trace_file(o.trace_path, i, run.points.size());
      write_chrome_trace(file, timeline,
                         {{"scenario", s.name},
                          {"file", s.file},
                          {"gpus", p.cluster.gpus},
                          {"point", p.point},
                          {"steps", eo.steps},
                          {"jitter_cv", eo.jitter_cv},
                          {"seed", eo.seed},
                          {"ranks_shown", "the first " + std::to_string(eo.timeline_max_ranks) +
                                              " ranks and the slowest one"}},
                         &written);
    }
    run.timelines.push_back(o.keep_timeline ? std::move(timeline) : std::vector<Span>{});
  }
  own_outputs.keep();
  return run;
}

Prediction predict_point(const model::Scenario& point, const RunOptions& o, PredictorCache& cache,
                         std::vector<Span>* timeline, double* sweep_work) {
  check_has_work(point.file, point);
  if (engine_of(point, o) == model::Engine::kEvent) {
    check_straggler(point, !point.point.empty());
  } else {
    timeline = nullptr;
  }
  return predict_with(point, o, *cache.get(point), timeline, sweep_work);
}

Prediction predict_point(const model::Scenario& point, const RunOptions& o) {
  PredictorCache cache;
  return predict_point(point, o, cache);
}

PlanResult plan(const model::Scenario& s, PredictorCache* cache) {
  check_has_work(s.file, s);
  PredictorCache own;
  return make_plan(s, *(cache != nullptr ? cache : &own)->get(s));
}

nlohmann::json run_json(const model::Scenario& s, const Run& r) {
  return results_json(s, r.points, r.predictions, engine_name(r.engine));
}

}  // namespace ddpsim::sim
