// recommendation_view.hpp: the planner's answer as a purchase decision (issue 19 item 3). The
// chosen configuration in words (GPUs, strategy, micro-batch x accumulation, bucket cap, hook,
// hours, cost, GPU-hours, what limits it), what happened to the other candidates (memory,
// deadline, budget, dominated), the Pareto front as a table ordered by the objective with each
// point against the chosen one, and a time-vs-GPU-hours (or cost) chart of the front. A
// double-click on a row, or a click on a point of the chart, asks to load that configuration.
// The deadline, budget and objective are edited in the scenario panel ("Plan" group).
//
//   RecommendationView v;
//   v.setPlan(result.plan);
//   connect(&v, &RecommendationView::loadRequested, ...);   // a PlanPointView
#pragma once

#include <QWidget>

#include "gui/models/sweep_engine.hpp"

class QChartView;
class QLabel;
class QTableWidget;

namespace ddpsim::gui {

class RecommendationView : public QWidget {
  Q_OBJECT

 public:
  explicit RecommendationView(QWidget* parent = nullptr);

  void setPlan(const PlanView& plan);
  const PlanView& plan() const { return m_plan; }
  /// The front in table order (the objective's metric, best first).
  const std::vector<PlanPointView>& rows() const { return m_rows; }
  QTableWidget* table() const { return m_table; }
  QChartView* chartView() const { return m_chart; }
  QString chosenText() const;
  QString summaryText() const;
  /// Asks to load the front point of table row `row` (what a double-click does).
  void requestLoad(int row);

 signals:
  void loadRequested(const ddpsim::gui::PlanPointView& point);

 private:
  void buildChart();

  PlanView m_plan;
  std::vector<PlanPointView> m_rows;
  QLabel* m_chosen = nullptr;
  QLabel* m_summary = nullptr;
  QTableWidget* m_table = nullptr;
  QChartView* m_chart = nullptr;
};

}  // namespace ddpsim::gui
