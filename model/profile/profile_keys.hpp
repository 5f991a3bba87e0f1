// profile_keys.hpp: the key table of the calibration profile format ("ddpsim-profile",
// version 1; profile.hpp describes the sections).
//
// Every key a profile may hold, with its type, unit, range and help; only "context" is
// free-form. Profile::from_json validates a document against it, so an unknown key or a bad
// value is an InputError naming its JSON pointer.
//
//   validate(doc, profile_keys(), "results/profile-vm.json");
//   std::cout << to_markdown(profile_keys());
#pragma once

#include "model/schema.hpp"

namespace ddpsim::model {

/// The key table of the profile format (validation and documentation); built once, on first
/// use, and never changed.
const KeyTable& profile_keys();

}  // namespace ddpsim::model
