// PyTorch profiler (Kineto) Chrome trace -> per-layer times; the attribution rule is
// kineto_import.hpp's.
#include "model/kineto_import.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/error.hpp"
#include "model/scenario.hpp"

namespace ddpsim::model {

using nlohmann::json;

namespace {

struct Ev {
  std::string name, cat, thread;  // thread: pid/tid as text
  double ts = 0, dur = 0;         // microseconds
  std::optional<long long> ext, corr, seq;
  int parent = -1;  // innermost enclosing event on the same thread
  int layer = -1;
  bool backward = false;
};

std::optional<long long> int_arg(const json& args, const char* k) {
  auto it = args.find(k);
  if (it == args.end() || !it->is_number()) return std::nullopt;
  return static_cast<long long>(it->get<double>());
}

bool is_region(const Ev& e) {
  if (e.cat == "user_annotation") {
    return e.name.rfind("ProfilerStep#", 0) != 0 && e.name.rfind("Optimizer.", 0) != 0;
  }
  return e.cat == "python_function" && e.name.rfind("nn.Module: ", 0) == 0;
}

bool is_op(const Ev& e) { return e.cat == "cpu_op" || e.cat == "Operator"; }

std::string region_name(const Ev& e) {
  return e.cat == "python_function" ? e.name.substr(std::string("nn.Module: ").size()) : e.name;
}

// Per thread, events sorted by start (longer first on ties) nest like brackets: a stack of the
// open events gives each one its innermost enclosing event in O(n log n).
void link_parents(std::vector<Ev>& evs) {
  std::vector<int> order(evs.size());
  for (std::size_t i = 0; i < evs.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const Ev& x = evs[a];
    const Ev& y = evs[b];
    if (x.thread != y.thread) return x.thread < y.thread;
    if (x.ts != y.ts) return x.ts < y.ts;
    return x.dur > y.dur;
  });
  std::vector<int> stack;
  std::string thread;
  for (int i : order) {
    Ev& e = evs[i];
    if (e.thread != thread) {
      stack.clear();
      thread = e.thread;
    }
    while (!stack.empty() && evs[stack.back()].ts + evs[stack.back()].dur < e.ts + e.dur) {
      stack.pop_back();
    }
    e.parent = stack.empty() ? -1 : stack.back();
    stack.push_back(i);
  }
}

}  // namespace

