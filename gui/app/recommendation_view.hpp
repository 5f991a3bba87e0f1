// recommendation_view.hpp: the planner's answer as a purchase decision (issue 19 item 3). The
// chosen configuration in words (GPUs, strategy, micro-batch x accumulation, bucket cap, hook,
// hours, cost, GPU-hours, what limits it), what happened to the other candidates (memory,
// deadline, budget, dominated), the Pareto front as a table ordered by the objective with each
// point against the chosen one, and a time-vs-GPU-hours (or cost) chart of the front. A
// double-click on a row, or a click on a point of the chart, asks to load that configuration.
// The deadline, budget and objective are edited in the scenario panel ("Plan" group). With
// several systems (plan.hardware) each one's best option is listed (systems_table.hpp), and
// every option carries the error band of its class. While the scenario does not validate a
// "Not updated" banner says the answer shown is the last valid one (issue 41 item 3).
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

class StaleBanner;
class SystemsTable;

class RecommendationView : public QWidget {
  Q_OBJECT

 public:
  explicit RecommendationView(QWidget* parent = nullptr);

  void setPlan(const PlanView& plan);
  const PlanView& plan() const { return m_plan; }
  /// The front in table order (the objective's metric, best first).
  const std::vector<PlanPointView>& rows() const { return m_rows; }
  QTableWidget* table() const { return m_table; }
  /// The table's column headed `header` ("time", "cost", "vs chosen / limited by", ...), -1
  /// when none.
  int columnOf(const QString& header) const;
  SystemsTable* systemsTable() const { return m_systems; }
  /// Marks the view as showing the last valid plan (the scenario does not validate now, at
  /// `pointer`), or clears the mark; a stale view does not load its points.
  void setStale(bool stale, const QString& pointer = {});
  bool isStale() const;
  StaleBanner* staleBanner() const { return m_stale; }
  QChartView* chartView() const { return m_chart; }
  QString chosenText() const;
  QString summaryText() const;
  /// The chosen option's notes (what the model assumed and why it costs what it does), shown as
  /// a list under the summary; "" without notes.
  QString notesText() const;
  /// Asks to load the front point of table row `row` (what a double-click does).
  void requestLoad(int row);
  /// Asks to load the chosen option (what a click on the chart's chosen square does).
  void requestLoadChosen();

 signals:
  void loadRequested(const ddpsim::gui::PlanPointView& point);

 private:
  void buildChart();

  PlanView m_plan;
  std::vector<PlanPointView> m_rows;
  StaleBanner* m_stale = nullptr;
  QLabel* m_chosen = nullptr;
  QLabel* m_summary = nullptr;
  QLabel* m_notes = nullptr;
  QTableWidget* m_table = nullptr;
  SystemsTable* m_systems = nullptr;
  QChartView* m_chart = nullptr;
};

}  // namespace ddpsim::gui
