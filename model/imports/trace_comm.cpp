// Collectives of a Kineto trace; the rules are trace_comm.hpp's.
#include "model/imports/trace_comm.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/ascii_lower.hpp"

namespace ddpsim::model {

using nlohmann::json;

namespace {

using Interval = std::pair<double, double>;

// "allreduce", "_allgather_base", "reduce_scatter_tensor", "AllReduce", "all_to_allv" -> the
// collective_op vocabulary (all_reduce, all_gather, ...); unknown names pass lowercased.
std::string normalize_op(const std::string& raw) {
  std::string s;
  for (char c : ascii_lower(raw)) {
    if (c != '_') s += c;
  }
  for (const char* suffix : {"coalesced", "intotensor", "tensor", "base"}) {
    const std::string x = suffix;
    if (s.size() > x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0) {
      s.resize(s.size() - x.size());
    }
  }
  static const std::map<std::string, std::string> known = {
      {"allreduce", "all_reduce"}, {"allgather", "all_gather"}, {"reducescatter", "reduce_scatter"},
      {"broadcast", "broadcast"},  {"reduce", "reduce"},        {"alltoall", "all_to_all"},
      {"alltoallv", "all_to_all"}, {"sendrecv", "send_recv"},   {"send", "send_recv"},
      {"recv", "send_recv"},       {"barrier", "barrier"},      {"gather", "gather"},
      {"scatter", "scatter"}};
  auto it = known.find(s);
  return it == known.end() ? ascii_lower(raw) : it->second;
}

// ncclKernel_AllReduce_RING_LL_Sum_float(...), ncclDevKernel_AllGather_RING_LL -> AllGather.
std::string op_from_name(const std::string& name) {
  for (const char* prefix : {"ncclKernel_", "ncclDevKernel_", "gloo:", "nccl:"}) {
    if (!name.starts_with(prefix)) continue;
    std::string rest = name.substr(std::string(prefix).size());
    if (std::string(prefix).back() == '_') rest = rest.substr(0, rest.find_first_of("_("));
    return normalize_op(rest);
  }
  return "unknown";
}

// Bytes per element of the dtype names PyTorch writes (c10 ScalarType names, Gloo's C types).
std::optional<int> dtype_bytes(std::string d) {
  d = ascii_lower(d);
  if (d.starts_with("c10::")) d = d.substr(5);
  static const std::map<std::string, int> m = {
      {"float", 4},       {"float32", 4},       {"half", 2},       {"float16", 2},
      {"bfloat16", 2},    {"double", 8},        {"float64", 8},    {"int", 4},
      {"int32", 4},       {"long", 8},          {"int64", 8},      {"long int", 8},
      {"short", 2},       {"int16", 2},         {"byte", 1},       {"char", 1},
      {"bool", 1},        {"int8", 1},          {"uint8", 1},      {"unsigned char", 1},
      {"signed char", 1}, {"float8_e4m3fn", 1}, {"float8_e5m2", 1}};
  auto it = m.find(d);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

// The first event at or above `i` (itself, then its launcher's chain) carrying collective args.
const CollectiveArgs* args_of(const KinetoTrace& t, const detail::TraceLinks& l, int i) {
  if (t.events[i].args >= 0) return &t.collective_args[t.events[i].args];
  for (int p = l.launcher[i], depth = 0; p >= 0 && depth < 32; p = l.parent[p], ++depth) {
    if (t.events[p].args >= 0) return &t.collective_args[t.events[p].args];
  }
  return nullptr;
}

std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const Interval& x : v) {
    if (!out.empty() && x.first <= out.back().second) {
      out.back().second = std::max(out.back().second, x.second);
    } else {
      out.push_back(x);
    }
  }
  return out;
}

double length(const std::vector<Interval>& v) {
  double s = 0;
  for (const Interval& x : v) s += x.second - x.first;
  return s;
}

// Length of the intersection of two sorted disjoint interval lists.
double overlap(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  double s = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double lo = std::max(a[i].first, b[j].first);
    const double hi = std::min(a[i].second, b[j].second);
    if (hi > lo) s += hi - lo;
    (a[i].second < b[j].second ? i : j)++;
  }
  return s;
}

struct Collective {
  int event = 0;
  std::string op;
  std::optional<std::int64_t> bytes;
  std::string dtype;  // as the trace writes it ("Float", "BFloat16", "float"); empty: unknown
};

}  // namespace

bool is_collective_event(const KinetoTrace& t, const TraceEvent& e) {
  const std::string& n = t.name(e);
  if (e.kind == EventKind::kKernel) return n.starts_with("nccl");
  return e.kind == EventKind::kAnnotation && n.starts_with("gloo:");
}

