// scenario_subject.hpp: what a scenario document predicts, in a few words, read from the
// document as it is now (issue 41 item 3: the window title kept the file's `name`, "GPT-2 XL on
// DGX H100", after the system was switched to a B200). Cheap (no parsing or preset files), so
// it follows every edit, valid or not.
//
//   scenarioSubject(doc);   // "gpt2-xl on dgx-b200", "llama-3-70b on dgx-h100", "MLP 1024-4096"
#pragma once

#include <QString>
#include <nlohmann/json.hpp>

namespace ddpsim::gui {

/// "<model> on <system>": the model preset, the HF config's or model file's name, or the MLP's
/// widths; the hardware preset (plan.hardware's first for a file without /hardware), its name
/// or its profile's file name. Parts the document lacks are left out ("" for neither).
QString scenarioSubject(const nlohmann::json& doc);
/// The model part alone ("gpt2-xl", "config", "MLP 1024-4096"); "" without one.
QString scenarioModelName(const nlohmann::json& doc);

}  // namespace ddpsim::gui
