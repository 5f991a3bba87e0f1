#include "calibrate/timing.hpp"

#include <algorithm>
#include <chrono>

#include "model/error.hpp"

namespace ddpsim::calib {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Stats summarize(std::vector<double> v) {
  DDPSIM_ASSERT(!v.empty(), "summarize: no samples");
  std::sort(v.begin(), v.end());
  // Percentile q by linear interpolation between the order statistics at q*(n-1) (the
  // "linear" definition of numpy and R type 7); q = 0.5 is the usual median.
  auto pct = [&](double q) {
    const double pos = q * static_cast<double>(v.size() - 1);
    const std::size_t lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  Stats s;
  s.repeats = static_cast<int>(v.size());
  s.median_s = pct(0.5);
  s.min_s = v.front();
  s.max_s = v.back();
  s.p10_s = pct(0.1);
  s.p90_s = pct(0.9);
  return s;
}

Stats time_calls(const std::function<void()>& call, const TimingOptions& o) {
  for (int i = 0; i < o.warmup; ++i) call();
  // Calls per sample: doubled until one sample lasts min_sample_s.
  int inner = 1;
  while (true) {
    const double t0 = now_s();
    for (int i = 0; i < inner; ++i) call();
    const double dt = now_s() - t0;
    if (dt >= o.min_sample_s || inner >= (1 << 20)) break;
    inner *= 2;
  }
  std::vector<double> samples;
  const double start = now_s();
  while (static_cast<int>(samples.size()) < o.repeats) {
    const double t0 = now_s();
    for (int i = 0; i < inner; ++i) call();
    samples.push_back((now_s() - t0) / inner);
    if (static_cast<int>(samples.size()) >= o.min_repeats && now_s() - start > o.budget_s) break;
  }
  return summarize(std::move(samples));
}

nlohmann::json stats_json(const Stats& s) {
  return {{"repeats", s.repeats},  {"time_s", s.median_s},  {"time_min_s", s.min_s},
          {"time_max_s", s.max_s}, {"time_p10_s", s.p10_s}, {"time_p90_s", s.p90_s}};
}

}  // namespace ddpsim::calib
