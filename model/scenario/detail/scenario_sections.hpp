// detail/scenario_sections.hpp: the parsers of a scenario's sections, which parse_scenario
// (model/scenario/scenario.cpp) runs in the order listed here. Not part of the public API.
//
// Each takes its section of a document already validated against scenario_keys() (so types,
// ranges and allowed values hold), fills its part of `s`, and throws InputError naming `file`
// and the JSON pointer for what one key's row cannot check: combinations of keys and limits
// that depend on another section. A parser reads what the earlier ones filled in (training
// reads s.cluster and s.hardware, the plan nearly everything), so the order is part of the
// contract.
//
//   s.workload = build_workload(doc.at("model"), file, s.model_label);  // model_section.hpp
//   s.hardware = resolve_hardware(doc.at("hardware"), file, "/hardware");
//   parse_cluster(doc.at("cluster"), file, s);
//   parse_training(doc.at("training"), file, s);
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "model/scenario/scenario.hpp"
#include "model/workload/workload.hpp"

namespace ddpsim::model::detail {

/// "/cluster"; needs s.hardware (gpus_per_node defaults to the hardware's, which it then sets).
void parse_cluster(const nlohmann::json& cluster, const std::string& file, Scenario& s);
/// "/training"; needs s.cluster and s.hardware (the GPU must run the precision).
void parse_training(const nlohmann::json& training, const std::string& file, Scenario& s);
/// "/parallelism" (an empty object when absent) and the combinations with training, cluster
/// and hardware that cannot run.
void parse_parallelism(const nlohmann::json& parallelism, const std::string& file, Scenario& s);
/// "/simulation" (an empty object when absent); needs s.parallelism.
void parse_simulation(const nlohmann::json& simulation, const std::string& file, Scenario& s);
/// "/plan" of the whole document (defaults when absent); needs every section above and
/// s.gpu_hour_usd.
void parse_plan(const nlohmann::json& doc, const std::string& file, Scenario& s);
/// "/sweep" of the whole document (nothing when absent): each axis names a scalar key and each
/// value is validated against that key's row; needs s.training.
void parse_sweep(const nlohmann::json& doc, const std::string& file, Scenario& s);

}  // namespace ddpsim::model::detail
