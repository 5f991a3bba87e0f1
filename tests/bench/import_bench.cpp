// import_bench.cpp: time and memory of importing a large PyTorch profiler trace
// (model/imports/kineto_import.hpp), plain and gzip-compressed. Figures: results/BENCHMARKS.md.
//
// The trace is written once per process into the temporary directory: `steps` ProfilerSteps of
// a transformer-like step (a record_function region per layer, forward ops on the main thread
// and their evaluate_function backward on the autograd thread, each op launching a kernel
// through cudaLaunchKernel with Kineto's usual args, NCCL all-reduce kernels on their own
// stream), about 56 MB of JSON. Counters: bytes/s of the file as it is on disk, and
// "rss_growth_x_file" = the growth of the process's peak resident set over the first import
// divided by the file's size on disk (the goal: <= 3). DDPSIM_IMPORT_BENCH_FILE=PATH times a
// trace of your own instead.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "model/imports/kineto_import.hpp"

namespace {

namespace fs = std::filesystem;

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// Writes the synthetic trace through `put` (plain stdio or gzip) in small pieces, so that
// making it does not raise the peak RSS the benchmark measures.
template <typename Put>
void write_trace(Put put) {
  constexpr int kSteps = 4, kLayers = 48, kOpsPerLayer = 200;
  put("{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, "
      "\"world_size\": 8}, \"traceEvents\": [\n");
  long ext = 1, corr = 1, seq = 1;
  double t = 0;
  char buf[1024];
  bool first = true;
  auto ev = [&](const char* cat, const char* name, int tid, double ts, double dur,
                const std::string& args) {
    std::snprintf(buf, sizeof buf,
                  "%s{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": "
                  "%d, \"ts\": %.3f, \"dur\": %.3f, \"args\": {%s}}",
                  first ? "" : ",\n", cat, name, tid < 100 ? 0 : 1, tid, ts, dur, args.c_str());
    first = false;
    put(buf);
  };
  for (int s = 0; s < kSteps; ++s) {
    const double step_begin = t;
    const double step_len = kLayers * kOpsPerLayer * 2 * 20.0 + 1000;
    ev("user_annotation", ("ProfilerStep#" + std::to_string(s)).c_str(), 100, step_begin, step_len,
       "\"External id\": " + std::to_string(ext++));
    t += 10;
    long first_seq = seq;
    for (int l = 0; l < kLayers; ++l) {
      const std::string layer = "transformer.h." + std::to_string(l);
      ev("user_annotation", layer.c_str(), 100, t, kOpsPerLayer * 20.0 - 1, "");
      for (int o = 0; o < kOpsPerLayer; ++o, t += 20) {
        const long e = ext++, c = corr++, q = seq++;
        ev("cpu_op", "aten::addmm", 100, t + 1, 15,
           "\"External id\": " + std::to_string(e) + ", \"Sequence number\": " + std::to_string(q) +
               ", \"Fwd thread id\": 0, \"Record function id\": 0, "
               "\"Ev Idx\": " +
               std::to_string(e));
        ev("cuda_runtime", "cudaLaunchKernel", 100, t + 3, 4,
           "\"External id\": " + std::to_string(e) +
               ", \"cbid\": 211, \"correlation\": " + std::to_string(c));
        ev("kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1",
           7, t + 8, 11,
           "\"External id\": " + std::to_string(e) +
               ", \"queued\": 0, \"device\": 0, "
               "\"context\": 1, \"stream\": 7, \"correlation\": " +
               std::to_string(c) +
               ", \"registers per thread\": 168, \"shared memory\": 213248, \"blocks per SM\": "
               "1.0, \"warps per SM\": 12.0, \"grid\": [132, 1, 1], \"block\": [384, 1, 1], "
               "\"est. achieved occupancy %\": 19");
      }
    }
    for (long q = seq - 1; q >= first_seq; --q, t += 20) {
      const long e = ext++, c = corr++;
      ev("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", 200, t + 1, 15,
         "\"External id\": " + std::to_string(e) + ", \"Sequence number\": " + std::to_string(q));
      ev("cuda_runtime", "cudaLaunchKernel", 200, t + 3, 4,
         "\"External id\": " + std::to_string(e) + ", \"correlation\": " + std::to_string(c));
      ev("kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64", 7, t + 8, 11,
         "\"External id\": " + std::to_string(e) +
             ", \"stream\": 7, \"correlation\": " + std::to_string(c));
      if (q % 400 == 0) {
        ev("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
           20, t + 8, 200,
           "\"stream\": 20, \"Collective name\": \"allreduce\", \"In msg nelems\": 6553600, "
           "\"dtype\": \"Float\", \"Group size\": 8");
      }
    }
    t = step_begin + step_len + 10;
  }
  put("\n]}\n");
}

struct Traces {
  std::string plain, gz;
  Traces() {
    const fs::path dir = fs::temp_directory_path();
    plain = (dir / ("ddpsim-import-bench-" + std::to_string(::getpid()) + ".json")).string();
    gz = plain + ".gz";
    FILE* f = std::fopen(plain.c_str(), "w");
    write_trace([&](const char* s) { std::fputs(s, f); });
    std::fclose(f);
    gzFile z = gzopen(gz.c_str(), "wb6");
    write_trace([&](const char* s) { gzputs(z, s); });
    gzclose(z);
  }
  ~Traces() {
    std::error_code ec;
    fs::remove(plain, ec);
    fs::remove(gz, ec);
  }
};

const Traces& traces() {
  static const Traces t;
  return t;
}

// `json_bytes`: the size of the decompressed JSON (0: unknown).
void run(benchmark::State& state, const std::string& path, double json_bytes) {
  const double bytes = static_cast<double>(fs::file_size(path));
  const long before = peak_rss_kib();
  std::size_t layers = 0;
  for (auto _ : state) {
    const nlohmann::json l = ddpsim::model::import_kineto_file(path);
    layers = l.at("layers").size();
    benchmark::DoNotOptimize(layers);
  }
  const double growth = static_cast<double>(peak_rss_kib() - before) * 1024.0;
  state.counters["file_MB"] = bytes / 1e6;
  state.counters["rss_growth_x_file"] = growth / bytes;
  if (json_bytes > 0) state.counters["rss_growth_x_json"] = growth / json_bytes;
  state.counters["layers"] = static_cast<double>(layers);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}

// Memory first: the peak RSS only grows, so the first import in the process is the one that
// shows its own growth; --benchmark_filter picks one at a time for a clean figure.
double json_size() { return static_cast<double>(fs::file_size(traces().plain)); }
void BM_KinetoImportPlain(benchmark::State& state) { run(state, traces().plain, json_size()); }
void BM_KinetoImportGzip(benchmark::State& state) { run(state, traces().gz, json_size()); }
void BM_KinetoImportUserFile(benchmark::State& state) {
  const char* f = std::getenv("DDPSIM_IMPORT_BENCH_FILE");
  if (f == nullptr) {
    state.SkipWithError("set DDPSIM_IMPORT_BENCH_FILE to a trace");
    return;
  }
  run(state, f, 0);
}

BENCHMARK(BM_KinetoImportPlain)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_KinetoImportGzip)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_KinetoImportUserFile)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
