#include "model/scenario/scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/error.hpp"
#include "model/json_file.hpp"
#include "model/profile/profile.hpp"
#include "model/scenario/detail/json_io.hpp"
#include "model/scenario/detail/model_section.hpp"
#include "model/scenario/detail/scenario_sections.hpp"
#include "model/scenario/hardware_io.hpp"
#include "model/scenario/scenario_keys.hpp"

namespace ddpsim::model {

using nlohmann::json;

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kAmpBf16:
      return "amp_bf16";
    case Precision::kAmpFp16:
      return "amp_fp16";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
  }
  DDPSIM_ASSERT(false, "unknown precision");
}

const char* optimizer_name(Optimizer o) {
  switch (o) {
    case Optimizer::kSgd:
      return "sgd";
    case Optimizer::kMomentum:
      return "momentum";
    case Optimizer::kAdam:
      return "adam";
    case Optimizer::kAdamW:
      return "adamw";
  }
  DDPSIM_ASSERT(false, "unknown optimizer");
}

const char* objective_name(PlanObjective o) {
  switch (o) {
    case PlanObjective::kTime:
      return "time";
    case PlanObjective::kCost:
      return "cost";
    case PlanObjective::kGpuHours:
      return "gpu_hours";
  }
  DDPSIM_ASSERT(false, "unknown objective");
}

const char* optimizer_impl_name(OptimizerImpl i) {
  switch (i) {
    case OptimizerImpl::kForeach:
      return "foreach";
    case OptimizerImpl::kFused:
      return "fused";
    case OptimizerImpl::kForLoop:
      return "for_loop";
  }
  DDPSIM_ASSERT(false, "unknown optimizer implementation");
}

OptimizerImpl optimizer_impl_for(const TrainingConfig& t, Strategy s) {
  if (!t.optimizer_impl_defaulted) return t.optimizer_impl;
  const bool deepspeed = s == Strategy::kZero1 || s == Strategy::kZero2 || s == Strategy::kZero3;
  const bool adam = t.optimizer == Optimizer::kAdam || t.optimizer == Optimizer::kAdamW;
  return deepspeed && adam ? OptimizerImpl::kFused : OptimizerImpl::kForeach;
}

const char* strategy_name(Strategy s) {
  switch (s) {
    case Strategy::kDdp:
      return "ddp";
    case Strategy::kZero1:
      return "zero1";
    case Strategy::kZero2:
      return "zero2";
    case Strategy::kZero3:
      return "zero3";
    case Strategy::kFsdpFullShard:
      return "fsdp_full_shard";
    case Strategy::kFsdpShardGradOp:
      return "fsdp_shard_grad_op";
    case Strategy::kFsdpHybrid:
      return "fsdp_hybrid";
    case Strategy::kFsdp2:
      return "fsdp2";
  }
  DDPSIM_ASSERT(false, "unknown strategy");
}

const char* fsdp2_units_name(Fsdp2Units u) {
  switch (u) {
    case Fsdp2Units::kBlocks:
      return "blocks";
    case Fsdp2Units::kLayers:
      return "layers";
    case Fsdp2Units::kModel:
      return "model";
    case Fsdp2Units::kTorchtitan:
      return "torchtitan";
  }
  return "?";
}

const char* fsdp_prefetch_name(FsdpPrefetch p) {
  switch (p) {
    case FsdpPrefetch::kBackwardPre:
      return "backward_pre";
    case FsdpPrefetch::kBackwardPost:
      return "backward_post";
    case FsdpPrefetch::kNone:
      return "none";
  }
  return "?";
}

const char* algorithm_name(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::kAuto:
      return "auto";
    case CollectiveAlgorithm::kRing:
      return "ring";
    case CollectiveAlgorithm::kTree:
      return "tree";
    case CollectiveAlgorithm::kHierarchical:
      return "hierarchical";
    case CollectiveAlgorithm::kNvls:
      return "nvls";
    case CollectiveAlgorithm::kNvlsTree:
      return "nvls_tree";
    case CollectiveAlgorithm::kPat:
      return "pat";
  }
  DDPSIM_ASSERT(false, "unknown algorithm");
}

