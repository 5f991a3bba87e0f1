// analytic_bench.cpp: how many analytic configurations per second one core evaluates.
//
// The goal is >= 100,000 configurations/s on a 1,024-point gpt3-175b sweep, each point
// running the per-bucket overlap over its several hundred buckets (Calculon, the best published
// analytic tool, takes ~1 s per estimate). items/s in the report is configurations/s.
// Results and the exact command: results/BENCHMARKS.md.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "model/scenario/scenario.hpp"
#include "simulator/analytic/analytic.hpp"

namespace {

using ddpsim::model::Scenario;
using ddpsim::sim::Prediction;
using ddpsim::sim::Predictor;

constexpr int kSweepPoints = 1024;

// Built in memory with parse_scenario so the benchmark needs no file beside the presets; the
// document is what a user would write, so validation and preset resolution are the real ones.
Scenario make_scenario(const std::string& model, int gpus) {
  nlohmann::json doc = {
      {"name", "bench " + model},
      {"model", {{"preset", model}}},
      {"hardware", {{"preset", "dgx-h100"}}},
      {"cluster", {{"gpus", gpus}}},
      {"training", {{"per_gpu_batch", 1}, {"precision", "bf16"}, {"optimizer", "adam"}}},
  };
  return ddpsim::model::parse_scenario(doc, "bench-" + model + ".json");
}

const Scenario& gpt3() {
  // Loading the 175B preset builds its workload once; every benchmark shares it.
  static const Scenario s = make_scenario("gpt3-175b", 1024);
  return s;
}

// One pass over cluster.gpus = 8k, k = 1..1024; returns the last point's bucket count.
std::size_t sweep_gpus(const Predictor& p, const Scenario& s) {
  ddpsim::model::ClusterConfig c = s.cluster;
  std::size_t buckets = 0;
  for (int k = 1; k <= kSweepPoints; ++k) {
    c.gpus = 8 * k;
    Prediction r = p.predict(c, s.training, s.parallelism, s.gpu_hour_usd, 0.0);
    buckets = r.buckets.size();
    benchmark::DoNotOptimize(r);
  }
  return buckets;
}

// Warm: one Predictor for the whole run, so after the first pass every topology, the bucket
// plan and the layer times come from its caches; what remains is the per-point work.
void BM_Gpt3Sweep1024Warm(benchmark::State& state) {
  const Scenario& s = gpt3();
  const Predictor p(s);
  std::size_t buckets = sweep_gpus(p, s);  // fill the caches outside the timed loop
  for (auto _ : state) buckets = sweep_gpus(p, s);
  state.SetItemsProcessed(static_cast<std::int64_t>(kSweepPoints) * state.iterations());
  state.counters["buckets"] = static_cast<double>(buckets);
}
BENCHMARK(BM_Gpt3Sweep1024Warm)->Unit(benchmark::kMillisecond);

// Cold: a fresh Predictor per sweep, so each of the 1,024 points builds its topology and the
// first point builds the bucket plan and the layer times (the workload itself is shared).
void BM_Gpt3Sweep1024Cold(benchmark::State& state) {
  const Scenario& s = gpt3();
  std::size_t buckets = 0;
  for (auto _ : state) {
    const Predictor p(s);
    buckets = sweep_gpus(p, s);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(kSweepPoints) * state.iterations());
  state.counters["buckets"] = static_cast<double>(buckets);
}
BENCHMARK(BM_Gpt3Sweep1024Cold)->Unit(benchmark::kMillisecond);

// bucket_cap_mb = 1..1024 MiB at 1024 GPUs: every point has its own bucket plan. The Predictor
// is fresh per sweep, so each point runs assign_buckets (the un-cached path); the topology and
// layer times are shared by all points of a sweep.
void BM_Gpt3SweepBuckets(benchmark::State& state) {
  const Scenario& s = gpt3();
  double buckets_sum = 0;
  for (auto _ : state) {
    const Predictor p(s);
    ddpsim::model::ParallelismConfig par = s.parallelism;
    par.bucket_cap_defaulted = false;
    buckets_sum = 0;
    for (int mb = 1; mb <= kSweepPoints; ++mb) {
      par.bucket_cap_mb = mb;
      Prediction r = p.predict(s.cluster, s.training, par, s.gpu_hour_usd, 0.0);
      buckets_sum += static_cast<double>(r.buckets.size());
      benchmark::DoNotOptimize(r);
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(kSweepPoints) * state.iterations());
  // Mean over the sweep: ~hundreds at 1 MiB down to ~one per large tensor at 1 GiB.
  state.counters["buckets"] = buckets_sum / kSweepPoints;
}
BENCHMARK(BM_Gpt3SweepBuckets)->Unit(benchmark::kMillisecond);

// One warm prediction of a small model (gpt2-xl, 64 GPUs) for scale.
void BM_SinglePredict(benchmark::State& state) {
  static const Scenario s = make_scenario("gpt2-xl", 64);
  const Predictor p(s);
  Prediction r = p.predict(s.cluster, s.training, s.parallelism, s.gpu_hour_usd, 0.0);
  for (auto _ : state) {
    r = p.predict(s.cluster, s.training, s.parallelism, s.gpu_hour_usd, 0.0);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["buckets"] = static_cast<double>(r.buckets.size());
}
BENCHMARK(BM_SinglePredict)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
