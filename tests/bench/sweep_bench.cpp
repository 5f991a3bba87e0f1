// sweep_bench.cpp: what `ddpsim predict SWEEP.json --format json` costs per sweep point, at 1,000,
// 4,000 and 10,000 points (issue 42: a 10,000-point sweep took 29-41 s and grew quadratically;
// the goal is under 5 s on this machine, and a cost linear in the points).
//
// The scenario is the reliability catalogue's sweep model (tests/reliability/extremes.json
// ext-sweep-1e4-points-analytic: an MLP 64 -> 64 -> 8 on DGX H100, analytic engine) with ONE axis
// of N values, training.per_gpu_batch = 1..N: the shape that was quadratic (every point copied
// the whole document, the axis's N values included). One iteration is what the command does
// after reading the file: parse_scenario (the sweep's values validated), sim::predict (expand
// the sweep, predict every point), sim::run_json (the document, checked finite) and dump(2).
// items/s is points/s; Google Benchmark fits the times to O(N) (BM_PredictSweep_BigO, _RMS).
// Results and the exact command: results/BENCHMARKS.md, results/bench/sweep.json.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "model/scenario/scenario.hpp"
#include "simulator/run.hpp"

namespace {

using nlohmann::json;

json sweep_doc(std::int64_t points) {
  json batches = json::array();
  for (std::int64_t b = 1; b <= points; ++b) batches.push_back(b);
  return {{"name", "bench sweep " + std::to_string(points)},
          {"model", {{"mlp", {{"widths", {64, 64, 8}}}}}},
          {"hardware", {{"preset", "dgx-h100"}}},
          {"cluster", {{"gpus", 8}}},
          {"training", {{"per_gpu_batch", 4}, {"precision", "amp_bf16"}, {"optimizer", "adamw"}}},
          {"sweep", {{"training.per_gpu_batch", batches}}}};
}

void BM_PredictSweep(benchmark::State& state) {
  const json doc = sweep_doc(state.range(0));
  std::size_t bytes = 0;
  for (auto _ : state) {
    const ddpsim::model::Scenario s = ddpsim::model::parse_scenario(doc, "bench-sweep.json");
    const ddpsim::sim::Run r = ddpsim::sim::predict(s);
    const std::string out = ddpsim::sim::run_json(s, r).dump(2);
    bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.range(0) * state.iterations());
  state.SetComplexityN(state.range(0));
  state.counters["points"] = static_cast<double>(state.range(0));
  state.counters["json_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_PredictSweep)
    ->Arg(1000)
    ->Arg(4000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

}  // namespace

BENCHMARK_MAIN();
