#include "calibrate/interference.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "calibrate/cpu_kernels.hpp"
#include "calibrate/timing.hpp"
#include "model/error.hpp"

namespace ddpsim::calib {

using nlohmann::json;

namespace {

// Per rank and phase: median, p10, p90, min, max, mean (microseconds), sample count.
constexpr std::size_t kFields = 7;

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

void put(float* slot, const Stats& s, double mean_s, std::size_t samples) {
  slot[0] = static_cast<float>(s.median_s * 1e6);
  slot[1] = static_cast<float>(s.p10_s * 1e6);
  slot[2] = static_cast<float>(s.p90_s * 1e6);
  slot[3] = static_cast<float>(s.min_s * 1e6);
  slot[4] = static_cast<float>(s.max_s * 1e6);
  slot[5] = static_cast<float>(mean_s * 1e6);
  slot[6] = static_cast<float>(samples);
}

json mean_stats(const std::vector<float>& all, int n, std::size_t phase) {
  double v[kFields] = {0, 0, 0, 0, 0, 0, 0};
  for (int r = 0; r < n; ++r) {
    const float* slot = all.data() + (static_cast<std::size_t>(r) * 2 + phase) * kFields;
    for (std::size_t f = 0; f < kFields; ++f) v[f] += slot[f];
  }
  for (double& x : v) x /= n;
  return {{"repeats", static_cast<std::int64_t>(std::lround(v[6]))},
          {"time_mean_s", v[5] * 1e-6},
          {"time_s", v[0] * 1e-6},
          {"time_p10_s", v[1] * 1e-6},
          {"time_p90_s", v[2] * 1e-6},
          {"time_min_s", v[3] * 1e-6},
          {"time_max_s", v[4] * 1e-6}};
}

}  // namespace

json measure_interference(comm::Communicator& c, const InterferenceOptions& o) {
  DDPSIM_ASSERT(o.rounds >= 1 && o.window_s > 0 && o.collective_bytes >= 4,
                "measure_interference: bad options");
  const int n = c.size();
  const auto gemm = make_sgemm_call(o.gemm);
  gemm();
  gemm();
  const std::size_t count = static_cast<std::size_t>(o.collective_bytes) / sizeof(float);
  auto buf = c.allocate(count);

  // How many all-reduces fill a window: timed here, averaged over ranks so all agree on N.
  c.barrier();
  const double t0 = now_s();
  for (int i = 0; i < 3; ++i) c.all_reduce(buf->data(), buf->data(), count);
  std::vector<float> t_ar = {static_cast<float>((now_s() - t0) / 3)};
  c.all_reduce(t_ar.data(), t_ar.data(), 1);
  const double per_call = std::max(1e-6, static_cast<double>(t_ar[0]) / n);
  const int calls = std::max(3, static_cast<int>(std::ceil(o.window_s / per_call)));

  std::vector<double> alone, concurrent;
  std::size_t concurrent_tried = 0;
  for (int round = 0; round < o.rounds; ++round) {
    c.barrier();
    const double a0 = now_s();
    while (now_s() - a0 < o.window_s) {
      const double s = now_s();
      gemm();
      alone.push_back(now_s() - s);
    }
    c.barrier();
    // The executor's pattern: the collective on its own thread, compute on the main one. The
    // main thread makes no communicator call until the thread is joined.
    std::atomic<bool> done{false};
    std::exception_ptr failure;
    std::thread comm_thread([&] {
      try {
        for (int i = 0; i < calls; ++i) c.all_reduce(buf->data(), buf->data(), count);
      } catch (...) {
        failure = std::current_exception();
      }
      done.store(true, std::memory_order_release);
    });
    while (!done.load(std::memory_order_acquire)) {
      const double s = now_s();
      gemm();
      const double e = now_s();
      ++concurrent_tried;
      // Only calls that ran entirely while the collectives were in flight.
      if (!done.load(std::memory_order_acquire)) concurrent.push_back(e - s);
    }
    comm_thread.join();
    if (failure) std::rethrow_exception(failure);
  }
  if (alone.empty() || concurrent.empty()) {
    throw Error("interference: no GEMM finished inside a " + std::to_string(o.window_s) +
                " s window (choose a smaller GEMM or a longer window)");
  }
  const Stats sa = summarize(alone);
  const Stats sc = summarize(concurrent);

  // Every rank's statistics, each in its own slot; a sum collects them.
  std::vector<float> all(static_cast<std::size_t>(n) * 2 * kFields, 0.0f);
  const std::size_t me = static_cast<std::size_t>(c.rank()) * 2 * kFields;
  put(all.data() + me, sa, mean_of(alone), alone.size());
  put(all.data() + me + kFields, sc, mean_of(concurrent), concurrent.size());
  auto gather = c.allocate(all.size());
  gather->upload(all.data(), all.size());
  c.all_reduce(gather->data(), gather->data(), all.size());
  gather->download(all.data(), all.size());
  c.barrier();
  if (c.rank() != 0) return nullptr;

  json per_rank = json::array();
  for (int r = 0; r < n; ++r) {
    const float* slot = all.data() + static_cast<std::size_t>(r) * 2 * kFields;
    per_rank.push_back(static_cast<double>(slot[kFields + 5]) / static_cast<double>(slot[5]));
  }
  json block;
  block["alone"] = mean_stats(all, n, 0);
  block["concurrent"] = mean_stats(all, n, 1);
  block["concurrent"]["overlap_fraction"] =
      static_cast<double>(concurrent.size()) / static_cast<double>(concurrent_tried);
  // Means, not medians: the simulator stretches all the compute that overlaps a collective by
  // the factor, and what that compute loses is the total time, heavy tail included (on 2 ranks
  // on 2 cores here, most calls run at full speed while the communication thread waits on the
  // socket and a few lose milliseconds to it: median ratio 1.07, mean ratio higher).
  const double ratio = block["concurrent"]["time_mean_s"].get<double>() /
                       block["alone"]["time_mean_s"].get<double>();
  block["ratio"] = ratio;
  block["ratio_median"] =
      block["concurrent"]["time_s"].get<double>() / block["alone"]["time_s"].get<double>();
  block["factor"] = std::max(1.0, ratio);
  block["per_rank_ratio"] = per_rank;
  block["op"] = "all_reduce";
  block["collective_bytes"] = o.collective_bytes;
  block["collectives_completed"] = static_cast<std::int64_t>(calls) * o.rounds;
  block["ranks"] = n;
  block["gemm"] = {{"m", o.gemm.m},
                   {"n", o.gemm.n},
                   {"k", o.gemm.k},
                   {"count", o.gemm.count},
                   {"transa", o.gemm.trans_a},
                   {"transb", o.gemm.trans_b},
                   {"dtype", "fp32"}};
  block["method"] =
      "every rank: " + std::to_string(o.rounds) + " rounds of " + std::to_string(o.window_s) +
      " s timing the GEMM alone, then while a communication thread runs " + std::to_string(calls) +
      " all-reduces; statistics are the mean over ranks of each rank's own; factor = max(1, "
      "concurrent mean / alone mean)";
  return block;
}

}  // namespace ddpsim::calib