std::optional<json> trace_communication(const KinetoTrace& t, const detail::TraceLinks& l) {
  const auto& ev = t.events;
  const std::size_t nsteps = l.steps.size();
  std::vector<std::vector<Collective>> per_step(nsteps);
  std::set<std::uint32_t> comm_threads;
  bool gpu = false, gloo = false;
  std::int64_t group_size = -1;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (!is_collective_event(t, ev[i])) continue;
    if (ev[i].kind == EventKind::kKernel) {
      gpu = true;
    } else {
      gloo = true;
      comm_threads.insert(ev[i].thread);
    }
    if (l.step[i] < 0) continue;
    Collective c;
    c.event = static_cast<int>(i);
    const CollectiveArgs* a = args_of(t, l, static_cast<int>(i));
    c.op = a && !a->collective.empty() ? normalize_op(a->collective) : op_from_name(t.name(ev[i]));
    if (a && a->in_nelems >= 0) {
      if (const auto b = dtype_bytes(a->dtype)) c.bytes = a->in_nelems * *b;
    }
    if (a) c.dtype = a->dtype;
    if (a && a->group_size > 0) group_size = a->group_size;
    per_step[l.step[i]].push_back(std::move(c));
  }
  if (!gpu && !gloo) return std::nullopt;

  // Compute intervals per step.
  std::vector<std::vector<Interval>> compute(nsteps);
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const int s = l.step[i];
    if (s < 0 || is_collective_event(t, ev[i])) continue;
    const TraceEvent& e = ev[i];
    bool counts = false;
    if (gpu) {
      counts = detail::is_gpu(e.kind);
    } else if (e.kind == EventKind::kOp && !comm_threads.count(e.thread)) {
      counts = true;  // outermost ops only: nested ones lie inside them anyway
      for (int p = l.parent[i]; p >= 0 && counts; p = l.parent[p]) {
        counts = ev[p].kind != EventKind::kOp;
      }
    }
    if (counts) compute[s].emplace_back(e.ts, e.ts + e.dur);
  }

  json steps = json::array();
  double comm_total = 0, exposed_total = 0;
  std::size_t count_total = 0;
  struct OpTotal {
    std::size_t count = 0, sized = 0;
    std::int64_t bytes = 0;
  };
  std::map<std::string, OpTotal> ops;  // over all steps
  for (std::size_t s = 0; s < nsteps; ++s) {
    auto& cs = per_step[s];
    std::sort(cs.begin(), cs.end(), [&](const Collective& a, const Collective& b) {
      return ev[a.event].ts < ev[b.event].ts;
    });
    json list = json::array();
    std::vector<Interval> comm;
    double comm_s = 0;
    for (const Collective& c : cs) {
      const TraceEvent& e = ev[c.event];
      comm.emplace_back(e.ts, e.ts + e.dur);
      comm_s += e.dur;
      json row = {{"op", c.op}};
      if (c.bytes) row["bytes"] = *c.bytes;
      if (!c.dtype.empty()) row["dtype"] = c.dtype;
      row["start_s"] = (e.ts - l.steps[s].begin) * 1e-6;
      row["end_s"] = (e.ts + e.dur - l.steps[s].begin) * 1e-6;
      list.push_back(std::move(row));
      OpTotal& o = ops[c.op];
      ++o.count;
      if (c.bytes) {
        ++o.sized;
        o.bytes += *c.bytes;
      }
    }
    const auto cu = merged(std::move(comm));
    const double exposed = length(cu) - overlap(cu, merged(std::move(compute[s])));
    comm_total += comm_s;
    exposed_total += exposed;
    count_total += cs.size();
    steps.push_back({{"step", l.steps[s].name},
                     {"comm_s", comm_s * 1e-6},
                     {"exposed_s", exposed * 1e-6},
                     {"collectives", std::move(list)}});
  }
  const double n = static_cast<double>(std::max<std::size_t>(nsteps, 1));
  json out;
  out["backend"] = !t.backend.empty() ? t.backend : gpu ? "nccl" : "gloo";
  out["source"] = gpu ? "NCCL kernels" : "gloo:* annotations";
  const std::int64_t world = t.world_size > 0 ? t.world_size : group_size;
  if (world > 0) out["world_size"] = world;
  if (t.rank >= 0) out["rank"] = t.rank;
  out["steps"] = nsteps;
  out["collectives_per_step"] = static_cast<double>(count_total) / n;
  out["comm_s"] = comm_total / n * 1e-6;
  out["exposed_s"] = exposed_total / n * 1e-6;
  json by_op = json::object();
  for (const auto& [op, o] : ops) {
    by_op[op] = {{"count", static_cast<double>(o.count) / n}};
    if (o.sized == o.count) by_op[op]["bytes"] = static_cast<double>(o.bytes) / n;
  }
  out["ops"] = std::move(by_op);
  out["per_step"] = std::move(steps);
  return out;
}

}  // namespace ddpsim::model
