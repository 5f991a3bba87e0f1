// PyTorch profiler (Kineto) trace -> per-layer times per step; the rule is kineto_import.hpp's,
// the event links detail/kineto_links.hpp's, the collectives trace_comm.hpp's.
#include "model/imports/kineto_import.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "model/error.hpp"
#include "model/imports/detail/kineto_links.hpp"
#include "model/imports/trace_comm.hpp"

namespace ddpsim::model {

using nlohmann::json;

namespace {

// What an annotation (record_function) or python_function event is.
enum class Region { kNone, kLayer, kStep, kOptimizer, kCommunication, kDdp, kDataLoader, kHarness };

const char* region_kind(Region r) {
  switch (r) {
    case Region::kStep:
      return "profiler step";
    case Region::kOptimizer:
      return "optimizer";
    case Region::kCommunication:
      return "communication";
    case Region::kDdp:
      return "DDP wrapper";
    case Region::kDataLoader:
      return "data loader";
    case Region::kHarness:
      return "harness annotation";
    default:
      return "layer";
  }
}

Region classify(const KinetoTrace& t, const TraceEvent& e) {
  const std::string& n = t.name(e);
  if (n.starts_with("ProfilerStep#")) return Region::kStep;
  if (e.kind == EventKind::kPython) {
    if (!n.starts_with("nn.Module: ")) return Region::kNone;
    return n.starts_with("nn.Module: DistributedDataParallel") ? Region::kDdp : Region::kLayer;
  }
  if (e.kind != EventKind::kAnnotation) return Region::kNone;
  if (n.starts_with("Optimizer.")) return Region::kOptimizer;
  if (n.starts_with("nccl:") || n.starts_with("gloo:") || n.starts_with("c10d::") ||
      n.starts_with("ProcessGroup")) {
    return Region::kCommunication;
  }
  if (n.starts_with("DistributedDataParallel.")) return Region::kDdp;
  if (n.find("DataLoader") != std::string::npos) return Region::kDataLoader;
  // Benchmark harnesses: "## forward ##" (torchbench/HTA examples), "[param|...]" (PARAM).
  if ((n.starts_with("##") && n.size() >= 4 && n.compare(n.size() - 2, 2, "##") == 0) ||
      n.starts_with("[param|")) {
    return Region::kHarness;
  }
  return Region::kLayer;
}

std::string layer_name(const KinetoTrace& t, const TraceEvent& e) {
  const std::string& n = t.name(e);
  return e.kind == EventKind::kPython ? n.substr(std::string("nn.Module: ").size()) : n;
}

enum Phase : std::uint8_t { kForward, kBackward, kOptimizer, kDataLoader, kCommunication };

struct Attribution {
  std::vector<int> layer;
  std::vector<Phase> phase;
  std::vector<std::string> layer_names;
  bool whole_model = false;
};

Attribution attribute(const KinetoTrace& t, const detail::TraceLinks& links) {
  const auto& ev = t.events;
  Attribution a;
  a.layer.assign(ev.size(), -1);
  a.phase.assign(ev.size(), kForward);
  std::vector<int> by_time;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (detail::is_cpu(ev[i].kind)) by_time.push_back(static_cast<int>(i));
  }
  std::stable_sort(by_time.begin(), by_time.end(),
                   [&](int x, int y) { return ev[x].ts < ev[y].ts; });
  std::map<std::string, int> index;
  for (int i : by_time) {
    if (links.step[i] < 0 || classify(t, ev[i]) != Region::kLayer) continue;
    const std::string n = layer_name(t, ev[i]);
    if (index.emplace(n, static_cast<int>(a.layer_names.size())).second) {
      a.layer_names.push_back(n);
    }
  }
  a.whole_model = a.layer_names.empty();
  // Parents start before their children: one walk in start order inherits layer and phase.
  const std::string eval = "autograd::engine::evaluate_function: ";
  // The autograd engine's device threads (GPU autograd runs backward on its own thread per
  // device, torch/csrc/autograd/engine.cpp thread_init): threads whose first top-level op in a
  // step is an evaluate_function. Everything at top level there is backward work, e.g. DDP's
  // finalize_backward (`torch.distributed.ddp.reducer::copy_bucket_to_grad`, queued by the
  // Reducer as the backward's final callback). A CPU-only job runs backward on the main thread
  // after its forward: that thread starts with forward ops and keeps the forward default.
  std::map<std::uint32_t, bool> starts_with_eval;
  for (int i : by_time) {
    if (links.step[i] < 0 || links.parent[i] >= 0 || ev[i].kind != EventKind::kOp) continue;
    starts_with_eval.emplace(ev[i].thread, t.name(ev[i]).starts_with(eval));
  }
  std::set<std::uint32_t> eval_threads;
  for (const auto& [thread, first_is_eval] : starts_with_eval) {
    if (first_is_eval) eval_threads.insert(thread);
  }
  std::map<std::int64_t, int> seq_layer;
  for (int i : by_time) {
    const TraceEvent& e = ev[i];
    const int p = links.parent[i];
    if (p >= 0) {
      a.layer[i] = a.layer[p];
      a.phase[i] = a.phase[p];
    } else if (eval_threads.contains(e.thread)) {
      a.phase[i] = kBackward;
    }
    switch (classify(t, e)) {
      case Region::kLayer:
        a.layer[i] = index.count(layer_name(t, e)) ? index.at(layer_name(t, e)) : -1;
        break;
      case Region::kOptimizer:
        a.layer[i] = -1;
        a.phase[i] = kOptimizer;
        break;
      case Region::kDataLoader:
        a.layer[i] = -1;
        a.phase[i] = kDataLoader;
        break;
      case Region::kCommunication:
        a.layer[i] = -1;
        a.phase[i] = kCommunication;
        break;
      default:
        break;
    }
    if (e.kind != EventKind::kOp) continue;
    if (t.name(e).starts_with(eval)) {
      // The backward of a forward op: its layer through the forward op's sequence number.
      a.phase[i] = kBackward;
      a.layer[i] = e.seq != kNoId && seq_layer.count(e.seq) ? seq_layer.at(e.seq) : -1;
    } else if (a.phase[i] == kForward && a.layer[i] >= 0 && e.seq != kNoId &&
               !seq_layer.count(e.seq)) {
      seq_layer[e.seq] = a.layer[i];
    }
  }
  if (a.whole_model) {
    a.layer_names.push_back("model");
    for (std::size_t i = 0; i < ev.size(); ++i) {
      if (a.phase[i] == kForward || a.phase[i] == kBackward) a.layer[i] = 0;
    }
  }
  return a;
}

// "12 cpu_op, 3 user_annotation, ..." for refusals: what the trace holds.
std::string found_summary(const KinetoTrace& t, const detail::TraceLinks& l,
                          const std::map<std::string, std::size_t>& excluded) {
  std::size_t ops = 0, gpu = 0, runtime = 0, annotations = 0;
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    if (l.step[i] < 0) continue;
    const EventKind k = t.events[i].kind;
    ops += k == EventKind::kOp;
    gpu += detail::is_gpu(k);
    runtime += k == EventKind::kRuntime;
    annotations += k == EventKind::kAnnotation;
  }
  std::ostringstream s;
  s << t.events.size() << " complete events; inside " << l.steps.size() << " step(s)"
    << (l.profiler_steps ? " (ProfilerStep#N)" : " (no ProfilerStep#N: the whole trace)") << ": "
    << ops << " CPU ops, " << gpu << " GPU kernels/copies, " << runtime << " runtime calls, "
    << annotations << " annotations";
  std::size_t shown = 0;
  for (const auto& [name, n] : excluded) {
    s << (shown == 0 ? " (" : ", ") << n << "x " << name;
    if (++shown == 3) break;
  }
  if (shown > 0) s << ")";
  return s.str();
}

