// systems_table.hpp: the buyer's comparison in the Recommendation tab (issue 41 item 3): one row
// per system the planner searched (plan.hardware, or the scenario's own hardware) with its best
// option under the objective and the constraints: GPUs, strategy, time, cost, cost per million
// tokens, MFU, tokens/s/GPU, memory headroom and the error band of its class, and whether it is
// the chosen one or within the error band of it (the model cannot tell the two apart). The
// Recommendation tab and the Compare tab (systems ticked there) both show it.
//
//   SystemsTable t;
//   t.setPlan(result.plan);   // rows: plan.systems in plan.hardware's order
#pragma once

#include <QTableWidget>

#include "gui/models/sweep_engine.hpp"

namespace ddpsim::gui {

class SystemsTable : public QTableWidget {
  Q_OBJECT

 public:
  explicit SystemsTable(QWidget* parent = nullptr);

  void setPlan(const PlanView& plan);
};

/// "median ±4.7%, max 12% (7 runs; gpu and size)"; "" without a band.
QString errorBandText(const std::optional<ErrorBandView>& band);

}  // namespace ddpsim::gui
