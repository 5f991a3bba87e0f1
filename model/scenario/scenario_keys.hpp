// scenario_keys.hpp: the table of every scenario key (docs/DESIGN.md fixes the keys).
//
// One KeyTable drives everything a key's description is used for: validation of scenario files
// (parse_scenario) and, re-rooted, of the hardware preset files (scenarios/hardware/**), the
// defaults the parser applies to keys left out, `ddpsim schema` (Markdown or JSON Schema) and
// docs/scenario-keys.md. Each row gives the JSON pointer ("/training/per_gpu_batch"; "*" an
// array element, "{}" any object key), type, unit, default, allowed values or range, and help.
//
//   const KeySpec* k = scenario_keys().find("/parallelism/bucket_cap_mb");  // default 25 (MiB)
//   std::cout << to_markdown(scenario_keys());
#pragma once

#include "model/schema.hpp"

namespace ddpsim::model {

/// The table of every scenario key (type, unit, default, allowed values, range, help); built
/// once, on first use, and never changed.
const KeyTable& scenario_keys();

}  // namespace ddpsim::model
