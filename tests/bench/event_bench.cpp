// event_bench.cpp: speed of the discrete-event core and of the event-driven DDP model.
//
// Goals (issue 4): the bare engine processes >= 10 million events per second; one DDP step of
// gpt3-175b (several hundred buckets) on 1,024 ranks WITH jitter takes < 1 s; the cost grows
// linearly in ranks and in layers. items/s is events/s for the engine and simulated steps/s
// for the model benchmarks; the "events" counter is events per simulated run.
// Results and the exact command: results/BENCHMARKS.md, results/bench/event.json.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/scenario/scenario.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/event/engine.hpp"
#include "simulator/event/simulate.hpp"

namespace {

using ddpsim::SimTime;
using ddpsim::model::Scenario;
using ddpsim::sim::Engine;
using ddpsim::sim::EventOptions;
using ddpsim::sim::EventResult;
using ddpsim::sim::Predictor;
using ddpsim::sim::StepPlan;

// The engine before the radix heap: a 4-ary min-heap of (time, seq, slot) keys, kept here only
// so that one run measures both and reports their ratio (results/BENCHMARKS.md).
class HeapEngine {
 public:
  using Handler = std::function<void()>;
  void schedule_in(SimTime delay, Handler h) {
    std::uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
      slots_[slot] = std::move(h);
    } else {
      slot = static_cast<std::uint32_t>(slots_.size());
      slots_.push_back(std::move(h));
    }
    heap_.push_back(Key{now_ + delay.count(), seq_++, slot});
    std::size_t i = heap_.size() - 1;
    const Key k = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!before(k, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = k;
  }
  void run() {
    while (!heap_.empty()) {
      const Key k = heap_.front();
      heap_.front() = heap_.back();
      heap_.pop_back();
      if (!heap_.empty()) sift_down();
      now_ = k.at;
      ++processed_;
      slots_[k.slot]();
      slots_[k.slot] = nullptr;
      free_.push_back(k.slot);
    }
  }
  std::uint64_t events_processed() const { return processed_; }
  SimTime now() const { return SimTime(now_); }

