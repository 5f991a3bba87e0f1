// detail/section_parsing.hpp (internal to model/scenario/): the value parsers several section
// parsers share (scenario_sections.cpp, plan_section.cpp). Their input is already validated
// against scenario_keys().
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

#include "model/error.hpp"
#include "model/scenario/scenario.hpp"

namespace ddpsim::model::detail {

/// A validated comm_hook text ("none", "fp16", "bf16", "powersgd:R", "topk:F").
CommHook parse_comm_hook(const std::string& text);

/// An activation_checkpointing value at `base` (training's or a plan candidate's): false, true,
/// or {"mode", "option"}; InputError for an option its mode does not take or lacks.
ActivationCheckpointing parse_checkpointing(const std::string& file, const nlohmann::json& v,
                                            const std::string& base);

/// The enum whose name() is `text` (validated against the key's allowed values).
template <typename E>
E parse_enum(const std::string& text, std::initializer_list<E> values, const char* (*name)(E)) {
  for (E v : values) {
    if (text == name(v)) return v;
  }
  DDPSIM_ASSERT(false, "validated enum value not found: " + text);
}

}  // namespace ddpsim::model::detail