const char* protocol_name(CollectiveProtocol p) {
  switch (p) {
    case CollectiveProtocol::kAuto:
      return "auto";
    case CollectiveProtocol::kLL:
      return "ll";
    case CollectiveProtocol::kLL128:
      return "ll128";
    case CollectiveProtocol::kSimple:
      return "simple";
  }
  DDPSIM_ASSERT(false, "unknown protocol");
}

std::optional<CollectiveAlgorithm> algorithm_from_name(const std::string& name) {
  for (CollectiveAlgorithm a :
       {CollectiveAlgorithm::kAuto, CollectiveAlgorithm::kRing, CollectiveAlgorithm::kTree,
        CollectiveAlgorithm::kHierarchical, CollectiveAlgorithm::kNvls,
        CollectiveAlgorithm::kNvlsTree, CollectiveAlgorithm::kPat}) {
    if (name == algorithm_name(a)) return a;
  }
  return std::nullopt;
}

std::optional<CollectiveProtocol> protocol_from_name(const std::string& name) {
  for (CollectiveProtocol p : {CollectiveProtocol::kAuto, CollectiveProtocol::kLL,
                               CollectiveProtocol::kLL128, CollectiveProtocol::kSimple}) {
    if (name == protocol_name(p)) return p;
  }
  return std::nullopt;
}

namespace {
std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}
}  // namespace

CollectiveAlgorithm algorithm_from_nccl_env(std::string text) {
  text = lowercase(std::move(text));
  if (text == "nvlstree") text = "nvls_tree";
  return algorithm_from_name(text).value_or(CollectiveAlgorithm::kAuto);
}

CollectiveProtocol protocol_from_nccl_env(std::string text) {
  return protocol_from_name(lowercase(std::move(text))).value_or(CollectiveProtocol::kAuto);
}

DType compute_dtype(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return DType::kFp32;
    case Precision::kAmpBf16:
    case Precision::kBf16:
      return DType::kBf16;
    case Precision::kAmpFp16:
    case Precision::kFp16:
      return DType::kFp16;
  }
  DDPSIM_ASSERT(false, "unknown precision");
}

DType grad_dtype(Precision p) {
  switch (p) {
    case Precision::kFp32:
    case Precision::kAmpBf16:
    case Precision::kAmpFp16:
      return DType::kFp32;
    case Precision::kBf16:
      return DType::kBf16;
    case Precision::kFp16:
      return DType::kFp16;
  }
  DDPSIM_ASSERT(false, "unknown precision");
}

using detail::get_or_default;