 private:
  struct Key {
    std::int64_t at;
    std::uint64_t seq;
    std::uint32_t slot;
  };
  static bool before(const Key& a, const Key& b) {
    return a.at != b.at ? a.at < b.at : a.seq < b.seq;
  }
  void sift_down() {
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    const Key k = heap_[0];
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t last = std::min(first + 4, n);
      for (std::size_t c = first + 1; c < last; ++c)
        if (before(heap_[c], heap_[best])) best = c;
      if (!before(heap_[best], k)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = k;
  }
  std::vector<Key> heap_;
  std::deque<Handler> slots_;
  std::vector<std::uint32_t> free_;
  std::int64_t now_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t processed_ = 0;
};

// Bare engine: `width` independent chains (a queue of `width` pending events, as a model with
// that many ranks keeps), each handler scheduling its chain's next event. The handler captures
// what a model's handler captures (a pointer and an int), so std::function keeps it inline.
template <class E>
void engine_events(benchmark::State& state) {
  const int width = static_cast<int>(state.range(0));
  constexpr std::uint64_t kEvents = 1'000'000;
  std::uint64_t processed = 0;
  for (auto _ : state) {
    E e;
    struct Chain {
      E* e;
      std::uint64_t left;
      void next(int id) {
        if (left == 0) return;
        --left;
        e->schedule_in(SimTime(1 + id % 7), [this, id] { next(id); });
      }
    };
    Chain c{&e, kEvents};
    for (int i = 0; i < width; ++i) c.next(i);
    e.run();
    processed += e.events_processed();
    benchmark::DoNotOptimize(e.now());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(processed));
}
void BM_EngineEvents(benchmark::State& state) { engine_events<Engine>(state); }
void BM_HeapEngineEvents(benchmark::State& state) { engine_events<HeapEngine>(state); }
BENCHMARK(BM_EngineEvents)->Arg(1)->Arg(64)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HeapEngineEvents)
    ->Arg(1)
    ->Arg(64)
    ->Arg(1024)
    ->Arg(16384)
    ->Unit(benchmark::kMillisecond);

// Model-like delays: 1,024 chains whose delays spread over 1 us .. 1 ms (layer times), so the
// radix heap's buckets see realistic bit lengths, not only 1..7 ns.
template <class E>
void engine_spread(benchmark::State& state) {
  constexpr std::uint64_t kEvents = 1'000'000;
  std::uint64_t processed = 0;
  for (auto _ : state) {
    E e;
    struct Chain {
      E* e;
      std::uint64_t left;
      void next(int id) {
        if (left == 0) return;
        --left;
        const auto h = static_cast<std::uint64_t>(id) * 0x9E3779B97F4A7C15ull + left;
        e->schedule_in(SimTime(1000 + static_cast<std::int64_t>(h % 999'000)),
                       [this, id] { next(id); });
      }
    };
    Chain c{&e, kEvents};
    for (int i = 0; i < 1024; ++i) c.next(i);
    e.run();
    processed += e.events_processed();
    benchmark::DoNotOptimize(e.now());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(processed));
}
void BM_EngineSpread(benchmark::State& state) { engine_spread<Engine>(state); }
void BM_HeapEngineSpread(benchmark::State& state) { engine_spread<HeapEngine>(state); }
BENCHMARK(BM_EngineSpread)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HeapEngineSpread)->Unit(benchmark::kMillisecond);

Scenario make_scenario(const nlohmann::json& model, int gpus) {
  nlohmann::json doc = {
      {"name", "event bench"},
      {"model", model},
      {"hardware", {{"preset", "dgx-h100"}}},
      {"cluster", {{"gpus", gpus}}},
      {"training", {{"per_gpu_batch", 1}, {"precision", "bf16"}, {"optimizer", "adam"}}},
  };
  return ddpsim::model::parse_scenario(doc, "event-bench.json");
}

const Scenario& gpt3(int gpus) {
  static const Scenario s = make_scenario({{"preset", "gpt3-175b"}}, 8);
  static Scenario copy = s;
  copy.cluster.gpus = gpus;
  return copy;
}

void run_model(benchmark::State& state, const StepPlan& plan, const EventOptions& o) {
  std::uint64_t events = 0;
  for (auto _ : state) {
    EventResult r = ddpsim::sim::simulate_event(plan, o);
    events = r.events_processed;
    benchmark::DoNotOptimize(r);
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["buckets"] = static_cast<double>(plan.buckets.size());
  state.counters["layers"] = static_cast<double>(plan.layer_fwd_s.size());
  state.SetItemsProcessed(state.iterations() * o.steps);
}

// One DDP step of gpt3-175b on `ranks` ranks; jitter_cv = range(1) / 100.
void BM_Gpt3Step(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  const Scenario& s = gpt3(ranks);
  const Predictor p(s);
  const StepPlan plan = p.plan(s.cluster, s.training, s.parallelism);
  EventOptions o;
  o.steps = 1;
  o.jitter_cv = static_cast<double>(state.range(1)) / 100.0;
  run_model(state, plan, o);
}
// The goal point (1,024 ranks, jitter 5%), the symmetric case without jitter, and the ranks
// scaling with jitter.
BENCHMARK(BM_Gpt3Step)
    ->Args({1024, 5})
    ->Args({1024, 0})
    ->Args({128, 5})
    ->Args({256, 5})
    ->Args({512, 5})
    ->Args({2048, 5})
    ->Unit(benchmark::kMillisecond);

// `layers` equal layers (10M parameters each, ~one 40 MB bucket per layer), 64 ranks, jitter
// 5%: the cost per layer.
void BM_LayersStep(benchmark::State& state) {
  const int layers = static_cast<int>(state.range(0));
  nlohmann::json ls = nlohmann::json::array();
  for (int i = 0; i < layers; ++i)
    ls.push_back({{"name", "l" + std::to_string(i)},
                  {"params", 10000000},
                  {"fwd_flops_per_sample", 2e10},
                  {"activation_bytes_per_sample", 1e6}});
  const Scenario s = make_scenario({{"layers", ls}}, 64);
  const Predictor p(s);
  const StepPlan plan = p.plan(s.cluster, s.training, s.parallelism);
  EventOptions o;
  o.steps = 1;
  o.jitter_cv = 0.05;
  run_model(state, plan, o);
}
BENCHMARK(BM_LayersStep)->Arg(100)->Arg(200)->Arg(400)->Arg(800)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
