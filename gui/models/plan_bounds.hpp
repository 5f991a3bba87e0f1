// plan_bounds.hpp: the GPU counts the planner may recommend, bounded by what the user sweeps
// (issue 41 item 3). `ddpsim plan`'s default candidates are the powers of two up to 4096, so
// default.json, which sweeps 1 to 1024 GPUs and has no plan section, was recommended 4096 GPUs.
// The window's planner reads the document with the panel's max GPUs as plan.max_gpus (on
// opening: the largest GPU count of the file's sweep, defaultMaxGpus) unless the file bounds the
// sizes itself; the user's document is not changed by that (moving the slider writes
// plan.max_gpus into it, an edit like any other).
//
//   json forPlanner = planDocument(doc, 1024);   // plan.max_gpus 1024 when the file has none
#pragma once

#include <nlohmann/json.hpp>

namespace ddpsim::gui {

/// `doc` with plan.max_gpus set to `maxGpus` when the document gives neither plan.max_gpus nor
/// plan.gpus (and plan.min_gpus, if given, is at most `maxGpus`), and with every plan.hardware
/// entry's max_gpus at most the resulting plan.max_gpus. `doc` unchanged when `maxGpus` < 1 or
/// when `doc` is not an object.
nlohmann::json planDocument(const nlohmann::json& doc, int maxGpus);

}  // namespace ddpsim::gui
