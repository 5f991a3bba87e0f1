// The executor GPT-2's element-wise row kernels (calibrate/exec/vector_kernels.hpp) against the
// scalar libm loops they replaced: a cross-entropy row pass (max, exp(x - max) and their sum)
// over 512 rows of 8,192 logits, and gelu_new forward over 4 Mi elements (the 4 x 256 GPT-2's
// sizes, tokens 512). Figures: results/bench/exec_kernels.json, results/BENCHMARKS.md.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "calibrate/exec/vector_kernels.hpp"

namespace {

constexpr std::int64_t kRows = 512, kVocab = 8192, kElements = kRows * kVocab;

std::vector<float> logits() {
  std::vector<float> x(static_cast<std::size_t>(kElements));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.001f * static_cast<float>(i));
  return x;
}

void BM_CrossEntropyRowsVectorized(benchmark::State& state) {
  const std::vector<float> x = logits();
  std::vector<float> y(x.size());
  for (auto _ : state) {
    double total = 0;
    for (std::int64_t r = 0; r < kRows; ++r) {
      const float* row = x.data() + r * kVocab;
      total += ddpsim::exec::exp_shifted_sum(row, ddpsim::exec::max_of(row, kVocab),
                                             y.data() + r * kVocab, kVocab);
    }
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(state.iterations() * kElements);
}
BENCHMARK(BM_CrossEntropyRowsVectorized)->Unit(benchmark::kMillisecond);

// What gpt2.cpp ran before: std::max_element, then a double exp per logit into a double sum.
void BM_CrossEntropyRowsScalarDouble(benchmark::State& state) {
  const std::vector<float> x = logits();
  std::vector<float> y(x.size());
  for (auto _ : state) {
    double total = 0;
    for (std::int64_t r = 0; r < kRows; ++r) {
      const float* row = x.data() + r * kVocab;
      const float m = *std::max_element(row, row + kVocab);
      double s = 0;
      for (std::int64_t j = 0; j < kVocab; ++j) {
        y[static_cast<std::size_t>(r * kVocab + j)] =
            static_cast<float>(std::exp(static_cast<double>(row[j] - m)));
        s += y[static_cast<std::size_t>(r * kVocab + j)];
      }
      total += s;
    }
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(state.iterations() * kElements);
}
BENCHMARK(BM_CrossEntropyRowsScalarDouble)->Unit(benchmark::kMillisecond);

void BM_GeluTanhVectorized(benchmark::State& state) {
  const std::vector<float> x = logits();
  std::vector<float> y(x.size());
  for (auto _ : state) {
    ddpsim::exec::gelu_tanh_forward(x.data(), y.data(), kElements);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * kElements);
}
BENCHMARK(BM_GeluTanhVectorized)->Unit(benchmark::kMillisecond);

// What gpt2.cpp ran before: std::tanh per element.
void BM_GeluTanhScalar(benchmark::State& state) {
  const std::vector<float> x = logits();
  std::vector<float> y(x.size());
  for (auto _ : state) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float z = x[i];
      y[i] = 0.5f * z * (1.0f + std::tanh(0.79788456f * (z + 0.044715f * z * z * z)));
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * kElements);
}
BENCHMARK(BM_GeluTanhScalar)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
