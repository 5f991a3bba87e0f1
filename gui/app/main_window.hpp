// main_window.hpp: the planner window. A scenario panel (left) edits the document; every edit
// or slider move requests a sweep from the SweepRunner (off the UI thread, latest wins) and the
// result redraws the charts (step time, scaling, memory, time and cost, timeline), the table and
// the comparison with a pinned scenario.
//
//   MainWindow w;
//   w.openFile("scenarios/default.json");
//   w.show();
#pragma once

#include <QElapsedTimer>
#include <QMainWindow>
#include <memory>

#include "gui/app/charts.hpp"
#include "gui/models/measured.hpp"
#include "gui/models/results_table_model.hpp"
#include "gui/models/scenario_document.hpp"
#include "gui/models/sweep_runner.hpp"

class QChartView;
class QLabel;
class QTabWidget;
class QTableView;
class QTableWidget;

namespace ddpsim::gui {

class ScenarioPanel;
class TimelineView;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Loads a scenario file; on failure shows the message in the status bar and returns false.
  bool openFile(const QString& path);
  /// Saves the document (round trip: an unedited document is written as the value it was read).
  bool saveFile(const QString& path);
  /// Exports one chart (PNG or SVG by suffix) or the table (CSV).
  bool exportChart(ChartKind kind, const QString& path);
  bool exportTableCsv(const QString& path);

  ScenarioDocument* document() { return &m_doc; }
  ScenarioPanel* panel() const { return m_panel; }
  SweepRunner* runner() { return &m_runner; }
  QChartView* chartView(ChartKind kind) const;
  TimelineView* timelineView() const { return m_timeline; }
  QWidget* viewFor(ChartKind kind) const;
  ResultsTableModel* tableModel() { return &m_table; }
  QTableWidget* compareTable() const { return m_compare; }
  QTabWidget* tabs() const { return m_tabs; }
  SweepResultPtr lastResult() const { return m_result; }
  /// Milliseconds from the latest edit (request) to the end of the redraw it caused.
  double lastRedrawMs() const { return m_lastRedrawMs; }
  QString statusText() const;

 public slots:
  void pinCurrent();
  void clearPin();
  void requestSweep();

 signals:
  /// Emitted after every redraw with the edit-to-redraw latency.
  void redrawn(double milliseconds);

 private:
  void buildUi();
  void buildMenus();
  void onDocumentChanged();
  void applyResult(const SweepResultPtr& result);
  void updateCompare();
  void updateTitle();
  void showStatus(const QString& text, bool error);
  QString currentChartFile(const QString& suffix) const;

  ScenarioDocument m_doc;
  SweepRunner m_runner;
  ResultsTableModel m_table;
  ScenarioPanel* m_panel = nullptr;
  QTabWidget* m_tabs = nullptr;
  QChartView* m_views[4] = {};
  TimelineView* m_timeline = nullptr;
  QTableView* m_tableView = nullptr;
  QTableWidget* m_compare = nullptr;
  QLabel* m_compareLabel = nullptr;
  QLabel* m_status = nullptr;
  QLabel* m_timing = nullptr;
  SweepResultPtr m_result;
  SweepResultPtr m_pinned;
  nlohmann::json m_pinnedDoc;
  QString m_pinnedLabel;
  std::vector<MeasuredPoint> m_measured;
  std::string m_measuredFor = "\x01";
  QElapsedTimer m_clock;
  qint64 m_requestNs = 0;
  double m_lastRedrawMs = 0;
};

}  // namespace ddpsim::gui
