// The traced job and its replay costs of trace_replay.hpp.
#include "simulator/measured/trace_replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <system_error>

#include "model/error.hpp"
#include "model/imports/deepspeed_import.hpp"
#include "model/imports/kineto_import.hpp"

namespace ddpsim::sim {

using nlohmann::json;

namespace {

double at(const json& o, const char* k) { return o.contains(k) ? o.at(k).get<double>() : 0.0; }

}  // namespace

namespace {

// The traces are one job's ranks, each once (issue 42: the same rank's trace given twice counted
// as two ranks, and another job's trace beside the first was averaged in). Told by the
// distributedInfo each trace carries (rank, world_size, backend: the communication section), and
// where a trace has none, by an identical import (the same file under another name).
void check_one_job(const std::vector<std::string>& files, const std::vector<json>& sections) {
  std::map<std::int64_t, std::size_t> file_of_rank;
  std::optional<std::size_t> first_sized;    // the first trace that states its world size
  std::optional<std::size_t> first_backend;  // the first that names its backend
  for (std::size_t f = 0; f < files.size(); ++f) {
    for (std::size_t g = 0; g < f; ++g) {
      std::error_code ec;
      if (sections[f] == sections[g] || std::filesystem::equivalent(files[f], files[g], ec)) {
        throw InputError(files[f], "", "each rank's trace once", "the same trace as " + files[g]);
      }
    }
    const auto c = sections[f].find("communication");
    if (c == sections[f].end()) continue;
    if (c->contains("world_size")) {
      const std::int64_t w = c->at("world_size").get<std::int64_t>();
      if (!first_sized) {
        first_sized = f;
      } else {
        const json& first = sections[*first_sized].at("communication");
        const std::int64_t w0 = first.at("world_size").get<std::int64_t>();
        if (w != w0) {
          throw InputError(files[f], "",
                           "the world size of " + files[*first_sized] + " (" + std::to_string(w0) +
                               "): the traces of one job",
                           std::to_string(w) + " (another job's trace?)");
        }
      }
      if (static_cast<std::int64_t>(files.size()) > w) {
        throw InputError(files[f], "",
                         "at most one trace per rank of its " + std::to_string(w) + "-rank job",
                         std::to_string(files.size()) + " traces");
      }
    }
    const std::string backend = c->value("backend", "");
    if (!backend.empty()) {
      if (!first_backend) {
        first_backend = f;
      } else {
        const std::string b0 = sections[*first_backend].at("communication").value("backend", "");
        if (backend != b0) {
          throw InputError(
              files[f], "",
              "the backend of " + files[*first_backend] + " (" + b0 + "): the traces of one job",
              backend + " (another job's trace?)");
        }
      }
    }
    if (c->contains("rank")) {
      const std::int64_t r = c->at("rank").get<std::int64_t>();
      const auto [it, added] = file_of_rank.emplace(r, f);
      if (!added) {
        throw InputError(files[f], "/distributedInfo/rank", "each rank's trace once",
                         "rank " + std::to_string(r) + " again (also " + files[it->second] + ")");
      }
    }
  }
}

}  // namespace

TracedJob traced_job(const std::vector<std::string>& files, const std::vector<json>& sections) {
  DDPSIM_ASSERT(!files.empty() && files.size() == sections.size(), "one section per trace");
  check_one_job(files, sections);
  TracedJob j;
  j.files = files;
  // Per all-reduce index over every step of every trace: summed duration and count.
  std::vector<double> sum_s;
  std::size_t counted = 0;  // steps that contributed
  bool consistent = true;
  std::map<std::string, std::pair<double, double>> layers;
  std::map<std::string, std::size_t> layer_traces;
  for (std::size_t f = 0; f < files.size(); ++f) {
    const json& l = sections[f];
    const json& ph = l.at("phases");
    j.step_s += at(l, "step_s");
    j.forward_s += at(ph, "forward_s");
    j.backward_s += at(ph, "backward_s");
    j.optimizer_s += at(ph, "optimizer_s");
    if (f == 0) j.steps = l.at("steps").get<int>();
    j.whole_model = (f > 0 && j.whole_model) || l.at("whole_model").get<bool>();
    for (const json& x : l.at("layers")) {
      auto& [fwd, bwd] = layers[x.at("name").get<std::string>()];
      fwd += x.at("forward_s").get<double>();
      bwd += x.at("backward_s").get<double>();
      ++layer_traces[x.at("name").get<std::string>()];
    }
    if (!l.contains("communication")) {
      j.notes.push_back(files[f] + ": no collectives");
      consistent = false;
      continue;
    }
    const json& c = l.at("communication");
    j.has_communication = true;
    j.comm_s += at(c, "comm_s");
    j.exposed_s += at(c, "exposed_s");
    if (!j.world_size && c.contains("world_size")) j.world_size = c.at("world_size").get<int>();
    if (j.backend.empty()) j.backend = c.value("backend", "");
    double broadcast = 0;
    for (const json& step : c.at("per_step")) {
      std::vector<double> durations;
      // Each all-reduce costs the time it adds to the communication's occupancy: the replay runs
      // the buckets one after another on one stream, while gloo (torch 1.13's ProcessGroupGloo:
      // two worker threads) runs two at once, each then lasting longer; summing their durations
      // would count the shared time twice. On one NCCL stream nothing overlaps and the cost is
      // the duration.
      double busy_until = -1e300;
      for (const json& x : step.at("collectives")) {
        const double start = x.at("start_s").get<double>(), end = x.at("end_s").get<double>();
        const double d = end - start;
        const std::string op = x.at("op").get<std::string>();
        if (op == "broadcast") broadcast += d;
        if (op != "all_reduce") continue;
        durations.push_back(std::max(0.0, end - std::max(start, busy_until)));
        busy_until = std::max(busy_until, end);
        if (f == 0 && counted == 0) {
          j.allreduce_bytes.push_back(x.contains("bytes") ? x.at("bytes").get<double>() : -1.0);
          j.allreduce_dtypes.push_back(x.value("dtype", ""));
        }
      }
      if (counted == 0) sum_s.assign(durations.size(), 0.0);
      if (durations.size() != sum_s.size()) {
        consistent = false;
        j.notes.push_back(fmt::format(
            "{}: step {} holds {} all-reduces, the first step {}: no per-bucket durations",
            files[f], step.value("step", "?"), durations.size(), sum_s.size()));
      } else {
        for (std::size_t i = 0; i < durations.size(); ++i) sum_s[i] += durations[i];
      }
      ++counted;
    }
    j.broadcast_s += c.at("per_step").empty() ? 0.0 : broadcast / c.at("per_step").size();
  }
  const double n = static_cast<double>(files.size());
  for (double* x : {&j.step_s, &j.forward_s, &j.backward_s, &j.optimizer_s, &j.comm_s, &j.exposed_s,
                    &j.broadcast_s}) {
    *x /= n;
  }
  if (consistent && counted > 0) {
    for (double s : sum_s) j.allreduce_s.push_back(s / static_cast<double>(counted));
  }
  // A layer every trace annotated: the mean over the traces.
  for (const auto& [name, t] : layers) {
    if (layer_traces[name] != files.size()) continue;
    j.layers[name] = {t.first / n, t.second / n};
  }
  return j;
}

TracedJob load_traced_job(const std::vector<std::string>& files) {
  std::vector<json> sections;
  sections.reserve(files.size());
  for (const std::string& f : files) sections.push_back(model::import_kineto_file(f));
  return traced_job(files, sections);
}

MeasuredCosts measured_costs(const TracedJob& j, const model::Workload& w, int grad_accumulation,
                             bool collectives, std::vector<std::string>* notes) {
  DDPSIM_ASSERT(grad_accumulation >= 1, "a scenario has at least one micro-batch");
  MeasuredCosts m;
  m.source = j.files.size() == 1 ? "trace " + j.files[0]
                                 : fmt::format("{} traces ({}, ...)", j.files.size(), j.files[0]);
  const double k = grad_accumulation;
  std::size_t matched = 0;
  if (!j.whole_model) {
    for (const model::Layer& l : w.layers) matched += j.layers.count(l.name);
  }
  if (!w.layers.empty() && matched == w.layers.size()) {
    for (const model::Layer& l : w.layers) {
      const auto& [fwd, bwd] = j.layers.at(l.name);
      m.layer_fwd_s.push_back(fwd / k);
      m.layer_bwd_s.push_back(bwd / k);
    }
    if (notes)
      notes->push_back(
          fmt::format("compute per layer: all {} layers of the model are "
                      "traced modules",
                      w.layers.size()));
  } else if (notes) {
    notes->push_back(
        j.whole_model
            ? "compute: the trace has no module annotations: its whole forward and backward are "
              "spread over the model's layers like the model's own estimate"
            : fmt::format("compute: {} of the model's {} layers are traced modules: the whole "
                          "traced forward and backward are spread like the model's own estimate",
                          matched, w.layers.size()));
  }
  m.forward_s = j.forward_s / k;
  m.backward_s = j.backward_s / k;
  m.optimizer_s = j.optimizer_s;
  if (collectives) {
    m.bucket_collective_s = j.allreduce_s;
    m.buffer_broadcast_s = j.broadcast_s;
  }
  return m;
}

}  // namespace ddpsim::sim

