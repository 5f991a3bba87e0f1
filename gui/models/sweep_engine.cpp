#include "gui/models/sweep_engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>

#include "gui/models/plan_bounds.hpp"
#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/event/simulate.hpp"
#include "simulator/planner.hpp"
#include "simulator/prediction/memory.hpp"
#include "simulator/report.hpp"

namespace ddpsim::gui {

namespace {

constexpr model::Strategy kStrategies[] = {
    model::Strategy::kDdp,           model::Strategy::kZero1,
    model::Strategy::kZero2,         model::Strategy::kZero3,
    model::Strategy::kFsdpFullShard, model::Strategy::kFsdpShardGradOp,
    model::Strategy::kFsdpHybrid,    model::Strategy::kFsdp2};

StepPoint toStepPoint(const sim::Prediction& p) {
  StepPoint s;
  s.gpus = p.gpus;
  s.nodes = p.nodes;
  s.globalBatch = p.global_batch;
  s.stepTimeS = p.step_time_s;
  s.computeS = p.forward_time_s + p.backward_time_s;
  s.exposedCommS = p.exposed_comm_s;
  s.optimizerS = p.optimizer_time_s;
  s.otherS = std::max(0.0, p.step_time_s - s.computeS - s.exposedCommS - s.optimizerS);
  s.commS = p.comm_time_s;
  s.throughputSamplesPerS = p.throughput_samples_per_s;
  s.mfu = sim::mfu(p);
  s.tokensPerSPerGpu = sim::tokens_per_s_per_gpu(p);
  s.weakEfficiency = p.weak_scaling_efficiency;
  s.strongEfficiency = p.strong_scaling_efficiency;
  s.memoryBytes = p.memory.total();
  s.fitsInMemory = p.fits_in_memory;
  s.stepsToTarget = p.steps_to_target;
  s.timeToTrainS = p.time_to_train_s;
  s.gpuHours = p.gpu_hours;
  s.costUsd = p.cost_usd;
  const double perMillion =
      p.global_batch > 0 ? p.step_time_s * 1e6 / static_cast<double>(p.global_batch) / 3600.0 : 0.0;
  s.hoursPerMillionSamples = perMillion;
  s.gpuHoursPerMillionSamples = perMillion * p.gpus;
  if (p.goodput) {
    // What the planner optimises (planner.cpp): every time and cost with failures, i.e. / ETTR.
    const sim::Goodput& g = *p.goodput;
    s.ettr = g.ettr;
    s.hoursWithoutFailures = p.time_to_train_s ? *p.time_to_train_s / 3600.0 : perMillion;
    s.timeToTrainS = g.time_to_train_s;
    s.gpuHours = g.gpu_hours;
    s.costUsd = g.cost_usd;
    if (g.ettr > 0) {
      s.hoursPerMillionSamples /= g.ettr;
      s.gpuHoursPerMillionSamples /= g.ettr;
    }
  }
  return s;
}

void fillMemory(StrategyMemory& m, const sim::MemoryEstimate& e) {
  m.paramsBytes = e.params_bytes;
  m.gradsBytes = e.grads_bytes;
  m.optimizerBytes = e.optimizer_bytes;
  m.activationBytes = e.activation_bytes;
  m.bufferBytes = e.buffer_bytes;
  m.runtimeBytes = e.runtime_bytes;
  m.fragmentationBytes = e.fragmentation_bytes;
}

std::vector<StrategyMemory> memoryByStrategy(const model::Scenario& s, PredictorCache& cache) {
  std::vector<StrategyMemory> out;
  sim::RunOptions analytic;
  analytic.engine = model::Engine::kAnalytic;
  model::Scenario point = s;
  for (model::Strategy st : kStrategies) {
    StrategyMemory m;
    m.strategy = model::strategy_name(st);
    point.parallelism.strategy = st;
    const model::ParallelismConfig& par = point.parallelism;
    try {
      const sim::Prediction p = sim::predict_point(point, analytic, cache);
      fillMemory(m, p.memory);
      m.source = "predictor";
    } catch (const UnsupportedError&) {
      // The step of this strategy is not modelled in this build; its memory is (memory.hpp
      // covers every ZeRO stage), with the inputs Predictor::predict passes except the comm
      // hook's state, which only DDP hooks have.
      try {
        sim::MemoryInputs in;
        in.workload = s.workload.get();
        in.precision = s.training.precision;
        in.optimizer = s.training.optimizer;
        in.strategy = st;
        in.dp_size = s.cluster.gpus;
        in.gpus_per_node = s.cluster.gpus_per_node;
        in.micro_batch = s.training.per_gpu_batch;
        in.gradient_as_bucket_view = par.gradient_as_bucket_view;
        fillMemory(m, sim::estimate_memory(in));
        m.source = "memory model";
      } catch (const std::exception& e) {
        m.error = e.what();
      }
    } catch (const std::exception& e) {
      m.error = e.what();
    }
    out.push_back(std::move(m));
  }
  return out;
}

PlanPointView toPlanPoint(const sim::PlanPoint& p, std::int64_t tokensPerSample) {
  PlanPointView v;
  v.stepsToTarget = p.steps_to_target;
  v.tokensPerSample = tokensPerSample;
  v.ettr = p.ettr;
  v.gpus = p.gpus;
  v.perGpuBatch = p.per_gpu_batch;
  v.globalBatch = p.global_batch;
  v.timeMetric = p.time_metric();
  v.gpuHoursMetric = p.gpu_hours_metric();
  v.costUsd = p.cost_usd;
  v.strategy = model::strategy_name(p.strategy);
  v.gradAccumulation = p.grad_accumulation;
  v.bucketCapMb = p.bucket_cap_mb;
  v.commHook = p.comm_hook;
  v.stepTimeS = p.step_time_s;
  v.memoryBytes = p.memory_per_gpu_bytes;
  v.limitedBy = p.limited_by;
  v.system = p.system_label;
  v.gpuHourUsd = p.gpu_hour_usd;
  v.mfu = p.mfu;
  v.tokensPerSPerGpu = p.tokens_per_s_per_gpu;
  v.costPerMillionTokens = p.cost_per_million_tokens;
  v.memoryHeadroomBytes = p.memory_headroom_bytes;
  if (p.uncertainty) {
    v.band = ErrorBandView{p.uncertainty->median_abs, p.uncertainty->max_abs, p.uncertainty->rows,
                           p.uncertainty->matched_on};
  }
  return v;
}

PlanSystemView toSystemView(const sim::PlanSystemResult& sr, std::int64_t tokensPerSample) {
  PlanSystemView v;
  v.label = sr.label;
  v.hardware = sr.hardware;
  v.gpu = sr.gpu;
  v.gpuHourUsd = sr.gpu_hour_usd;
  v.gpus = sr.gpus;
  v.candidates = sr.candidates;
  v.feasible = sr.feasible;
  if (sr.best) v.best = toPlanPoint(*sr.best, tokensPerSample);
  v.withinBandOfChosen = sr.within_band_of_chosen;
  return v;
}

PlanView planView(const model::Scenario& s, PredictorCache& cache) {
  PlanView v;
  v.objective = model::objective_name(s.plan.objective);
  v.deadlineHours = s.plan.deadline_hours;
  v.budgetUsd = s.plan.budget_usd;
  try {
    const sim::PlanResult r = sim::plan(s, &cache);
    // Tokens per sample (1 for models without a sequence): the tokens to the target.
    const std::int64_t seq = s.workload ? std::max<std::int64_t>(1, s.workload->seq_len) : 1;
    v.byThroughput = r.by_throughput;
    v.candidates = r.candidates;
    v.feasible = r.feasible;
    for (const sim::PlanPoint& p : r.pareto) v.pareto.push_back(toPlanPoint(p, seq));
    if (r.chosen) v.chosen = toPlanPoint(*r.chosen, seq);
    v.noneFeasibleReason = r.none_feasible_reason;
    v.rejected = r.rejected;
    v.dominated = r.dominated;
    v.warnings = r.warnings;
    if (r.nearest) v.nearest = toPlanPoint(*r.nearest, seq);
    v.nearestReason = r.nearest_reason;
    v.byCost = r.by_cost;
    std::set<int> sizes;
    for (const sim::PlanSystemResult& sr : r.systems) {
      v.systems.push_back(toSystemView(sr, seq));
      sizes.insert(sr.gpus.begin(), sr.gpus.end());
    }
    v.searchedGpus.assign(sizes.begin(), sizes.end());
  } catch (const std::exception& e) {
    v.error = e.what();
  }
  return v;
}

// The plan of `s`, or of the document bounded by the window's max GPUs (plan_bounds.hpp) when
// that differs. A bounded document that does not parse (the bound against the file's own
// plan.min_gpus) gives the planner's message, not a failed sweep.
PlanView boundedPlanView(const model::Scenario& s, const SweepRequest& req, PredictorCache& c) {
  if (req.planMaxGpus < 1) return planView(s, c);
  const nlohmann::json bounded = planDocument(req.doc, req.planMaxGpus);
  if (bounded == req.doc) return planView(s, c);
  PlanView v;
  try {
    v = planView(model::parse_scenario(bounded, req.file), c);
  } catch (const std::exception& e) {
    v.objective = model::objective_name(s.plan.objective);
    v.error = e.what();
  }
  v.panelMaxGpus = req.planMaxGpus;
  return v;
}

TimelineSpan::Kind spanKind(const sim::Span& sp, int& bucket) {
  bucket = -1;
  if (sp.stream == sim::Stream::kComm) {
    static const std::string kBucket = "allreduce bucket ";
    if (sp.name.rfind(kBucket, 0) == 0) bucket = std::atoi(sp.name.c_str() + kBucket.size());
    return TimelineSpan::Kind::kCollective;
  }
  if (sp.name.rfind("fwd ", 0) == 0) return TimelineSpan::Kind::kForward;
  if (sp.name.rfind("bwd ", 0) == 0) return TimelineSpan::Kind::kBackward;
  if (sp.name == "optimizer") return TimelineSpan::Kind::kOptimizer;
  return TimelineSpan::Kind::kOther;
}

TimelineData timelineView(const model::Scenario& s, PredictorCache& cache, int ranks) {
  TimelineData v;
  v.gpus = s.cluster.gpus;
  try {
    // One step of the scenario's own point through the run API, so every simulation knob
    // (interference, local SGD, staleness, network flow, jitter, straggler) applies as in
    // `ddpsim predict --engine event`; local SGD shows one whole averaging period.
    sim::RunOptions o;
    o.engine = model::Engine::kEvent;
    o.steps = std::max(1, s.simulation.local_sgd_period);
    o.keep_timeline = true;
    o.timeline_ranks = std::max(1, ranks);
    std::vector<sim::Span> timeline;
    const sim::Prediction p = sim::predict_point(s, o, cache, &timeline);
    v.stepTimeS = p.step_time_s;
    std::set<int> shown;
    for (const sim::Span& sp : timeline) shown.insert(sp.rank);
    v.ranks.assign(shown.begin(), shown.end());
    for (const sim::Span& sp : timeline) {
      const auto index =
          std::lower_bound(v.ranks.begin(), v.ranks.end(), sp.rank) - v.ranks.begin();
      TimelineSpan t;
      t.lane = static_cast<int>(2 * index + (sp.stream == sim::Stream::kComm ? 1 : 0));
      t.startS = static_cast<double>(sp.start.count()) * 1e-9;
      t.endS = static_cast<double>(sp.end.count()) * 1e-9;
      t.name = sp.name;
      t.kind = spanKind(sp, t.bucket);
      v.spans.push_back(std::move(t));
    }
  } catch (const std::exception& e) {
    v.error = e.what();
  }
  return v;
}

// The scenario with only cluster.gpus moved, at every GPU count of `axis`.
std::vector<StepPoint> pointsAlong(const model::Scenario& s, const std::vector<int>& axis,
                                   const sim::RunOptions& run, PredictorCache& c, bool withJson) {
  std::vector<StepPoint> out;
  model::Scenario point = s;
  for (int g : axis) {
    point.cluster.gpus = g;
    try {
      const sim::Prediction pred = sim::predict_point(point, run, c);
      out.push_back(toStepPoint(pred));
      if (withJson) out.back().json = sim::prediction_json(point, pred);
    } catch (const std::exception& e) {
      StepPoint p;
      p.gpus = g;
      p.nodes = point.cluster.nodes();
      p.globalBatch = s.training.per_gpu_batch * s.training.grad_accumulation * g;
      p.error = e.what();
      out.push_back(std::move(p));
    }
  }
  return out;
}

// "parallelism.strategy" -> "strategy": the last segment names the knob well enough.
std::string variantLabel(const nlohmann::json& point) {
  std::string label;
  for (const auto& [key, value] : point.items()) {
    if (!label.empty()) label += ", ";
    const auto dot = key.rfind('.');
    label += (dot == std::string::npos ? key : key.substr(dot + 1)) + " ";
    label += value.is_string() ? value.get<std::string>() : value.dump();
  }
  return label;
}

// issue 19 item 6: the scenario's other sweep axes (strategy, bucket cap, ...) as one series per
// combination, each predicted along the same GPU axis.
void variantsAlong(const model::Scenario& s, const std::vector<int>& axis,
                   const sim::RunOptions& run, PredictorCache& c, int maxVariants,
                   SweepResult& out) {
  model::Scenario base = s;
  std::erase_if(base.sweep, [](const model::SweepAxis& a) { return a.key == "cluster.gpus"; });
  if (base.sweep.empty()) return;
  std::size_t combinations = 1;
  for (const model::SweepAxis& a : base.sweep)
    combinations *= std::max<std::size_t>(1, a.values.size());
  const auto keep = static_cast<std::size_t>(std::max(1, maxVariants));
  // Only the combinations drawn are expanded (expand_sweep validates every point it makes).
  while (combinations > keep && !base.sweep.empty()) {
    model::SweepAxis& last = base.sweep.back();
    const std::size_t others = combinations / std::max<std::size_t>(1, last.values.size());
    const std::size_t room = std::max<std::size_t>(1, keep / std::max<std::size_t>(1, others));
    if (room >= last.values.size()) break;
    out.variantsLeftOut += (last.values.size() - room) * others;
    last.values.resize(room);
    combinations = others * room;
  }
  std::vector<model::Scenario> points;
  try {
    points = model::expand_sweep(base);
  } catch (const std::exception& e) {
    VariantSeries v;
    v.label = "sweep";
    v.error = e.what();
    out.variants.push_back(std::move(v));
    return;
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i >= keep) {
      out.variantsLeftOut += points.size() - keep;
      break;
    }
    VariantSeries v;
    v.label = variantLabel(points[i].point);
    v.points = pointsAlong(points[i], axis, run, c, false);
    out.variants.push_back(std::move(v));
  }
}

}  // namespace