namespace {

Scenario parse_with(const json& doc, const std::string& file,
                    std::shared_ptr<const Workload> reuse_workload, const std::string& reuse_label,
                    const HardwareSpec* reuse_hardware = nullptr);

// The keys of a plan.hardware entry that are not hardware keys.
constexpr const char* kPlanSystemKeys[] = {"gpu_hour_usd", "min_gpus", "max_gpus"};

json hardware_of_system(const json& entry) {
  json hw = entry;
  for (const char* k : kPlanSystemKeys) hw.erase(k);
  return hw;
}

// Each plan.hardware entry as a scenario of its own: `doc` with that hardware, its price and GPU
// range, one node as cluster.gpus (every size is a shape) and the node size of that hardware,
// parsed like any scenario (the workload reused). An error in it names /plan/hardware/i.
std::vector<PlanSystem> parse_plan_systems(const json& doc, const std::string& file,
                                           const Scenario& s, bool price_from_first) {
  std::vector<PlanSystem> out;
  const json& entries = doc.at("plan").at("hardware");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string base = "/plan/hardware/" + std::to_string(i);
    const json& entry = entries[i];
    json d = doc;
    d["hardware"] = hardware_of_system(entry);
    d["plan"].erase("hardware");
    // Its own price, else the file's pricing (not one taken from the first entry).
    if (entry.contains("gpu_hour_usd")) {
      d["pricing"]["gpu_hour_usd"] = entry.at("gpu_hour_usd");
    } else if (price_from_first) {
      d.erase("pricing");
    }
    for (const char* k : {"min_gpus", "max_gpus"}) {
      if (entry.contains(k)) d["plan"][k] = entry.at(k);
    }
    PlanSystem sys;
    try {
      const HardwareSpec hw = resolve_hardware(d.at("hardware"), file, base);
      d["cluster"].erase("gpus_per_node");
      d["cluster"]["gpus"] = hw.gpus_per_node;
      auto sc = std::make_shared<Scenario>(parse_with(d, file, s.workload, s.model_label));
      sc->sweep.clear();
      sys.label = entry.contains("preset") ? entry.at("preset").get<std::string>() : hw.name;
      sys.scenario = std::move(sc);
    } catch (const InputError& e) {
      if (e.pointer().rfind(base, 0) == 0) throw;
      std::string pointer = e.pointer();
      std::string expected = e.expected();
      if (pointer.rfind("/hardware", 0) == 0) {
        pointer = base + pointer.substr(9);
      } else if (pointer == "/pricing/gpu_hour_usd" || pointer == "/plan/objective" ||
                 pointer == "/plan/budget_usd") {
        pointer = base + "/gpu_hour_usd";
      } else if (pointer.rfind("/plan/min_gpus", 0) == 0 ||
                 pointer.rfind("/plan/max_gpus", 0) == 0) {
        pointer = base + pointer.substr(5);
      } else {
        expected += " (with plan.hardware[" + std::to_string(i) + "])";
      }
      throw InputError(file, pointer, expected, e.got());
    }
    out.push_back(std::move(sys));
  }
  // The candidates of every system are predicted one by one: the same bound as one system's.
  double total = 0;
  for (const PlanSystem& sys : out) total += sys.scenario->plan.candidate_count();
  if (total > 1e6) {
    throw InputError(file, "/plan/hardware", "at most 1,000,000 candidates over all systems",
                     fmt::format("{:.0f}", total));
  }
  return out;
}

// reuse_workload / reuse_hardware: what the caller already built from this document's own
// "model" / "hardware" section (a sweep whose axes leave it alone), used as is.
Scenario parse_with(const json& doc_in, const std::string& file,
                    std::shared_ptr<const Workload> reuse_workload, const std::string& reuse_label,
                    const HardwareSpec* reuse_hardware) {
  // A buyer's file may name its systems under plan.hardware only: the first is the hardware.
  const json* docp = &doc_in;
  json with_hardware;
  bool price_from_first = false;
  if (!doc_in.contains("hardware") && doc_in.contains("plan") && doc_in.at("plan").is_object() &&
      doc_in.at("plan").contains("hardware") && doc_in.at("plan").at("hardware").is_array() &&
      !doc_in.at("plan").at("hardware").empty() &&
      doc_in.at("plan").at("hardware").at(0).is_object()) {
    with_hardware = doc_in;
    const json& first = doc_in.at("plan").at("hardware").at(0);
    with_hardware["hardware"] = hardware_of_system(first);
    if (first.contains("gpu_hour_usd") && !doc_in.contains("pricing")) {
      with_hardware["pricing"]["gpu_hour_usd"] = first.at("gpu_hour_usd");
      price_from_first = true;
    }
    docp = &with_hardware;
  }
  const json& doc = *docp;
  validate(doc, scenario_keys(), file);
  Scenario s;
  s.file = file;
  s.doc = doc;
  s.name = get_or_default<std::string>(doc, "/name");
  if (reuse_workload) {
    s.workload = std::move(reuse_workload);
    s.model_label = reuse_label;
  } else {
    s.workload = detail::build_workload(doc.at("model"), file, s.model_label);
  }
  s.hardware = reuse_hardware != nullptr ? *reuse_hardware
                                         : resolve_hardware(doc.at("hardware"), file, "/hardware");
  // In this order: each section may read what the ones before it filled in.
  detail::parse_cluster(doc.at("cluster"), file, s);
  detail::parse_training(doc.at("training"), file, s);
  detail::parse_parallelism(doc.value("parallelism", json::object()), file, s);
  detail::parse_simulation(doc.value("simulation", json::object()), file, s);
  if (doc.contains("pricing") && doc.at("pricing").contains("gpu_hour_usd")) {
    s.gpu_hour_usd = doc.at("pricing").at("gpu_hour_usd").get<double>();
  }
  s.reliability = parse_reliability(doc, file);
  if (s.reliability) s.reliability->checkpoint.staging_bytes_per_s = s.hardware.pcie.bandwidth;
  detail::parse_plan(doc, file, s);
  detail::parse_sweep(doc, file, s);
  if (doc.contains("plan") && doc.at("plan").contains("hardware")) {
    s.plan.systems = parse_plan_systems(doc, file, s, price_from_first);
  }
  return s;
}

}  // namespace