json import_kineto_trace(const json& trace, const std::string& file) {
  const json* events = nullptr;
  if (trace.is_object() && trace.contains("traceEvents")) events = &trace.at("traceEvents");
  if (trace.is_array()) events = &trace;
  if (events == nullptr || !events->is_array()) {
    throw InputError(file, "/traceEvents", "a Chrome trace with a traceEvents array", "none");
  }
  std::vector<Ev> evs;      // CPU-side events (ops, annotations, runtime calls)
  std::vector<Ev> kernels;  // GPU-side events
  double span_begin = std::numeric_limits<double>::infinity(), span_end = -span_begin;
  double step_begin = span_begin, step_end = span_end;
  bool have_step = false;
  for (std::size_t i = 0; i < events->size(); ++i) {
    const json& e = (*events)[i];
    if (!e.is_object() || e.value("ph", std::string()) != "X") continue;
    const std::string p = "/traceEvents/" + std::to_string(i);
    if (!e.contains("ts") || !e.at("ts").is_number() || !e.contains("dur") ||
        !e.at("dur").is_number() || e.at("dur").get<double>() < 0) {
      throw InputError(file, p, "a complete event (ph X) with numeric ts and dur >= 0",
                       e.dump().substr(0, 60));
    }
    Ev v;
    v.name = e.contains("name") && e.at("name").is_string() ? e.at("name").get<std::string>() : "";
    v.cat = e.contains("cat") && e.at("cat").is_string() ? e.at("cat").get<std::string>() : "";
    v.thread = (e.contains("pid") ? e.at("pid").dump() : "") + "/" +
               (e.contains("tid") ? e.at("tid").dump() : "");
    v.ts = e.at("ts").get<double>();
    v.dur = e.at("dur").get<double>();
    const json args =
        e.contains("args") && e.at("args").is_object() ? e.at("args") : json::object();
    v.ext = int_arg(args, "External id");
    v.corr = int_arg(args, "correlation");
    v.seq = int_arg(args, "Sequence number");
    span_begin = std::min(span_begin, v.ts);
    span_end = std::max(span_end, v.ts + v.dur);
    if (v.cat == "user_annotation" && v.name.rfind("ProfilerStep#", 0) == 0) {
      have_step = true;
      step_begin = std::min(step_begin, v.ts);
      step_end = std::max(step_end, v.ts + v.dur);
    }
    const bool gpu = v.cat == "kernel" || v.cat == "gpu_memcpy" || v.cat == "gpu_memset";
    (gpu ? kernels : evs).push_back(std::move(v));
  }
  link_parents(evs);

  // 1. Layers in order of first appearance (by start time).
  std::vector<int> by_time(evs.size());
  for (std::size_t i = 0; i < evs.size(); ++i) by_time[i] = static_cast<int>(i);
  std::stable_sort(by_time.begin(), by_time.end(),
                   [&](int a, int b) { return evs[a].ts < evs[b].ts; });
  std::vector<std::string> layer_names;
  std::map<std::string, int> layer_index;
  for (int i : by_time) {
    if (!is_region(evs[i])) continue;
    const std::string name = region_name(evs[i]);
    if (!layer_index.count(name)) {
      layer_index[name] = static_cast<int>(layer_names.size());
      layer_names.push_back(name);
    }
  }
  if (layer_names.empty()) {
    throw InputError(file, "/traceEvents",
                     "layer regions: user_annotation events (record_function) or "
                     "python_function \"nn.Module: X\" events (with_modules=True)",
                     "none");
  }
  // Forward: the innermost region above an op. Walk in start order so parents come first.
  std::map<long long, int> seq_layer;
  for (int i : by_time) {
    Ev& e = evs[i];
    const int par = e.parent;
    if (is_region(e)) {
      e.layer = layer_index.at(region_name(e));
    } else if (par >= 0) {
      e.layer = evs[par].layer;
      e.backward = evs[par].backward;
    }
    // 2. Backward: the autograd node of a forward op, found by its sequence number.
    const std::string kEval = "autograd::engine::evaluate_function: ";
    if (is_op(e) && e.name.rfind(kEval, 0) == 0 && e.seq && seq_layer.count(*e.seq)) {
      e.layer = seq_layer.at(*e.seq);
      e.backward = true;
    } else if (is_op(e) && !e.backward && e.layer >= 0 && e.seq && !seq_layer.count(*e.seq)) {
      seq_layer[*e.seq] = e.layer;
    }
  }

  // 3. Times.
  std::map<long long, const Ev*> op_by_ext;
  std::map<long long, long long> ext_by_corr;
  for (const Ev& e : evs) {
    if (is_op(e) && e.ext && e.layer >= 0) op_by_ext[*e.ext] = &e;
    if (e.cat == "cuda_runtime" && e.corr && e.ext) ext_by_corr[*e.corr] = *e.ext;
  }
  std::vector<double> fwd(layer_names.size(), 0), bwd(layer_names.size(), 0);
  std::vector<long long> nf(layer_names.size(), 0), nb(layer_names.size(), 0);
  double unattributed = 0;
  auto credit = [&](const Ev& owner, double dur) {
    (owner.backward ? bwd : fwd)[owner.layer] += dur;
    ++(owner.backward ? nb : nf)[owner.layer];
  };
  for (const Ev& k : kernels) {
    std::optional<long long> ext = k.ext;
    if ((!ext || !op_by_ext.count(*ext)) && k.corr && ext_by_corr.count(*k.corr)) {
      ext = ext_by_corr.at(*k.corr);
    }
    if (ext && op_by_ext.count(*ext)) {
      credit(*op_by_ext.at(*ext), k.dur);
    } else {
      unattributed += k.dur;
    }
  }
  if (kernels.empty()) {
    // CPU-only trace: the outermost ops (no op above them) carry the time of what they call.
    for (const Ev& e : evs) {
      if (!is_op(e)) continue;
      bool nested = false;
      for (int p = e.parent; p >= 0; p = evs[p].parent) {
        if (is_op(evs[p])) {
          nested = true;
          break;
        }
      }
      if (nested) continue;
      if (e.layer >= 0) {
        credit(e, e.dur);
      } else {
        unattributed += e.dur;
      }
    }
  }

  json out;
  out["source"] = "kineto trace " + file;
  out["device"] = kernels.empty() ? "cpu" : "gpu";
  out["rule"] = kernels.empty()
                    ? "sum of the outermost CPU op durations in the layer's region (forward) or "
                      "under the autograd evaluate_function with the forward op's Sequence "
                      "number (backward)"
                    : "sum of GPU kernel durations whose External id is an op in the layer's "
                      "region (forward) or nested in the autograd evaluate_function with the "
                      "forward op's Sequence number (backward)";
  out["step_s"] = (have_step ? step_end - step_begin : span_end - span_begin) * 1e-6;
  out["unattributed_s"] = unattributed * 1e-6;
  json layers = json::array();
  for (std::size_t i = 0; i < layer_names.size(); ++i) {
    layers.push_back({{"name", layer_names[i]},
                      {"forward_s", fwd[i] * 1e-6},
                      {"backward_s", bwd[i] * 1e-6},
                      {"forward_events", nf[i]},
                      {"backward_events", nb[i]}});
  }
  out["layers"] = std::move(layers);
  return out;
}

json import_kineto_file(const std::string& path) {
  return import_kineto_trace(read_json_file(path), path);
}

}  // namespace ddpsim::model