// What the layers leave out inside the steps, by name (data loading, the optimizer, collectives,
// ...), and how many GPU events and runtime calls the trace holds.
struct Outside {
  std::map<std::string, std::size_t> count;
  std::map<std::string, double> us;
  std::map<std::string, Region> kind;
  std::size_t gpu_events = 0, runtime_calls = 0;
};

Outside outside_layers(const KinetoTrace& t, const detail::TraceLinks& links) {
  const auto& ev = t.events;
  Outside o;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    o.gpu_events += detail::is_gpu(ev[i].kind);
    o.runtime_calls += ev[i].kind == EventKind::kRuntime;
    const Region r = classify(t, ev[i]);
    if (links.step[i] < 0 || r == Region::kNone || r == Region::kLayer || r == Region::kStep) {
      continue;
    }
    ++o.count[t.name(ev[i])];
    o.us[t.name(ev[i])] += ev[i].dur;
    o.kind[t.name(ev[i])] = r;
  }
  return o;
}

// The work inside the steps credited to each layer (forward, backward) and to each phase, in
// microseconds summed over the steps: a GPU kernel to the op that launched it, or on a CPU-only
// trace the outermost ops.
struct Credited {
  explicit Credited(std::size_t layers)
      : fwd(layers, 0), bwd(layers, 0), nf(layers, 0), nb(layers, 0) {}
  std::vector<double> fwd, bwd;
  std::vector<long long> nf, nb;
  double phase_us[5] = {0, 0, 0, 0, 0};
  double unattributed = 0;
  double work() const {
    double s = 0;
    for (std::size_t i = 0; i < fwd.size(); ++i) s += fwd[i] + bwd[i];
    return s;
  }
};