namespace {

// A parallelism.fsdp2 section that nothing reads: the strategy is not fsdp2 and neither a sweep
// over parallelism.strategy nor the plan tries fsdp2. It used to be ignored silently, invalid
// values included (a mesh for another cluster, a typo'd strategy beside a careful section).
void refuse_unread_fsdp2_section(const json& doc, const std::string& file, const Scenario& s) {
  const auto p = doc.find("parallelism");
  if (p == doc.end() || !p->is_object() || !p->contains("fsdp2")) return;
  if (s.parallelism.strategy == Strategy::kFsdp2) return;
  for (const SweepAxis& a : s.sweep) {
    if (a.key != "parallelism.strategy") continue;
    for (const json& v : a.values) {
      if (v == "fsdp2") return;
    }
  }
  for (Strategy st : s.plan.strategy) {
    if (st == Strategy::kFsdp2) return;
  }
  throw InputError(file, "/parallelism/fsdp2",
                   "no fsdp2 section unless parallelism.strategy is fsdp2 (or a sweep or the "
                   "plan tries fsdp2)",
                   std::string("a section beside strategy \"") +
                       strategy_name(s.parallelism.strategy) + "\", which never reads it");
}

}  // namespace

Scenario parse_scenario(const json& doc, const std::string& file) {
  Scenario s = parse_with(doc, file, nullptr, "");
  refuse_unread_fsdp2_section(doc, file, s);
  return s;
}

Scenario load_scenario(const std::string& path) {
  return parse_scenario(read_json_file(path), path);
}

void use_profile_as_hardware(nlohmann::json& doc, const std::string& profile_path) {
  const std::string abs = std::filesystem::absolute(profile_path).lexically_normal().string();
  const Profile p = Profile::load(abs);
  // A collectives-only profile (an imported nccl-tests log of the user's cluster) sits beside
  // the scenario's system preset and replaces only its collectives.
  const bool collectives_only =
      p.gemms().empty() && p.layer_times().empty() && p.document().contains("collectives");
  if (collectives_only && doc.contains("hardware") && doc.at("hardware").is_object() &&
      doc.at("hardware").contains("preset") &&
      doc.at("hardware").at("preset") != nlohmann::json("this-machine")) {
    doc["hardware"]["profile"] = abs;
    return;
  }
  doc["hardware"] = {{"profile", abs}};
  if (p.ranks() < 2) {
    doc["hardware"]["intra_node"] = {{"name", "none (one-rank profile)"},
                                     {"kind", "intra_node"},
                                     {"bandwidth_gbytes_per_s", 1.0},
                                     {"latency_us", 1.0}};
    doc["hardware"]["inter_node"] = {{"name", "none (one-rank profile)"},
                                     {"kind", "nic"},
                                     {"bandwidth_gbps", 8.0},
                                     {"latency_us", 1.0}};
  }
}

Scenario load_scenario(const std::string& path, const std::string& profile_path) {
  if (profile_path.empty()) return load_scenario(path);
  nlohmann::json doc = read_json_file(path);
  use_profile_as_hardware(doc, profile_path);
  return parse_scenario(doc, path);
}

