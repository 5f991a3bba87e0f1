// systems_picker.hpp: the Compare tab's list of systems to compare for the same job (issue 41
// item 3): every hardware preset with its GPU and a price per GPU-hour the user can type; the
// current system and the document's plan.hardware systems start ticked. The window writes the
// ticked ones as plan.hardware (gui/models/compare_systems.hpp) when "Compare" is pressed.
//
//   SystemsPicker p;
//   p.setSystems(hardwarePresets(), {"dgx-h100"}, book.prices());
//   p.setChecked("hgx-h200", true);
//   p.checkedSystems();   // {"dgx-h100", "hgx-h200"}
#pragma once

#include <QTableWidget>
#include <map>
#include <string>
#include <vector>

namespace ddpsim::gui {

/// A hardware preset and its GPU ("dgx-h100", "h100-sxm"), from the data folder's hardware/.
struct HardwarePreset {
  std::string name, gpu;
};
/// Every hardware preset, sorted by name (empty without a data folder).
std::vector<HardwarePreset> hardwarePresets();

class SystemsPicker : public QTableWidget {
  Q_OBJECT

 public:
  explicit SystemsPicker(QWidget* parent = nullptr);

  /// One row per preset; `checked` ticked; the price column from `prices` (empty: none).
  void setSystems(const std::vector<HardwarePreset>& presets,
                  const std::vector<std::string>& checked,
                  const std::map<std::string, double>& prices);
  void setChecked(const std::string& system, bool on);
  /// The ticked systems, in row order.
  std::vector<std::string> checkedSystems() const;
  /// The prices typed or shown, per system (rows with no valid positive number left out).
  std::map<std::string, double> prices() const;
  /// The row of `system`, -1 when absent.
  int rowOf(const std::string& system) const;
};

}  // namespace ddpsim::gui