Credited credit_work(const KinetoTrace& t, const detail::TraceLinks& links, const Attribution& a,
                     bool gpu) {
  const auto& ev = t.events;
  Credited c(a.layer_names.size());
  auto credit = [&](int owner, double dur) {
    c.phase_us[a.phase[owner]] += dur;
    const int layer = a.layer[owner];
    if (layer < 0) {
      c.unattributed += dur;
      return;
    }
    const bool back = a.phase[owner] == kBackward;
    (back ? c.bwd : c.fwd)[layer] += dur;
    ++(back ? c.nb : c.nf)[layer];
  };
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (links.step[i] < 0) continue;
    const TraceEvent& e = ev[i];
    if (gpu) {
      if (!detail::is_gpu(e.kind) || is_collective_event(t, e)) continue;
      if (links.launcher[i] >= 0) {
        credit(links.launcher[i], e.dur);
      } else {
        c.unattributed += e.dur;
      }
    } else if (e.kind == EventKind::kOp) {
      // CPU-only trace: the outermost ops carry the time of what they call.
      bool nested = false;
      for (int p = links.parent[i]; p >= 0 && !nested; p = links.parent[p]) {
        nested = ev[p].kind == EventKind::kOp;
      }
      if (!nested) credit(static_cast<int>(i), e.dur);
    }
  }
  return c;
}