std::vector<Scenario> expand_sweep(const Scenario& s) {
  if (s.sweep.empty()) return {s};
  // In double: the product of a few 1e5-element axes overflows size_t. 10,000 points: each is a
  // full prediction with its bucket list in the JSON (tests/reliability/extremes.json).
  double total = 1;
  for (const SweepAxis& a : s.sweep) total *= static_cast<double>(a.values.size());
  if (total > 10000) {
    throw InputError(s.file, "/sweep", "at most 10,000 points in the Cartesian product",
                     fmt::format("{:.0f}", total));
  }
  bool touches_model = false, touches_hardware = false;
  for (const SweepAxis& a : s.sweep) {
    touches_model |= a.key.rfind("model.", 0) == 0;
    touches_hardware |= a.key == "hardware" || a.key.rfind("hardware.", 0) == 0;
  }

  // Each point starts from the document without its sweep: copying the whole document (the
  // sweep's values included) per point made a sweep quadratic in its points (10,000 values on
  // one axis: 10^8 JSON values copied and freed).
  json base = s.doc;
  base.erase("sweep");
  std::vector<json::json_pointer> targets;
  targets.reserve(s.sweep.size());
  for (const SweepAxis& axis : s.sweep) {
    std::string target = "/" + axis.key;
    std::replace(target.begin(), target.end(), '.', '/');
    targets.emplace_back(target);
  }
  // The hardware section as resolved (presets read and merged, validated) before the cluster
  // section adjusts it: the same for every point whose axes leave "hardware" alone, so it is
  // resolved once rather than per point (it was most of a point's parsing time).
  std::optional<HardwareSpec> hardware;
  if (!touches_hardware && base.contains("hardware")) {
    hardware = resolve_hardware(base.at("hardware"), s.file, "/hardware");
  }
  std::vector<Scenario> out;
  out.reserve(total);
  std::vector<std::size_t> idx(s.sweep.size(), 0);
  for (std::size_t n = 0; n < total; ++n) {
    json doc = base;
    json point = json::object();
    for (std::size_t a = 0; a < s.sweep.size(); ++a) {
      const SweepAxis& axis = s.sweep[a];
      doc[targets[a]] = axis.values[idx[a]];
      point[axis.key] = axis.values[idx[a]];
    }
    try {
      const HardwareSpec* hw = hardware ? &*hardware : nullptr;
      Scenario p = touches_model ? parse_with(doc, s.file, nullptr, "", hw)
                                 : parse_with(doc, s.file, s.workload, s.model_label, hw);
      p.point = point;
      p.sweep.clear();
      out.push_back(std::move(p));
    } catch (const InputError& e) {
      std::string where;
      for (std::size_t a = 0; a < s.sweep.size(); ++a) {
        where +=
            (where.empty() ? "" : ", ") + s.sweep[a].key + "=" + s.sweep[a].values[idx[a]].dump();
      }
      std::string msg = e.what();
      const auto colon = msg.find(": ");
      if (colon != std::string::npos) msg = msg.substr(colon + 2);
      // Name the axis value that made the point invalid when the error sits at that key.
      std::string pointer = "/sweep";
      for (std::size_t a = 0; a < s.sweep.size(); ++a) {
        std::string target = "/" + s.sweep[a].key;
        std::replace(target.begin(), target.end(), '.', '/');
        if (e.pointer() == target) {
          pointer = "/sweep/" + escape_pointer_token(s.sweep[a].key) + "/" + std::to_string(idx[a]);
        }
      }
      throw InputError(s.file, pointer, "every sweep point to be a valid scenario",
                       "the point " + where + " fails: " + msg);
    }
    for (std::size_t a = s.sweep.size(); a-- > 0;) {
      if (++idx[a] < s.sweep[a].values.size()) break;
      idx[a] = 0;
    }
  }
  return out;
}

}  // namespace ddpsim::model
