#include "gui/models/sweep_engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include "model/error.hpp"
#include "model/scenario.hpp"
#include "simulator/event_dp.hpp"
#include "simulator/memory.hpp"
#include "simulator/planner.hpp"

namespace ddpsim::gui {

namespace {

constexpr model::Strategy kStrategies[] = {
    model::Strategy::kDdp,       model::Strategy::kZero1,         model::Strategy::kZero2,
    model::Strategy::kZero3,     model::Strategy::kFsdpFullShard, model::Strategy::kFsdpShardGradOp,
    model::Strategy::kFsdpHybrid};

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
  s.weakEfficiency = p.weak_scaling_efficiency;
  s.strongEfficiency = p.strong_scaling_efficiency;
  s.memoryBytes = p.memory.total();
  s.fitsInMemory = p.fits_in_memory;
  s.timeToTrainS = p.time_to_train_s;
  s.gpuHours = p.gpu_hours;
  s.costUsd = p.cost_usd;
  s.gpuHoursPer1000Steps = p.step_time_s * p.gpus * 1000.0 / 3600.0;
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

std::vector<StrategyMemory> memoryByStrategy(const model::Scenario& s,
                                             const sim::Predictor& predictor) {
  std::vector<StrategyMemory> out;
  for (model::Strategy st : kStrategies) {
    StrategyMemory m;
    m.strategy = model::strategy_name(st);
    model::ParallelismConfig par = s.parallelism;
    par.strategy = st;
    try {
      const sim::Prediction p = predictor.predict(s.cluster, s.training, par, s.gpu_hour_usd);
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

PlanPointView toPlanPoint(const sim::PlanPoint& p) {
  PlanPointView v;
  v.gpus = p.gpus;
  v.perGpuBatch = p.per_gpu_batch;
  v.globalBatch = p.global_batch;
  v.timeMetric = p.time_metric();
  v.gpuHoursMetric = p.gpu_hours_metric();
  v.costUsd = p.cost_usd;
  return v;
}

PlanView planView(const model::Scenario& s, const sim::Predictor& predictor) {
  PlanView v;
  try {
    const sim::PlanResult r = sim::make_plan(s, predictor);
    v.byThroughput = r.by_throughput;
    v.candidates = r.candidates;
    v.feasible = r.feasible;
    for (const sim::PlanPoint& p : r.pareto) v.pareto.push_back(toPlanPoint(p));
    if (r.chosen) v.chosen = toPlanPoint(*r.chosen);
    v.noneFeasibleReason = r.none_feasible_reason;
  } catch (const std::exception& e) {
    v.error = e.what();
  }
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

TimelineData timelineView(const model::Scenario& s, const sim::Predictor& predictor, int ranks) {
  TimelineData v;
  v.gpus = s.cluster.gpus;
  try {
    const sim::StepPlan plan = predictor.plan(s.cluster, s.training, s.parallelism);
    sim::EventOptions o;
    o.steps = 1;
    o.jitter_cv = s.simulation.jitter_cv;
    o.jitter_distribution = s.simulation.jitter_distribution;
    o.seed = s.simulation.seed;
    o.straggler_rank = s.simulation.straggler_rank;
    o.straggler_slowdown = s.simulation.straggler_slowdown;
    o.record_timeline = true;
    o.timeline_max_ranks = std::max(1, ranks);
    const sim::EventResult r = sim::simulate_event(plan, o);
    v.stepTimeS = r.mean_step_time_s;
    std::set<int> shown;
    for (const sim::Span& sp : r.timeline) shown.insert(sp.rank);
    v.ranks.assign(shown.begin(), shown.end());
    for (const sim::Span& sp : r.timeline) {
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

std::string cacheKey(const nlohmann::json& doc, const std::string& file) {
  const auto part = [&](const char* k) { return doc.contains(k) ? doc.at(k).dump() : "-"; };
  // The hardware spec takes cluster.gpus_per_node (model/scenario.cpp), so it is in the key.
  const nlohmann::json::json_pointer gpn("/cluster/gpus_per_node");
  return file + "\n" + part("model") + "\n" + part("hardware") + "\n" +
         (doc.contains(gpn) ? doc.at(gpn).dump() : "-");
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
  if (best > 0) return best;
  const nlohmann::json::json_pointer g("/cluster/gpus");
  const int gpus = doc.contains(g) && doc.at(g).is_number_integer() ? doc.at(g).get<int>() : 1;
  return std::max(64, gpus);
}

std::shared_ptr<const sim::Predictor> PredictorCache::get(const model::Scenario& s,
                                                          const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!predictor_ || key != key_) {
    predictor_ = std::make_shared<const sim::Predictor>(s);
    key_ = key;
  }
  return predictor_;
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
  out.strategy = model::strategy_name(s.parallelism.strategy);
  out.currentGpus = s.cluster.gpus;
  out.capacityBytes = s.hardware.gpu.memory_bytes;

  std::shared_ptr<const sim::Predictor> predictor;
  try {
    predictor = cache ? cache->get(s, cacheKey(req.doc, req.file))
                      : std::make_shared<const sim::Predictor>(s);
  } catch (const std::exception& e) {
    out.error = e.what();
    return out;
  }
  // A Predictor is not thread-safe (mutable caches): callers run one computation at a time
  // (SweepRunner's pool has one thread; ddpsim-plot is single-threaded).
  for (int g : gpuAxis(req.maxGpus, s.cluster.gpus_per_node, req.maxPoints)) {
    model::ClusterConfig c = s.cluster;
    c.gpus = g;
    try {
      out.points.push_back(toStepPoint(predictor->predict(c, s.training, s.parallelism,
                                                          s.gpu_hour_usd, s.simulation.jitter_cv)));
    } catch (const std::exception& e) {
      StepPoint p;
      p.gpus = g;
      p.nodes = c.nodes();
      p.globalBatch = s.training.per_gpu_batch * s.training.grad_accumulation * g;
      p.error = e.what();
      out.points.push_back(std::move(p));
    }
  }
  if (req.withMemory) out.memory = memoryByStrategy(s, *predictor);
  if (req.withPlan) out.plan = planView(s, *predictor);
  if (req.withTimeline) out.timeline = timelineView(s, *predictor, req.timelineRanks);
  out.computeMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace ddpsim::gui