// The import's document (kineto_import.hpp) of a trace whose work was credited: the steps, the
// phases, the layers' per-step times, what was left out, and warnings.
json trace_json(const KinetoTrace& t, const detail::TraceLinks& links, const Attribution& a,
                const Outside& outside, const Credited& w, const std::string& file) {
  const auto& ev = t.events;
  const std::size_t nl = a.layer_names.size();
  const std::size_t gpu_events = outside.gpu_events;
  const double nsteps = static_cast<double>(links.steps.size());
  double step_sum = 0, step_min = 1e300, step_max = 0;
  for (const auto& s : links.steps) {
    step_sum += s.end - s.begin;
    step_min = std::min(step_min, s.end - s.begin);
    step_max = std::max(step_max, s.end - s.begin);
  }
  // A GPU-bound job's CPU runs ahead: its step spans are shorter than the GPU's. The GPU's
  // step is the span of the steps' GPU work divided by their count; the step is the longer.
  double gpu_begin = 1e300, gpu_end = -1e300;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (links.step[i] < 0 || !detail::is_gpu(ev[i].kind)) continue;
    gpu_begin = std::min(gpu_begin, ev[i].ts);
    gpu_end = std::max(gpu_end, ev[i].ts + ev[i].dur);
  }
  const double cpu_step_sum = step_sum;
  if (gpu_end > gpu_begin) step_sum = std::max(step_sum, gpu_end - gpu_begin);
  const double per = 1e-6 / nsteps;  // microseconds summed over the steps -> seconds per step
  json out;
  out["source"] = "kineto trace " + file;
  out["device"] = gpu_events > 0 ? "gpu" : "cpu";
  out["rule"] =
      std::string(gpu_events > 0
                      ? "sum of GPU kernel/memcpy/memset durations whose launch (the runtime "
                        "call with the kernel's correlation id, else the op with its External "
                        "id) lies in the layer"
                      : "sum of the outermost CPU op durations in the layer") +
      (a.whole_model ? " (no module annotations: one layer, the whole model)"
                     : "'s region (forward) or under the autograd evaluate_function with the "
                       "forward op's Sequence number (backward)") +
      "; per-step means over the profiled steps";
  out["steps"] = links.steps.size();
  out["step_s"] = step_sum * per;
  out["cpu_step_s"] = cpu_step_sum * per;
  if (gpu_end > gpu_begin) out["gpu_step_s"] = (gpu_end - gpu_begin) * per;
  out["step_min_s"] = step_min * 1e-6;
  out["step_max_s"] = step_max * 1e-6;
  out["unattributed_s"] = w.unattributed * per;
  out["phases"] = {{"forward_s", w.phase_us[kForward] * per},
                   {"backward_s", w.phase_us[kBackward] * per},
                   {"optimizer_s", w.phase_us[kOptimizer] * per},
                   {"data_loader_s", w.phase_us[kDataLoader] * per},
                   {"communication_launch_s", w.phase_us[kCommunication] * per}};
  if (gpu_events > 0) {
    out["linkage"] = {{"by_correlation", links.by_correlation},
                      {"by_external_id", links.by_external_id},
                      {"unlinked", links.unlinked}};
  }
  json excluded = json::array();
  for (const auto& [name, n] : outside.count) {
    excluded.push_back({{"name", name},
                        {"kind", region_kind(outside.kind.at(name))},
                        {"count", n},
                        {"per_step_s", outside.us.at(name) * per}});
  }
  out["excluded"] = std::move(excluded);
  json layers = json::array();
  for (std::size_t i = 0; i < nl; ++i) {
    layers.push_back({{"name", a.layer_names[i]},
                      {"forward_s", w.fwd[i] * per},
                      {"backward_s", w.bwd[i] * per},
                      {"forward_events", w.nf[i]},
                      {"backward_events", w.nb[i]}});
  }
  out["layers"] = std::move(layers);
  out["whole_model"] = a.whole_model;
  json warnings = json::array();
  if (w.work() * per > out["step_s"].get<double>() * 1.0001) {
    warnings.push_back(
        "the layers' times add up to more than the step: kernels of several "
        "streams overlap, or GPU work outlasts the CPU's step spans");
  }
  if (gpu_events > 0 && links.unlinked > 0) {
    warnings.push_back(std::to_string(links.unlinked) +
                       " GPU events link to no runtime call or op (counted as unattributed)");
  }
  out["warnings"] = std::move(warnings);
  return out;
}

}  // namespace

// The legacy autograd profiler's export (torch.autograd.profiler.profile().export_chrome_trace,
// what a torch build without Kineto writes, e.g. Debian's python3-torch 1.13) has no categories:
// every event is {"name", "ph": "X", "ts", "dur", "tid", "pid": "CPU functions", "args": {}}. The
// record_function regions the rules need are told by name, as torch names them: ProfilerStep#N,
// gloo:* / nccl:* (the process group's work, on its worker threads), DistributedDataParallel.*,
// Optimizer.*; everything else is an op. A user's own record_function regions cannot be told
// from ops, so the import is whole-model (rule 5), and nothing gives a collective's size.
// The trace as a categorised one (no longer a bare array), for the rules below.
KinetoTrace with_legacy_kinds(const KinetoTrace& t) {
  KinetoTrace out = t;
  out.bare_array = false;
  out.has_trace_events = true;
  for (TraceEvent& e : out.events) {
    const std::string& n = t.name(e);
    const bool region = n.rfind("ProfilerStep#", 0) == 0 || n.rfind("gloo:", 0) == 0 ||
                        n.rfind("nccl:", 0) == 0 || n.rfind("DistributedDataParallel.", 0) == 0 ||
                        n.rfind("Optimizer.", 0) == 0;
    e.kind = region ? EventKind::kAnnotation : EventKind::kOp;
  }
  return out;
}