std::vector<int> gpuAxis(int maxGpus, int gpusPerNode, int maxPoints) {
  if (maxGpus < 1 || gpusPerNode < 1) return {1};
  maxPoints = std::max(maxPoints, 2);
  std::vector<int> out;
  for (int g = 1; g < gpusPerNode && g <= maxGpus; g *= 2) out.push_back(g);
  const int nodesMax = maxGpus / gpusPerNode;
  if (nodesMax < 1) {
    if (out.empty() || out.back() != maxGpus) out.push_back(maxGpus);
    return out;
  }
  const int room = std::max(2, maxPoints - static_cast<int>(out.size()));
  if (nodesMax <= room) {
    for (int k = 1; k <= nodesMax; ++k) out.push_back(k * gpusPerNode);
    return out;
  }
  // Geometric selection of `room` distinct node counts from 1 to nodesMax: each the rounded
  // geometric target, pushed up past the previous one and down to leave room for the rest.
  std::vector<int> nodes;
  for (int i = 0; i < room; ++i) {
    const double f = static_cast<double>(i) / (room - 1);
    int k = static_cast<int>(std::lround(std::pow(static_cast<double>(nodesMax), f)));
    if (!nodes.empty()) k = std::max(k, nodes.back() + 1);
    k = std::min(k, nodesMax - (room - 1 - i));
    nodes.push_back(k);
  }
  for (int k : nodes) out.push_back(k * gpusPerNode);
  return out;
}

