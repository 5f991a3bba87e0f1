// detail/reliability_keys.hpp: the rows of a scenario's "reliability" and "pricing" sections
// (failures, checkpoints and what GPU time costs). Not part of the public API.
#pragma once

#include <vector>

#include "model/schema.hpp"

namespace ddpsim::model::detail {

/// Appends the rows of "/reliability" and "/pricing".
void add_reliability_keys(std::vector<KeySpec>& t);

}  // namespace ddpsim::model::detail
