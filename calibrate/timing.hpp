// timing.hpp: repeated wall-clock timing with warm-up, and the summary statistics a profile keeps.
//
// A measurement runs `warmup` untimed calls, then samples until it has `repeats` samples or the
// time budget is spent (at least `min_repeats`). One sample times `inner` back-to-back calls,
// with `inner` doubled until a sample lasts min_sample_s, so microsecond kernels are not lost in
// the clock's resolution; the sample divided by `inner` is one call's time.
//
//   TimingOptions o;                    // 2 warm-up, 15 repeats, 2 ms samples, 2 s budget
//   Stats s = time_calls([&] { kernel(); }, o);
//   nlohmann::json j = stats_json(s);   // {"repeats", "time_s", "time_min_s", ... "time_p90_s"}
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

namespace ddpsim::calib {

struct TimingOptions {
  int warmup = 2;
  int repeats = 15;
  int min_repeats = 3;
  double min_sample_s = 2e-3;
  double budget_s = 2.0;  ///< soft cap on the timed part of one measurement
};

/// Median, extremes and the 10th/90th percentiles (linear interpolation between order
/// statistics) of per-call times, seconds.
struct Stats {
  int repeats = 0;
  double median_s = 0, min_s = 0, max_s = 0, p10_s = 0, p90_s = 0;
};

/// Summary of `samples` (seconds each). Precondition: not empty.
Stats summarize(std::vector<double> samples);

/// Times `call` as described above.
Stats time_calls(const std::function<void()>& call, const TimingOptions& o);

/// {"repeats", "time_s", "time_min_s", "time_max_s", "time_p10_s", "time_p90_s"}.
nlohmann::json stats_json(const Stats& s);

/// Seconds on a monotonic clock.
double now_s();

}  // namespace ddpsim::calib
