// compare_systems.hpp: the Compare tab's "which system for this job?" (issue 41 item 3: H100 or
// H200, how many, what cost, side by side in at most three actions). The systems ticked there
// become the document's plan.hardware, each with its price, so the planner searches each one for
// the same job and the systems table shows each system's best option; the document's own
// /hardware (the charts' system) stays.
//
//   json next = withComparedSystems(doc, {"dgx-h100", "hgx-h200"}, {{"dgx-h100", 2.5}});
//   comparedSystems(next);   // {"dgx-h100", "hgx-h200"}
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ddpsim::gui {

/// The hardware presets plan.hardware lists, in order (entries without a preset are left out);
/// empty when the document compares nothing.
std::vector<std::string> comparedSystems(const nlohmann::json& doc);

/// `doc` with plan.hardware one entry per system of `systems` (in that order, each once): its
/// preset and, from `prices`, its gpu_hour_usd; an entry the document already had for that preset
/// keeps its other keys (min_gpus, max_gpus). Fewer than two systems: plan.hardware is removed
/// (and a plan left empty with it). A document without /hardware gets its first compared system
/// as /hardware, so it stays a scenario the charts can draw. A non-object `doc` is returned as is.
nlohmann::json withComparedSystems(const nlohmann::json& doc,
                                   const std::vector<std::string>& systems,
                                   const std::map<std::string, double>& prices);

}  // namespace ddpsim::gui
