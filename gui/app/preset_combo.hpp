// preset_combo.hpp: a combo box of presets whose list shows each one's facts beside its name (the
// buyer's review, defect 15: the system list gave names only). The popup is a table (name, then
// one column per fact); the closed box and currentText() stay the preset's name, so choosing
// and finding a preset is unchanged.
//
//   setPresetRows(combo, {"system", "GPUs", "memory", "network"},
//                 {{"dgx-h100", "8 x h100-sxm", "80 GiB", "8 x 400 Gb/s ib-ndr-400"}});
//   addSystemPresets(combo);   // the same for every hardware preset of the data folder
#pragma once

#include <QList>
#include <QStringList>

class QComboBox;

namespace ddpsim::gui {

/// Appends one row per entry of `rows` (its first cell the preset's name) to `combo` and makes
/// its popup a table headed `headers`. Rows already in the combo (e.g. "(not a preset)") stay.
void setPresetRows(QComboBox* combo, const QStringList& headers, const QList<QStringList>& rows);

/// The data folder's model presets with their parameters and tokens per sample
/// (preset_catalog.hpp).
void addModelPresets(QComboBox* combo);
/// The data folder's hardware presets with their GPUs per node, memory per GPU and network.
void addSystemPresets(QComboBox* combo);

}  // namespace ddpsim::gui