std::vector<int> scenarioGpuCounts(const nlohmann::json& doc, int maxPoints) {
  const nlohmann::json::json_pointer p("/sweep/cluster.gpus");
  std::vector<int> all;
  if (!doc.contains(p) || !doc.at(p).is_array()) return all;
  for (const auto& v : doc.at(p)) {
    if (v.is_number_integer() && v.get<std::int64_t>() >= 1 &&
        v.get<std::int64_t>() <= std::numeric_limits<int>::max()) {
      all.push_back(v.get<int>());
    }
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  maxPoints = std::max(maxPoints, 2);
  if (static_cast<int>(all.size()) <= maxPoints) return all;
  // Geometric by rank: index i of n kept at round((n-1)^(k/(m-1))) - 1, pushed past the previous.
  std::vector<int> out;
  const double n = static_cast<double>(all.size());
  std::size_t prev = 0;
  for (int k = 0; k < maxPoints; ++k) {
    const double f = static_cast<double>(k) / (maxPoints - 1);
    auto i = static_cast<std::size_t>(std::lround(std::pow(n, f))) - 1;
    if (k > 0) i = std::max(i, prev + 1);
    i = std::min(i, all.size() - static_cast<std::size_t>(maxPoints - k));
    out.push_back(all[i]);
    prev = i;
  }
  return out;
}

int defaultMaxGpus(const nlohmann::json& doc) {
  int best = 0;
  const auto scan = [&](const nlohmann::json::json_pointer& p) {
    if (!doc.contains(p) || !doc.at(p).is_array()) return;
    for (const auto& v : doc.at(p)) {
      if (v.is_number_integer()) best = std::max(best, v.get<int>());
    }
  };
  scan(nlohmann::json::json_pointer("/sweep/cluster.gpus"));
  scan(nlohmann::json::json_pointer("/plan/gpus"));
  const nlohmann::json::json_pointer planMax("/plan/max_gpus");
  if (doc.contains(planMax) && doc.at(planMax).is_number_integer())
    best = std::max(best, doc.at(planMax).get<int>());
  if (best > 0) return best;
  const nlohmann::json::json_pointer g("/cluster/gpus");
  const int gpus = doc.contains(g) && doc.at(g).is_number_integer() ? doc.at(g).get<int>() : 1;
  return std::max(64, gpus);
}

SweepResult computeSweep(const SweepRequest& req, PredictorCache* cache) {
  const auto t0 = std::chrono::steady_clock::now();
  SweepResult out;
  out.generation = req.generation;
  model::Scenario s;
  try {
    s = model::parse_scenario(req.doc, req.file);
  } catch (const std::exception& e) {
    out.error = e.what();
    return out;
  }
  out.name = s.name;
  out.subject = s.model_label + " on " + s.hardware.name;
  if (s.workload) {
    out.modelName = s.workload->name;
    out.modelParams = s.workload->param_count();
    out.seqLen = s.workload->seq_len;
  }
  out.gpusPerNode = s.cluster.gpus_per_node;
  out.strategy = model::strategy_name(s.parallelism.strategy);
  out.currentGpus = s.cluster.gpus;
  out.capacityBytes = s.hardware.gpu.memory_bytes;

  PredictorCache own;
  PredictorCache& c = cache != nullptr ? *cache : own;
  sim::RunOptions run;
  run.engine = req.engine;
  if (req.scenarioSweep) {
    try {
      const sim::Run r = sim::predict(s, run, &c);
      for (std::size_t i = 0; i < r.points.size(); ++i) {
        out.points.push_back(toStepPoint(r.predictions[i]));
        if (req.withJson)
          out.points.back().json = sim::prediction_json(r.points[i], r.predictions[i]);
      }
    } catch (const std::exception& e) {
      out.error = e.what();
      return out;
    }
  } else {
    const std::vector<int> axis =
        !req.gpuCounts.empty() ? req.gpuCounts
                               : gpuAxis(req.maxGpus, s.cluster.gpus_per_node, req.maxPoints);
    out.points = pointsAlong(s, axis, run, c, req.withJson);
    if (req.withVariants) variantsAlong(s, axis, run, c, req.maxVariants, out);
  }
  // A Predictor is not thread-safe (mutable caches): callers run one computation at a time
  // (SweepRunner's pool has one thread; ddpsim-plot is single-threaded).
  if (req.withMemory) out.memory = memoryByStrategy(s, c);
  if (req.withPlan) out.plan = boundedPlanView(s, req, c);
  if (req.withTimeline) out.timeline = timelineView(s, c, req.timelineRanks);
  out.computeMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace ddpsim::gui
