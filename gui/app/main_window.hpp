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
#include <QMessageBox>
#include <functional>
#include <memory>

#include "gui/app/charts.hpp"
#include "gui/models/measured.hpp"
#include "gui/models/results_table_model.hpp"
#include "gui/models/scenario_document.hpp"
#include "gui/models/sweep_runner.hpp"

class QChartView;
class QCheckBox;
class QLabel;
class QMenu;
class QPushButton;
class QTabWidget;
class QTableView;
class QTableWidget;

namespace ddpsim::gui {

class ElidedLabel;
class RecommendationView;
class ScenarioPanel;
class StaleBanner;
class SystemsPicker;
class SystemsTable;
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
  /// The Table tab's view of tableModel() (it hides the optional columns without values).
  QTableView* tableView() const { return m_tableView; }
  QTableWidget* compareTable() const { return m_compare; }
  /// The Compare tab's systems to tick, its button and the table of each system's best option.
  SystemsPicker* systemsPicker() const { return m_systemsPicker; }
  QPushButton* compareSystemsButton() const { return m_compareSystemsButton; }
  SystemsTable* compareSystemsTable() const { return m_compareSystems; }
  QTabWidget* tabs() const { return m_tabs; }
  RecommendationView* recommendationView() const { return m_recommend; }
  /// The "Not updated" banners over the Table and Compare tabs (issue 41 item 3; the charts'
  /// titles, the timeline and the Recommendation tab carry their own).
  StaleBanner* tableBanner() const { return m_tableBanner; }
  StaleBanner* compareBanner() const { return m_compareBanner; }
  /// The Step time tab's "log scale" switch (issue 19 item 8).
  QCheckBox* logStepBox() const { return m_logStep; }
  SweepResultPtr lastResult() const { return m_result; }
  /// Milliseconds from the latest edit (request), or redraw action (pin, clear pin, log scale),
  /// to the end of the redraw it caused.
  double lastRedrawMs() const { return m_lastRedrawMs; }
  QString statusText() const;

  /// Asks "save changes?" (issue 19 item 4): returns Save, Discard or Cancel. The default shows
  /// a QMessageBox; tests answer it themselves.
  using SavePrompt = std::function<QMessageBox::StandardButton(const QString& question)>;
  void setSavePrompt(SavePrompt prompt) { m_savePrompt = std::move(prompt); }
  /// Before the document is replaced or the window closes: true to go on (nothing unsaved, the
  /// user discarded, or saving succeeded), false to stay (cancelled, or the save failed).
  bool maybeSave();

  /// File > Open's folder: the open scenario's, else the scenarios folder, else the working
  /// directory.
  QString openDirectory() const;
  /// Picks the file File > Open opens, given the folder it starts in ("" to cancel). The
  /// default shows a QFileDialog; tests answer it themselves.
  using OpenChooser = std::function<QString(const QString& directory)>;
  void setOpenChooser(OpenChooser chooser) { m_openChooser = std::move(chooser); }
  /// File > Open recent: the files opened or saved from the menus, latest first (QSettings
  /// "recentFiles", at most 8). The command line adds its file too (main_gui.cpp).
  QStringList recentFiles() const;
  void addRecentFile(const QString& path);
  QMenu* recentMenu() const { return m_recentMenu; }
  /// Help > About's text: the version, what the planner does, where the scenarios are.
  QString aboutText() const;

 public slots:
  /// File > Open: asks for a file (starting in openDirectory()) and opens it.
  void chooseAndOpen();
  void pinCurrent();
  void clearPin();
  void requestSweep();
  void undo();
  void redo();

 signals:
  /// Emitted after every redraw with the edit-to-redraw latency.
  void redrawn(double milliseconds);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildUi();
  void buildMenus();  // main_window_menus.cpp
  void updateUndoActions();
  void rebuildRecentMenu();
  void exportCurrentChart(const QString& suffix);
  void onDocumentChanged();
  /// The user moved the max-GPUs slider: the GPU counts it draws become /sweep/cluster.gpus and
  /// the planner's largest size /plan/max_gpus, in one edit.
  void writeSweepRange(int maxGpus);
  /// Every view keeps the last valid result while the document does not validate: each says so
  /// (issue 19 item 5: the charts' titles and the timeline; issue 41 item 3: the
  /// Recommendation, Table and Compare tabs too).
  void markStale();
  void applyResult(const SweepResultPtr& result);
  /// Redraws the last result for `action` ("pin", ...), timed from now.
  void redrawFor(const QString& action);
  /// Loads a planner point's knobs into the document as one edit (one undo step).
  void loadPlanPoint(const PlanPointView& p);
  void updateCompare();
  /// The Compare tab's ticks: the document's plan.hardware systems and its current one.
  void refreshSystemsPicker();
  /// "Compare the ticked systems": they become plan.hardware with their prices (one edit).
  void compareSystems();
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
  RecommendationView* m_recommend = nullptr;
  QCheckBox* m_logStep = nullptr;
  QTableView* m_tableView = nullptr;
  StaleBanner* m_tableBanner = nullptr;
  StaleBanner* m_compareBanner = nullptr;
  QTableWidget* m_compare = nullptr;
  QLabel* m_compareLabel = nullptr;
  SystemsPicker* m_systemsPicker = nullptr;
  QPushButton* m_compareSystemsButton = nullptr;
  SystemsTable* m_compareSystems = nullptr;
  ElidedLabel* m_status = nullptr;
  QLabel* m_timing = nullptr;
  SweepResultPtr m_result;
  SweepResultPtr m_pinned;
  nlohmann::json m_pinnedDoc;
  QString m_pinnedLabel;
  std::vector<MeasuredPoint> m_measured;
  std::string m_measuredFor = "\x01";
  QElapsedTimer m_clock;
  qint64 m_requestNs = 0;
  QString m_trigger;  ///< what m_requestNs times: "edit", "pin", ...
  double m_lastRedrawMs = 0;
  SavePrompt m_savePrompt;
  OpenChooser m_openChooser;
  QMenu* m_recentMenu = nullptr;
  QAction* m_undoAction = nullptr;
  QAction* m_redoAction = nullptr;
};

}  // namespace ddpsim::gui