namespace ddpsim::sim {

namespace {

// The scenario precision whose gradients have the traced all-reduce element type (DDP reduces
// the gradients in their own dtype when no comm hook narrows them).
std::optional<std::string> precision_of(std::string dtype) {
  for (char& c : dtype) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (dtype == "float" || dtype == "float32") return "fp32";
  if (dtype == "bfloat16") return "bf16";
  if (dtype == "half" || dtype == "float16") return "fp16";
  return std::nullopt;
}

}  // namespace

namespace {

// The traced all-reduces' sizes, each checked, in launch order.
std::vector<double> traced_bucket_bytes(const TracedJob& j) {
  const std::string& file = j.files.at(0);
  std::vector<double> b;
  for (double x : j.allreduce_bytes) {
    if (x <= 0) {
      throw InputError(file, "/traceEvents",
                       "all-reduces with their sizes (\"In msg nelems\" and \"dtype\" on the "
                       "NCCL kernel or its record_param_comms op)",
                       "an all-reduce without a size");
    }
    b.push_back(x);
  }
  if (b.empty()) {
    throw InputError(file, "/traceEvents",
                     "the all-reduces of DDP's gradient buckets inside the profiled steps (NCCL "
                     "kernels or gloo:all_reduce annotations)",
                     j.has_communication ? "collectives, but no all-reduce" : "no collective");
  }
  return b;
}

struct InferredCap {
  std::optional<double> mb;  ///< nullopt: bucket_cap_mb left out (25 MiB, 1 MiB first bucket)
  std::string how;
};

// DDP closes a bucket once it reaches the cap: every bucket but the last holds at least it.
InferredCap inferred_cap(const std::vector<double>& b) {
  constexpr double kMiB = 1024.0 * 1024.0;
  const std::size_t n = b.size();
  InferredCap c;
  double middle = 0;
  for (std::size_t i = 1; i + 1 < n; ++i) middle = i == 1 ? b[i] : std::min(middle, b[i]);
  if (n >= 3) {
    const double whole = std::floor(middle / kMiB);
    const double cap = whole >= 1 ? whole : middle / kMiB;
    if (b[0] < cap * kMiB && cap == 25) {
      c.how = "25 MiB, the default: the first bucket is the 1 MiB one";
    } else {
      c.mb = b[0] < cap * kMiB ? std::max(1.0, std::floor(std::min(b[0], middle) / kMiB)) : cap;
      c.how = fmt::format("{} MiB: the largest whole MiB every bucket but the last reaches", *c.mb);
    }
  } else if (n == 2 && b[0] >= 25 * kMiB) {
    c.mb = std::floor(b[0] / kMiB);
    c.how = fmt::format("{} MiB: the largest whole MiB the first bucket reaches", *c.mb);
  } else {
    c.how = "25 MiB, the default (two buckets or fewer do not bound the cap)";
  }
  return c;
}

}  // namespace

DraftedScenario draft_scenario(const TracedJob& j) {
  const std::string& file = j.files.at(0);
  const std::vector<double> b = traced_bucket_bytes(j);
  DraftedScenario d;
  const std::string dtype = j.allreduce_dtypes.empty() ? "" : j.allreduce_dtypes[0];
  const std::optional<std::string> precision = precision_of(dtype);
  const std::string prec = precision.value_or("fp32");
  const double elem = prec == "fp32" ? 4.0 : 2.0;
  const std::size_t n = b.size();
  const InferredCap inferred = inferred_cap(b);
  const std::optional<double>& cap_mb = inferred.mb;
  const std::string& cap_how = inferred.how;
  nlohmann::json layers = nlohmann::json::array();
  for (std::size_t i = n; i-- > 0;) {  // parameter order: the first bucket holds the last layer
    layers.push_back({{"name", fmt::format("bucket{}", i)},
                      {"params", static_cast<std::int64_t>(std::llround(b[i] / elem))},
                      {"fwd_flops_per_sample", 0}});
  }
  nlohmann::json parallelism = {{"strategy", "ddp"}};
  if (cap_mb) parallelism["bucket_cap_mb"] = *cap_mb;
  const int gpus = j.world_size.value_or(1);
  d.scenario = {
      {"name", "drafted from the profiler trace " + file},
      {"model", {{"layers", std::move(layers)}}},
      {"hardware", {{"preset", "dgx-a100"}}},
      {"cluster", {{"gpus", gpus}}},
      {"training", {{"per_gpu_batch", 1}, {"precision", prec}}},
      {"parallelism", std::move(parallelism)},
      {"simulation", {{"steps", std::max(1, j.steps)}}},
  };
  if (gpus > 8) d.scenario["cluster"]["gpus_per_node"] = 8;
  d.unknown.push_back(
      "model: the trace does not name it: \"layers\" holds one parameter tensor per traced "
      "bucket with 0 FLOPs; replace it with the model (a preset, hf_config or your layers)");
  d.unknown.push_back(
      "training.per_gpu_batch: the trace does not record the batch: 1 is a placeholder");
  d.unknown.push_back(
      "hardware: the trace does not name the machines: dgx-a100 is a placeholder for the " +
      (j.backend.empty() ? std::string("job's") : j.backend) + " job");
  if (!precision) {
    d.unknown.push_back("training.precision: the all-reduces' element type \"" + dtype +
                        "\" is not a gradient dtype ddpsim knows: fp32 is a placeholder");
  }
  if (!j.world_size) {
    d.unknown.push_back("cluster.gpus: the trace gives no world size: 1 is a placeholder");
  }
  d.summary = fmt::format(
      "drafted from {}: {} ranks ({}), {} buckets of {} all-reduces (bucket_cap_mb {}), {} "
      "profiled steps",
      file, gpus, j.backend.empty() ? "backend unknown" : j.backend, n,
      dtype.empty() ? "unknown-type" : dtype, cap_how, j.steps);
  return d;
}

DraftedScenario draft_onto(const TracedJob& j, const nlohmann::json& base_doc,
                           const model::Scenario& base) {
  const std::string& file = j.files.at(0);
  // The traced job's all-reduce buckets are DDP's: a base of another strategy describes another
  // job (it used to be switched to ddp without a word).
  if (base.parallelism.strategy != model::Strategy::kDdp) {
    throw InputError(base.file, "/parallelism/strategy",
                     "ddp: the traced DDP job's all-reduce buckets are drafted onto a DDP "
                     "scenario (" +
                         file + ")",
                     std::string("\"") + model::strategy_name(base.parallelism.strategy) + "\"");
  }
  const std::vector<double> b = traced_bucket_bytes(j);
  const InferredCap cap = inferred_cap(b);
  DraftedScenario d;
  nlohmann::json patch = {{"parallelism", {{"strategy", "ddp"}}},
                          {"simulation", {{"steps", std::max(1, j.steps)}}}};
  // A merge patch: null removes the base's cap, so the default (and its 1 MiB first bucket)
  // applies as in the traced job.
  patch["parallelism"]["bucket_cap_mb"] = cap.mb ? nlohmann::json(*cap.mb) : nlohmann::json();
  if (j.world_size) {
    patch["cluster"]["gpus"] = *j.world_size;
  } else {
    d.unknown.push_back("cluster.gpus: the trace gives no world size: the base's " +
                        std::to_string(base.cluster.gpus) + " is kept");
  }
  // The dtype on the wire: the traced all-reduces' against what the base sends.
  const std::string dtype = j.allreduce_dtypes.empty() ? "" : j.allreduce_dtypes[0];
  const std::optional<std::string> traced = precision_of(dtype);
  const model::CommHook::Kind hook = base.parallelism.comm_hook.kind;
  const model::DType base_wire = hook == model::CommHook::Kind::kFp16   ? model::DType::kFp16
                                 : hook == model::CommHook::Kind::kBf16 ? model::DType::kBf16
                                 : base.training.grad_reduce_dtype
                                     ? *base.training.grad_reduce_dtype
                                     : model::grad_dtype(base.training.precision);
  if (!traced) {
    d.unknown.push_back("training.grad_reduce_dtype: the all-reduces' element type \"" + dtype +
                        "\" is not one ddpsim knows: the base's " + model::dtype_name(base_wire) +
                        " is kept");
  } else if (*traced != model::dtype_name(base_wire)) {
    if (hook == model::CommHook::Kind::kNone) {
      patch["training"]["grad_reduce_dtype"] = *traced;
    } else {
      d.unknown.push_back("parallelism.comm_hook: the traced all-reduces carry " + *traced +
                          ", the base's comm_hook \"" + base.parallelism.comm_hook.text +
                          "\" sends " + model::dtype_name(base_wire) + ": the base's is kept");
    }
  }
  // A sweep of the base over a key the trace set keeps its points (extrapolating the traced
  // job is what it is for): said, since they override the traced value.
  if (base_doc.contains("sweep") && base_doc.at("sweep").is_object()) {
    for (const auto& [section, keys] : patch.items()) {
      for (const auto& [key, value] : keys.items()) {
        const std::string swept = section + "." + key;
        if (base_doc.at("sweep").contains(swept)) {
          d.unknown.push_back("sweep." + swept + ": the base's sweep is kept; its points " +
                              "override the traced " + value.dump());
        }
      }
    }
  }
  d.patch = patch;
  d.scenario = model::apply_import_patch(base_doc, patch);
  d.summary = fmt::format(
      "applied to the base scenario from {}: {} ranks, bucket_cap_mb {}, {} profiled steps{}; "
      "the model, hardware and batch are the base's",
      file, j.world_size ? std::to_string(*j.world_size) : std::string("(unknown)"), cap.how,
      j.steps, patch.contains("training") ? ", grad_reduce_dtype " + *traced : std::string());
  return d;
}

}  // namespace ddpsim::sim
