#include "simulator/event/detail/model_common.hpp"

#include <algorithm>

namespace ddpsim::sim::event_detail {

// What every model reports the same way once its steps are simulated: each step's time (from
/// the previous step's end; the first from t = 0), per-rank compute ends relative to that step's
/// start, the mean and the nearest-rank p50/p95/p99, and the slowest rank's forward, backward and
/// optimizer times of the last step (`last_times`, per rank). Returns the start of the last step.
SimTime fill_step_statistics(EventResult& out, int ranks, const std::vector<int>& opt_done,
                             const std::vector<SimTime>& step_end,
                             const std::vector<std::vector<SimTime>>& compute_end,
                             const std::vector<std::array<double, 3>>& last_times) {
  const std::size_t steps = step_end.size();
  DDPSIM_ASSERT(steps > 0, "no simulated step");
  SimTime prev{0};
  out.compute_end_s.resize(steps);
  for (std::size_t s = 0; s < steps; ++s) {
    DDPSIM_ASSERT(opt_done[s] == ranks, "a step did not finish on every rank");
    out.step_time_s.push_back(to_seconds(step_end[s] - prev));
    out.compute_end_s[s].reserve(compute_end[s].size());
    for (SimTime t : compute_end[s]) out.compute_end_s[s].push_back(to_seconds(t - prev));
    if (s + 1 < steps) prev = step_end[s];
  }
  double sum = 0;
  for (double t : out.step_time_s) sum += t;
  out.mean_step_time_s = sum / static_cast<double>(steps);
  std::vector<double> sorted = out.step_time_s;
  std::sort(sorted.begin(), sorted.end());
  auto nearest_rank = [&](double q) {
    const auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(steps)));
    return sorted[std::clamp<std::size_t>(i, 1, steps) - 1];
  };
  out.p50_step_time_s = nearest_rank(0.50);
  out.p95_step_time_s = nearest_rank(0.95);
  out.p99_step_time_s = nearest_rank(0.99);
  const auto& last_compute = compute_end[steps - 1];
  const auto slowest = std::max_element(last_compute.begin(), last_compute.end());
  out.slowest_rank = static_cast<int>(slowest - last_compute.begin());
  const auto& lf = last_times[static_cast<std::size_t>(out.slowest_rank)];
  out.forward_time_s = lf[0];
  out.backward_time_s = lf[1];
  out.optimizer_time_s = lf[2];
  return prev;
}

}  // namespace ddpsim::sim::event_detail
