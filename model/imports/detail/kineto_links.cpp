#include "model/imports/detail/kineto_links.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace ddpsim::model::detail {

bool is_gpu(EventKind k) {
  return k == EventKind::kKernel || k == EventKind::kMemcpy || k == EventKind::kMemset;
}

bool is_cpu(EventKind k) {
  return k == EventKind::kOp || k == EventKind::kAnnotation || k == EventKind::kPython ||
         k == EventKind::kRuntime;
}

namespace {

void link_parents(const KinetoTrace& t, std::vector<int>& parent) {
  std::vector<int> order;
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    if (is_cpu(t.events[i].kind)) order.push_back(static_cast<int>(i));
  }
  const auto& ev = t.events;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (ev[a].thread != ev[b].thread) return ev[a].thread < ev[b].thread;
    if (ev[a].ts != ev[b].ts) return ev[a].ts < ev[b].ts;
    return ev[a].dur > ev[b].dur;
  });
  std::vector<int> stack;
  std::uint32_t thread = std::numeric_limits<std::uint32_t>::max();
  for (int i : order) {
    if (ev[i].thread != thread) {
      stack.clear();
      thread = ev[i].thread;
    }
    while (!stack.empty() && ev[stack.back()].ts + ev[stack.back()].dur < ev[i].ts + ev[i].dur) {
      stack.pop_back();
    }
    parent[i] = stack.empty() ? -1 : stack.back();
    stack.push_back(i);
  }
}

int step_at(const std::vector<StepWindow>& steps, double ts) {
  // Steps do not overlap: the last one starting at or before ts.
  auto it = std::upper_bound(steps.begin(), steps.end(), ts,
                             [](double x, const StepWindow& s) { return x < s.begin; });
  if (it == steps.begin()) return -1;
  --it;
  return ts <= it->end ? static_cast<int>(it - steps.begin()) : -1;
}

}  // namespace

TraceLinks link_trace(const KinetoTrace& t) {
  const auto& ev = t.events;
  TraceLinks l;
  l.parent.assign(ev.size(), -1);
  l.launcher.assign(ev.size(), -1);
  l.step.assign(ev.size(), -1);
  link_parents(t, l.parent);

  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const TraceEvent& e : ev) {
    if (t.name(e).rfind("ProfilerStep#", 0) == 0 && is_cpu(e.kind)) {
      l.steps.push_back({t.name(e), e.ts, e.ts + e.dur});
    }
    if (is_cpu(e.kind) || is_gpu(e.kind)) {
      lo = std::min(lo, e.ts);
      hi = std::max(hi, e.ts + e.dur);
    }
  }
  l.profiler_steps = !l.steps.empty();
  if (l.steps.empty() && lo <= hi) l.steps.push_back({"whole trace", lo, hi});
  std::sort(l.steps.begin(), l.steps.end(),
            [](const StepWindow& a, const StepWindow& b) { return a.begin < b.begin; });

  std::unordered_map<std::int64_t, int> runtime_by_corr, op_by_ext;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const TraceEvent& e = ev[i];
    if (e.kind == EventKind::kRuntime && e.corr != kNoId) {
      runtime_by_corr.emplace(e.corr, static_cast<int>(i));
    }
    if (e.kind == EventKind::kOp && e.ext != kNoId) op_by_ext.emplace(e.ext, static_cast<int>(i));
  }
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const TraceEvent& e = ev[i];
    if (is_cpu(e.kind)) {
      l.step[i] = step_at(l.steps, e.ts);
      continue;
    }
    if (!is_gpu(e.kind)) continue;
    auto r = e.corr != kNoId ? runtime_by_corr.find(e.corr) : runtime_by_corr.end();
    if (r != runtime_by_corr.end()) {
      l.launcher[i] = r->second;
      ++l.by_correlation;
    } else if (auto o = e.ext != kNoId ? op_by_ext.find(e.ext) : op_by_ext.end();
               o != op_by_ext.end()) {
      l.launcher[i] = o->second;
      ++l.by_external_id;
    } else {
      ++l.unlinked;
    }
  }
  // GPU events after the CPU ones: their launchers' steps are known.
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (!is_gpu(ev[i].kind)) continue;
    const int from = l.launcher[i];
    l.step[i] = from >= 0 ? l.step[from] : step_at(l.steps, ev[i].ts);
  }
  return l;
}

}  // namespace ddpsim::model::detail