json import_kineto_trace(const KinetoTrace& t, const std::string& file) {
  if (t.bare_array && !t.events.empty()) {
    const bool categorised = std::any_of(t.events.begin(), t.events.end(), [](const TraceEvent& e) {
      return e.kind != EventKind::kOther;
    });
    if (!categorised) {
      json out = import_kineto_trace(with_legacy_kinds(t), file);
      out["format"] = "legacy autograd profiler";
      out["warnings"].push_back(
          "legacy autograd-profiler format (a bare JSON array, no categories: torch without "
          "Kineto): regions told by name (ProfilerStep#, gloo:/nccl:, DistributedDataParallel., "
          "Optimizer.), the model imported whole, no collective sizes");
      return out;
    }
  }
  if (t.bare_array && t.events.empty()) {
    throw InputError(file, "", "a Kineto trace ({\"traceEvents\": [...]})",
                     "a JSON array of " + std::to_string(t.array_entries) +
                         " entries and no trace event (not a profiler trace)");
  }
  if (!t.has_trace_events) {
    std::string keys;
    for (const std::string& k : t.top_keys) keys += (keys.empty() ? "" : ", ") + k;
    const bool et = std::find(t.top_keys.begin(), t.top_keys.end(), "nodes") != t.top_keys.end();
    throw InputError(file, "/traceEvents", "a Chrome trace with a traceEvents array",
                     et ? "a PyTorch execution trace (ExecutionTraceObserver: \"nodes\"), not a "
                          "profiler trace"
                        : "an object without it (keys: " + (keys.empty() ? "none" : keys) + ")");
  }
  if (t.events.empty()) {
    throw InputError(
        file, "/traceEvents", "complete events (ph X) of a profiled run",
        "an empty trace (" + std::to_string(t.array_entries) + " entries, no complete event)");
  }
  const detail::TraceLinks links = detail::link_trace(t);
  // torch.profiler's schedule records one ProfilerStep#N after another on the main thread; spans
  // that overlap by more than a microsecond (2,000 nested ones imported as 2,000 steps of 10 s
  // each) are not a step list.
  for (std::size_t k = 1; k < links.steps.size(); ++k) {
    const detail::StepWindow& prev = links.steps[k - 1];
    const detail::StepWindow& cur = links.steps[k];
    if (cur.begin < prev.end - 1.0) {  // 1 us: timestamps rounded to the microsecond touch
      throw InputError(file, "/traceEvents",
                       "ProfilerStep#N spans one after another, as torch.profiler records them",
                       cur.name + " starting " + json(cur.begin - prev.begin).dump() + " us into " +
                           prev.name + " (overlapping steps)");
    }
  }
  const Attribution a = attribute(t, links);
  const Outside outside = outside_layers(t, links);
  if (outside.gpu_events == 0 && outside.runtime_calls > 0) {
    throw InputError(file, "/traceEvents",
                     "GPU kernel events (a trace recorded with ProfilerActivity.CUDA)",
                     "a GPU trace with " + std::to_string(outside.runtime_calls) +
                         " CUDA runtime calls and no kernel, memcpy or memset event");
  }
  const Credited w = credit_work(t, links, a, outside.gpu_events > 0);
  if (!(w.work() > 0)) {
    throw InputError(file, "/traceEvents",
                     "forward/backward work (GPU kernels or CPU ops) inside the profiled steps",
                     "none: " + found_summary(t, links, outside.count));
  }
  json out = trace_json(t, links, a, outside, w, file);
  if (auto comm = trace_communication(t, links)) out["communication"] = std::move(*comm);
  return out;
}

json import_kineto_trace(const json& trace, const std::string& file) {
  std::istringstream in(trace.dump());
  return import_kineto_trace(read_kineto_trace(in, file), file);
}

json import_kineto_file(const std::string& path) {
  return import_kineto_trace(read_kineto_file(path), path);
}

}  // namespace ddpsim::model
