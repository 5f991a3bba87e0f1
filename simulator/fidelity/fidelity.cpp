// Fidelity report: presets against published training runs, nccl-tests sweeps by size band,
// and the provenance of every preset constant. Predictions go through the run API only; the
// JSON and markdown writers are fidelity_report.cpp.
#include "simulator/fidelity/fidelity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <map>
#include <set>

#include "model/ascii_lower.hpp"
#include "model/collective_op.hpp"
#include "model/error.hpp"
#include "model/hardware/cluster.hpp"
#include "model/hardware/nccl_version.hpp"
#include "model/paths.hpp"
#include "model/scenario/hardware_io.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/collectives/collective.hpp"
#include "simulator/fidelity/detail/sweep_bands.hpp"
#include "simulator/fidelity/markdown.hpp"
#include "simulator/fidelity/nccl_logs.hpp"
#include "simulator/fidelity/throughput_units.hpp"
#include "simulator/report.hpp"
#include "simulator/run.hpp"

namespace ddpsim::sim {

using nlohmann::json;

namespace {

std::string ptr(std::size_t i, const std::string& key) { return fmt::format("/{}/{}", i, key); }

std::string got(const json& row, const std::string& key) {
  return row.contains(key) ? row.at(key).dump() : "nothing";
}

std::string text_field(const json& row, std::size_t i, const std::string& key,
                       const std::string& file) {
  if (!row.contains(key) || !row.at(key).is_string() || row.at(key).get<std::string>().empty()) {
    throw InputError(file, ptr(i, key), "a non-empty string", got(row, key));
  }
  return row.at(key).get<std::string>();
}

double positive_field(const json& row, std::size_t i, const std::string& key,
                      const std::string& file) {
  if (!row.contains(key) || !row.at(key).is_number() || !(row.at(key).get<double>() > 0)) {
    throw InputError(file, ptr(i, key), "a number > 0", got(row, key));
  }
  return row.at(key).get<double>();
}

std::string optional_text(const json& row, const std::string& key) {
  return row.contains(key) && row.at(key).is_string() ? row.at(key).get<std::string>() : "";
}

// ---- part 1: training rows --------------------------------------------------------------------

// The FLOPs per token the publisher's MFU counts (6P + 12Lds), from the row's model_dims and
// ddpsim's own parameter count; nullopt when the row gives no model_dims.
std::optional<double> flops_per_token(const json& row, std::size_t i, const std::string& file,
                                      const model::Scenario& s) {
  if (!row.contains("model_dims")) return std::nullopt;
  const json& d = row.at("model_dims");
  for (const char* k : {"n_layers", "d_model"}) {
    if (!d.is_object() || !d.contains(k) || !d.at(k).is_number_integer()) {
      throw InputError(file, ptr(i, "model_dims/") + k, "an integer", d.dump());
    }
  }
  return model_flops_per_token(static_cast<double>(s.workload->param_count()),
                               d.at("n_layers").get<std::int64_t>(),
                               d.at("d_model").get<std::int64_t>(), s.workload->seq_len);
}

std::string setup_text(const model::Scenario& s) {
  const auto& t = s.training;
  std::string out = fmt::format(
      "{}; {} ({}, {:g} GiB, {:g} GB/s) x {} GPUs; micro-batch {} x accumulation {} = "
      "global {}",
      s.model_label, s.hardware.name, s.hardware.gpu.name,
      s.hardware.gpu.memory_bytes / 1073741824.0, s.hardware.gpu.memory_bandwidth / 1e9,
      s.cluster.gpus, t.per_gpu_batch, t.grad_accumulation,
      t.per_gpu_batch * t.grad_accumulation * s.cluster.gpus);
  if (s.workload->seq_len > 1) out += fmt::format(" x {} tokens", s.workload->seq_len);
  out += fmt::format("; {}", model::precision_name(t.precision));
  if (t.grad_reduce_dtype)
    out += fmt::format(" (reduce {})", model::dtype_name(*t.grad_reduce_dtype));
  out += fmt::format("; {}; {}", model::strategy_name(s.parallelism.strategy),
                     model::optimizer_name(t.optimizer));
  if (t.activation_checkpointing.enabled()) {
    out += "; activation checkpointing " + model::checkpointing_name(t.activation_checkpointing);
  }
  if (t.compile) out += "; torch.compile";
  if (t.float8) {
    out += fmt::format("; float8 {}{}", model::float8_recipe_name(t.float8->recipe),
                       t.float8->fsdp_float8_all_gather ? " (fp8 all-gather)" : "");
  }
  return out;
}

TrainingComparison predict_row(const json& row, std::size_t i, const std::string& file) {
  TrainingComparison c;
  c.id = text_field(row, i, "id", file);
  c.source = text_field(row, i, "source", file);
  c.source_url = optional_text(row, "source_url");
  c.location = optional_text(row, "location");
  c.unit = optional_text(row, "unit");
  const ThroughputKind kind =
      parse_throughput_kind(text_field(row, i, "quantity", file), file + ": " + ptr(i, "quantity"));
  c.quantity = throughput_kind_name(kind);
  c.published = positive_field(row, i, "value", file);
  model::Scenario s;
  try {
    s = model::parse_scenario(row.at("scenario"), file);
  } catch (const InputError& e) {
    throw e.rebased(ptr(i, "scenario"));
  }
  if (!s.sweep.empty())
    throw InputError(file, ptr(i, "scenario/sweep"), "no sweep (one run per row)");
  const Prediction p = predict_point(s);  // presets only: no profile is named in these rows
  StepInUnits u;
  u.global_batch = static_cast<double>(p.global_batch);
  u.seq_len = static_cast<double>(s.workload->seq_len);
  u.gpus = s.cluster.gpus;
  const std::optional<double> flops = flops_per_token(row, i, file, s);
  const bool has_peak = row.contains("mfu_peak_tflops");
  if ((kind == ThroughputKind::kTflopsPerGpu || kind == ThroughputKind::kMfu) && !flops) {
    throw InputError(file, ptr(i, "model_dims"), "{\"n_layers\", \"d_model\"} for " + c.quantity);
  }
  if (flops) u.flops_per_token = *flops;
  if (kind == ThroughputKind::kMfu || (flops && has_peak)) {
    u.peak_tflops = positive_field(row, i, "mfu_peak_tflops", file);
  }
  c.step_time_s = p.step_time_s;
  c.ddpsim = step_time_in(kind, p.step_time_s, u);
  c.relative_error = (c.ddpsim - c.published) / c.published;
  c.speed_error =
      kind == ThroughputKind::kStepTimeS ? c.published / c.ddpsim - 1.0 : c.relative_error;
  c.params = static_cast<double>(s.workload->param_count());
  c.fits_in_memory = p.fits_in_memory;
  c.setup = setup_text(s);
  c.gpu = s.hardware.gpu.name;
  c.gpus = s.cluster.gpus;
  c.strategy = model::strategy_name(s.parallelism.strategy);
  if (row.contains("held_out") && !row.at("held_out").is_boolean()) {
    throw InputError(file, ptr(i, "held_out"), "true or false", got(row, "held_out"));
  }
  c.held_out = row.value("held_out", false);
  if (row.contains("also_published") && row.at("also_published").contains("mfu")) {
    c.published_mfu = row.at("also_published").at("mfu").get<double>();
  }
  if (flops && has_peak) {
    c.ddpsim_mfu = step_time_in(ThroughputKind::kMfu, p.step_time_s, u);
  }
  return c;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// ---- part 2: nccl-tests sweeps ----------------------------------------------------------------

constexpr const char* kSweepMarker = " bus bandwidth at message size ";

// The op named before kSweepMarker ("AllReduce bus bandwidth at message size 1KB"), as
// nccl-tests names its binaries' collectives; nullopt for anything else.
std::optional<model::CollectiveOp> sweep_op(const std::string& quantity) {
  const auto at = quantity.find(kSweepMarker);
  if (at == std::string::npos) return std::nullopt;
  const std::string op = quantity.substr(0, at);
  if (op == "AllReduce") return model::CollectiveOp::kAllReduce;
  if (op == "AllGather") return model::CollectiveOp::kAllGather;
  if (op == "ReduceScatter") return model::CollectiveOp::kReduceScatter;
  if (op == "Broadcast") return model::CollectiveOp::kBroadcast;
  return std::nullopt;
}

// The first word after kSweepMarker: "1KB" .. "8GB", decimal prefixes of powers of two
// (nccl-tests prints 65536 as "65K": the nearest power of two of the decimal value), or a plain
// byte count ("1048576").
double size_label_bytes(const std::string& quantity, const std::string& where) {
  const std::string rest =
      quantity.substr(quantity.find(kSweepMarker) + std::string(kSweepMarker).size());
  const std::string label = rest.substr(0, rest.find_first_of(" (,;"));
  std::string l = label;
  if (!l.empty() && l.find_first_not_of("0123456789") == std::string::npos) return std::stod(l);
  if (!l.empty() && l.back() == 'B') l.pop_back();
  const char u = l.empty() ? '?' : l.back();
  const double mult = u == 'K' ? 1e3 : u == 'M' ? 1e6 : u == 'G' ? 1e9 : 0;
  double v = 0;
  try {
    v = mult > 0 ? std::stod(l.substr(0, l.size() - 1)) : 0;
  } catch (const std::exception&) {
  }
  if (!(v > 0)) {
    throw Error(where + ": message size \"" + label + "\" is not <number>K|M|G[B] or bytes");
  }
  return std::exp2(std::round(std::log2(v * mult)));
}

// How a published sweep was run, from its row: the NCCL release its notes or backend name
// ("NCCL 2.18.5"); Azure/AI-benchmarking-guide's Benchmarks/NVIDIA/NCCLBandwidth.py runs
// `NCCL_ALGO=NVLS all_reduce_perf -b 8 -e 8G -f 2 -g <num_gpus>`: one thread drives every GPU,
// and NVLS is forced where it runs (Hopper; its A100 file's "NVLS" cannot run there).
struct SweepHarness {
  std::string nccl_version;
  int gpus_per_process = 1;
  bool nvls = false;
};

SweepHarness sweep_harness(const json& row, int gpus) {
  SweepHarness h;
  const std::string text =
      row.value("notes", std::string()) + " " + row.value("framework_backend", std::string());
  for (std::size_t at = text.find("NCCL "); at != std::string::npos;
       at = text.find("NCCL ", at + 1)) {
    const std::string word = text.substr(at + 5, text.find_first_of(" ,;)", at + 5) - at - 5);
    if (model::nccl_version_known(word)) {
      h.nccl_version = word;
      break;
    }
  }
  if (row.value("source", std::string()).find("Azure AI-benchmarking-guide") != std::string::npos) {
    h.gpus_per_process = gpus;
    h.nvls = true;
  }
  return h;
}

std::vector<BusbwBand> busbw_bands(const json& measurements) {
  std::map<std::string, std::pair<std::string, std::vector<detail::SweepPoint>>> sweeps;
  std::map<std::string, model::HardwareSpec> systems;
  for (const json& row : measurements) {
    const std::string q = row.value("quantity", std::string());
    const auto op = sweep_op(q);
    if (!op || !row.contains("value") || !row.at("value").is_number() ||
        !row.contains("num_gpus") || !row.at("num_gpus").is_number_integer()) {
      continue;
    }
    const std::string id = row.value("id", std::string("?"));
    const std::string gpu_type = row.value("gpu_type", std::string());
    const std::string preset = detail::preset_for_gpu(gpu_type);
    if (preset.empty()) continue;  // no system preset for this GPU: not a sweep ddpsim predicts
    const int gpus = row.at("num_gpus").get<int>();
    const double bytes = size_label_bytes(q, "published-measurements.json row " + id);
    json section = {{"preset", preset}};
    if (row.contains("gpus_per_node") && row.at("gpus_per_node").is_number_integer()) {
      section["gpus_per_node"] = row.at("gpus_per_node");
    }
    const SweepHarness harness = sweep_harness(row, gpus);
    if (!harness.nccl_version.empty()) {
      section["collectives"]["nccl_version"] = harness.nccl_version;
    }
    section["collectives"]["gpus_per_process"] = harness.gpus_per_process;
    if (!systems.count(section.dump())) {
      systems[section.dump()] = model::resolve_hardware(section, "<fidelity>", "/hardware");
    }
    const model::HardwareSpec& hw = systems.at(section.dump());
    const model::Topology topo(hw, gpus);
    const model::CollectiveAlgorithm algo = harness.nvls && hw.gpu.compute_capability >= 9
                                                ? model::CollectiveAlgorithm::kNvls
                                                : model::CollectiveAlgorithm::kAuto;
    const double b = collective_cost(*op, topo.bandwidths(), hw, bytes, algo).busbw_gbytes_per_s;
    const double published = row.at("value").get<double>();
    const std::string key = fmt::format("{} | {} | {} | {} GPUs", model::collective_op_name(*op),
                                        row.value("source", std::string()), gpu_type, gpus);
    sweeps[key].first = preset;
    sweeps[key].second.push_back({bytes, (b - published) / published});
  }
  std::vector<BusbwBand> out;
  for (const auto& [key, sweep] : sweeps) {
    for (BusbwBand& b : detail::sweep_bands(key, sweep.first, sweep.second)) out.push_back(b);
  }
  return out;
}

// ---- part 3: constants ------------------------------------------------------------------------

void numeric_leaves(const json& j, const std::string& prefix, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (k == "fitted_from") continue;
      numeric_leaves(v, prefix.empty() ? k : prefix + "." + k, out);
    }
  } else if (j.is_number()) {
    out.push_back(fmt::format("{}={}", prefix, j.dump()));
  }
}

// Words that mean a number came from an end-to-end training run, not a kernel or a collective.
constexpr const char* kEndToEndWords[] = {
    "mfu",       "pre-training", "pretraining",         "tokens/s",  "images/s",
    "samples/s", "sequences/s",  "training throughput", "end-to-end"};

// The preset files (*.json) of `subs` below hardware_dir, sorted.
std::vector<std::filesystem::path> preset_files(const std::filesystem::path& hardware_dir,
                                                std::initializer_list<const char*> subs) {
  std::vector<std::filesystem::path> files;
  for (const char* sub : subs) {
    const auto dir = hardware_dir / sub;
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The measured tables of the GPU presets (hardware_dir/gpus), in file order.
std::vector<KernelTable> kernel_tables(const std::filesystem::path& hardware_dir) {
  std::vector<KernelTable> out;
  for (const auto& f : preset_files(hardware_dir, {"gpus"})) {
    const json doc = model::read_json_file(f.string());
    const std::string file = std::filesystem::relative(f, hardware_dir).generic_string();
    for (const char* key : {"gemm_table", "attention_kernels", "attention_efficiency"}) {
      if (!doc.contains(key)) continue;
      const json& t = doc.at(key);
      KernelTable k{file, key, "", t.value("source", std::string())};
      for (const auto& [name, v] : t.items()) {
        if (name == "source") continue;
        const std::string what =
            v.is_array() ? fmt::format("{}: {} {}", name, v.size(),
                                       std::string(key) == "gemm_table" ? "shapes" : "series")
                         : fmt::format("{}: {}", name, v.dump());
        k.entries += (k.entries.empty() ? "" : ", ") + what;
      }
      out.push_back(std::move(k));
    }
  }
  return out;
}

std::vector<ConstantSource> constant_sources(const std::filesystem::path& hardware_dir,
                                             const std::set<std::string>& training_ids) {
  std::vector<ConstantSource> out;
  for (const auto& f : preset_files(hardware_dir, {"", "gpus", "links"})) {
    const json doc = model::read_json_file(f.string());
    ConstantSource c;
    c.file = std::filesystem::relative(f, hardware_dir).generic_string();
    std::vector<std::string> leaves;
    numeric_leaves(doc, "", leaves);
    for (const auto& l : leaves) c.constants += (c.constants.empty() ? "" : ", ") + l;
    c.source = doc.value("source", std::string());
    const std::string all =
        model::ascii_lower(c.source + " " + doc.value("description", std::string()));
    for (const char* w : kEndToEndWords) {
      const auto at = all.find(w);
      if (at == std::string::npos) continue;
      c.end_to_end = true;
      const std::size_t from = at > 60 ? at - 60 : 0;
      c.evidence += (c.evidence.empty() ? "" : " / ") + std::string("\"...") +
                    (c.source + " " + doc.value("description", std::string())).substr(from, 140) +
                    "...\"";
      break;
    }
    if (doc.contains("collectives") && doc.at("collectives").contains("fitted_from")) {
      for (const auto& id : doc.at("collectives").at("fitted_from")) {
        const std::string s = id.get<std::string>();
        c.fitted_from += (c.fitted_from.empty() ? "" : ", ") + s;
        if (training_ids.count(s)) {
          c.end_to_end = true;
          c.evidence += (c.evidence.empty() ? "" : " / ") + ("fitted_from names training row " + s);
        }
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

const char* busbw_band(double bytes) {
  if (bytes < 65536.0) return "< 64 KiB";
  if (bytes < 1048576.0) return "64 KiB - 1 MiB";
  if (bytes < 64.0 * 1048576.0) return "1 - 64 MiB";
  return ">= 64 MiB";
}

std::vector<ErrorSummary> summarize(const std::vector<TrainingComparison>& rows, bool held_out) {
  std::map<std::string, std::vector<double>> groups;
  std::vector<double> all;
  for (const auto& r : rows) {
    if (r.held_out != held_out) continue;
    const double e = std::abs(r.relative_error);
    all.push_back(e);
    groups["GPU " + r.gpu].push_back(e);
    groups["strategy " + r.strategy].push_back(e);
  }
  std::vector<ErrorSummary> out;
  auto add = [&](const std::string& name, const std::vector<double>& v) {
    out.push_back({name, v.size(), median(v), *std::max_element(v.begin(), v.end())});
  };
  if (all.empty()) return out;
  add("all", all);
  for (const auto& [name, v] : groups) add(name, v);
  return out;
}

FidelityReport compare_fidelity(const json& training_rows, const std::string& training_file,
                                const json& measurements,
                                const std::filesystem::path& hardware_dir) {
  if (!training_rows.is_array()) throw InputError(training_file, "", "an array of rows");
  if (!measurements.is_array()) throw Error("published-measurements.json: expected an array");
  FidelityReport r;
  r.training_rows = training_rows.size();
  std::set<std::string> ids;
  for (std::size_t i = 0; i < training_rows.size(); ++i) {
    const json& row = training_rows[i];
    if (!row.is_object()) throw InputError(training_file, fmt::format("/{}", i), "an object");
    const std::string id = text_field(row, i, "id", training_file);
    if (!ids.insert(id).second) throw InputError(training_file, ptr(i, "id"), "a unique id", id);
    const bool has_scenario = row.contains("scenario");
    const bool has_reason = row.contains("not_predicted");
    if (has_scenario == has_reason) {
      throw InputError(training_file, fmt::format("/{}", i),
                       "exactly one of \"scenario\" and \"not_predicted\"");
    }
    if (has_reason) {
      r.not_predicted.push_back({id, text_field(row, i, "source", training_file),
                                 text_field(row, i, "not_predicted", training_file)});
    } else {
      r.rows.push_back(predict_row(row, i, training_file));
    }
  }
  r.visible = summarize(r.rows, false);
  r.held_out = summarize(r.rows, true);
  r.bands = busbw_bands(measurements);
  r.constants = constant_sources(hardware_dir, ids);
  r.kernel_tables = kernel_tables(hardware_dir);
  return r;
}

FidelityReport compare_fidelity() {
  const auto data = model::data_dir() / "data";
  const std::string training = (data / "published-training.json").string();
  FidelityReport r =
      compare_fidelity(model::read_json_file(training), training,
                       model::read_json_file((data / "published-measurements.json").string()),
                       model::data_dir() / "hardware");
  r.log_bands = nccl_log_bands(data / "nccl-tests");
  r.fabric_fit_bands = fabric_fit_bands(data / "nccl-tests");
  return r;
}

namespace detail {

std::string preset_for_gpu(const std::string& gpu) {
  std::string g = gpu;
  std::transform(g.begin(), g.end(), g.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (g.find("b200") != std::string::npos) return "dgx-b200";
  if (g.find("h200") != std::string::npos) return "hgx-h200";
  if (g.find("h100") != std::string::npos) return "dgx-h100";
  if (g.find("a100") != std::string::npos) return "dgx-a100";
  if (g.find("v100") != std::string::npos) return "dgx-1";
  return "";
}

std::vector<BusbwBand> sweep_bands(const std::string& sweep, const std::string& preset,
                                   const std::vector<SweepPoint>& points) {
  std::vector<BusbwBand> out;
  for (const char* band : {"< 64 KiB", "64 KiB - 1 MiB", "1 - 64 MiB", ">= 64 MiB"}) {
    BusbwBand b;
    b.sweep = sweep;
    b.preset = preset;
    b.band = band;
    double log_sum = 0;
    std::vector<double> signed_errors;
    for (const SweepPoint& pt : points) {
      if (std::string(busbw_band(pt.bytes)) != band) continue;
      ++b.count;
      // An exact hit would make the geomean 0; 1e-6 (0.0001%) is below any printed digit.
      log_sum += std::log(std::max(std::abs(pt.rel), 1e-6));
      b.max_abs_error = std::max(b.max_abs_error, std::abs(pt.rel));
      signed_errors.push_back(pt.rel);
    }
    if (b.count == 0) continue;
    b.geomean_abs_error = std::exp(log_sum / static_cast<double>(b.count));
    // The median of an even count is the mean of the middle two.
    std::sort(signed_errors.begin(), signed_errors.end());
    const std::size_t mid = signed_errors.size() / 2;
    b.median_error = signed_errors.size() % 2 == 1
                         ? signed_errors[mid]
                         : 0.5 * (signed_errors[mid - 1] + signed_errors[mid]);
    out.push_back(b);
  }
  return out;
}

}  // namespace detail

}  // namespace ddpsim::sim
