#include "gui/app/main_window.hpp"

#include <QAction>
#include <QApplication>
#include <QChartView>
#include <QCheckBox>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gui/app/chart_export.hpp"
#include "gui/app/elided_label.hpp"
#include "gui/app/hover_chart_view.hpp"
#include "gui/app/legend_fit.hpp"
#include "gui/app/recommendation_view.hpp"
#include "gui/app/scenario_panel.hpp"
#include "gui/app/stale_banner.hpp"
#include "gui/app/systems_picker.hpp"
#include "gui/app/systems_table.hpp"
#include "gui/app/timeline_view.hpp"
#include "gui/models/compare_systems.hpp"
#include "gui/models/price_book.hpp"
#include "gui/models/scenario_subject.hpp"
#include "gui/models/series.hpp"
#include "model/paths.hpp"

namespace ddpsim::gui {

namespace {

bool isHardwarePreset(const std::string& name) {
  try {
    return std::filesystem::exists(model::data_dir() / "hardware" / (name + ".json"));
  } catch (const std::exception&) {
    return false;  // no data folder
  }
}

constexpr ChartKind kChartKinds[] = {ChartKind::kStep, ChartKind::kScaling, ChartKind::kMemory,
                                     ChartKind::kCost};

const StepPoint* pointAt(const SweepResult& r, int gpus) {
  for (const StepPoint& p : r.points) {
    if (p.gpus == gpus && p.ok()) return &p;
  }
  return nullptr;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  m_clock.start();
  buildUi();
  buildMenus();
  connect(&m_doc, &ScenarioDocument::changed, this, &MainWindow::onDocumentChanged);
  connect(m_panel, &ScenarioPanel::maxGpusChanged, this, &MainWindow::requestSweep);
  connect(m_panel, &ScenarioPanel::maxGpusEdited, this, &MainWindow::writeSweepRange);
  connect(m_panel, &ScenarioPanel::inputRefused, this,
          [this](const QString& message) { showStatus(message, true); });
  connect(&m_runner, &SweepRunner::finished, this, &MainWindow::applyResult);
  connect(qApp, &QApplication::focusChanged, this, &MainWindow::updateUndoActions);
  updateTitle();
}

MainWindow::~MainWindow() {
  // The children go after this body, and the focus with them: no focusChanged to a half-gone
  // window.
  disconnect(qApp, nullptr, this, nullptr);
  m_runner.waitForDone();
}

void MainWindow::buildUi() {
  m_panel = new ScenarioPanel(&m_doc);
  auto* scroll = new QScrollArea;
  scroll->setWidget(m_panel);
  scroll->setWidgetResizable(true);
  scroll->setMinimumWidth(380);
  auto* dock = new QDockWidget(tr("Scenario"), this);
  dock->setObjectName(QStringLiteral("scenarioDock"));
  dock->setWidget(scroll);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  m_tabs = new QTabWidget;
  const char* titles[] = {"Step time", "Scaling", "Memory", "Time && cost"};
  for (int i = 0; i < 4; ++i) {
    auto* chart = new QChart;
    chart->setAnimationOptions(QChart::NoAnimation);
    m_views[i] = new HoverChartView(chart);
    m_views[i]->setRenderHint(QPainter::Antialiasing);
    m_views[i]->setObjectName(chartKindName(kChartKinds[i]) + QStringLiteral("Chart"));
    if (kChartKinds[i] != ChartKind::kStep) {
      m_tabs->addTab(m_views[i], tr(titles[i]));
      continue;
    }
    auto* page = new QWidget;
    auto* pl = new QVBoxLayout(page);
    pl->setContentsMargins(0, 0, 0, 0);
    m_logStep = new QCheckBox(tr("log scale (each component as its own line)"));
    m_logStep->setObjectName(QStringLiteral("logStep"));
    connect(m_logStep, &QCheckBox::toggled, this, [this] { redrawFor(tr("log-scale switch")); });
    pl->addWidget(m_logStep);
    pl->addWidget(m_views[i], 1);
    m_tabs->addTab(page, tr(titles[i]));
  }
  auto* timelinePage = new QWidget;
  auto* tl = new QVBoxLayout(timelinePage);
  auto* buttons = new QHBoxLayout;
  auto* zoomIn = new QPushButton(tr("Zoom in"));
  auto* zoomOut = new QPushButton(tr("Zoom out"));
  auto* reset = new QPushButton(tr("Whole step"));
  buttons->addWidget(zoomIn);
  buttons->addWidget(zoomOut);
  buttons->addWidget(reset);
  buttons->addWidget(new QLabel(tr("wheel: zoom at the cursor; drag: pan; double-click: reset")));
  buttons->addStretch(1);
  m_timeline = new TimelineView;
  m_timeline->setObjectName(QStringLiteral("timeline"));
  tl->addLayout(buttons);
  tl->addWidget(m_timeline, 1);
  connect(zoomIn, &QPushButton::clicked, m_timeline, &TimelineView::zoomIn);
  connect(zoomOut, &QPushButton::clicked, m_timeline, &TimelineView::zoomOut);
  connect(reset, &QPushButton::clicked, m_timeline, &TimelineView::resetZoom);
  m_tabs->addTab(timelinePage, tr("Timeline"));

  auto* tablePage = new QWidget;
  auto* tpl = new QVBoxLayout(tablePage);
  tpl->setContentsMargins(0, 0, 0, 0);
  m_tableBanner = new StaleBanner;
  m_tableView = new QTableView;
  m_tableView->setModel(&m_table);
  m_tableView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  tpl->addWidget(m_tableBanner);
  tpl->addWidget(m_tableView, 1);
  m_tabs->addTab(tablePage, tr("Table"));

  auto* comparePage = new QWidget;
  auto* cl = new QVBoxLayout(comparePage);
  // Which system for this job (issue 41 item 3): tick 2-4 systems, give their prices, press
  // Compare; the planner searches each for the same job and the table shows each one's best.
  auto* systemsLabel = new QLabel(
      tr("<b>Which system for this job?</b> Tick 2 to 4 systems, check their prices, then press "
         "Compare: each is planned for the same job (its own sizes, strategy and batch), and the "
         "table shows each one's best option."));
  systemsLabel->setWordWrap(true);
  m_systemsPicker = new SystemsPicker;
  m_compareSystemsButton = new QPushButton(tr("Compare the ticked systems"));
  m_compareSystemsButton->setObjectName(QStringLiteral("compareSystemsButton"));
  connect(m_compareSystemsButton, &QPushButton::clicked, this, &MainWindow::compareSystems);
  m_compareSystems = new SystemsTable;
  m_compareSystems->setObjectName(QStringLiteral("compareSystemsTable"));
  m_compareLabel =
      new QLabel(tr("Compare > Pin current scenario, then edit or open another: the "
                    "charts overlay the pinned one (dashed) and this table lists "
                    "the differences."));
  m_compareLabel->setWordWrap(true);
  m_compare = new QTableWidget(0, 3);
  m_compare->setObjectName(QStringLiteral("compareTable"));
  m_compare->setHorizontalHeaderLabels({tr("key / metric"), tr("pinned"), tr("current")});
  m_compare->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_compareBanner = new StaleBanner;
  cl->addWidget(m_compareBanner);
  cl->addWidget(systemsLabel);
  auto* pickRow = new QHBoxLayout;
  pickRow->addWidget(m_systemsPicker, 1);
  pickRow->addWidget(m_compareSystemsButton, 0, Qt::AlignTop);
  cl->addLayout(pickRow);
  cl->addWidget(m_compareSystems, 2);
  cl->addWidget(m_compareLabel);
  cl->addWidget(m_compare, 1);
  m_tabs->addTab(comparePage, tr("Compare"));
  m_recommend = new RecommendationView;
  m_recommend->setObjectName(QStringLiteral("recommendation"));
  connect(m_recommend, &RecommendationView::loadRequested, this, &MainWindow::loadPlanPoint);
  m_tabs->addTab(m_recommend, tr("Recommendation"));
  setCentralWidget(m_tabs);

  // The message is elided with "..." and whole in its tooltip when the bar is too narrow (the
  // buyer's review, defect 12: "... largest term: activatio" at 1280x800).
  m_status = new ElidedLabel;
  m_status->setObjectName(QStringLiteral("statusMessage"));
  m_timing = new QLabel;
  m_timing->setObjectName(QStringLiteral("statusTiming"));
  statusBar()->addWidget(m_status, 1);
  statusBar()->addPermanentWidget(m_timing);
  resize(1500, 920);
}

void MainWindow::exportCurrentChart(const QString& suffix) {
  const int tab = m_tabs->currentIndex();
  if (tab > 4) {
    showStatus(tr("choose a chart tab to export"), true);
    return;
  }
  const QString p =
      QFileDialog::getSaveFileName(this, tr("Export chart"), currentChartFile(suffix),
                                   suffix.toUpper() + QStringLiteral(" (*.") + suffix + ")");
  if (!p.isEmpty()) exportChart(tab < 4 ? kChartKinds[tab] : ChartKind::kTimeline, p);
}

QString MainWindow::currentChartFile(const QString& suffix) const {
  const int tab = m_tabs->currentIndex();
  const QString kind = tab < 4 ? chartKindName(kChartKinds[tab]) : QStringLiteral("timeline");
  return kind + QLatin1Char('.') + suffix;
}

QChartView* MainWindow::chartView(ChartKind kind) const {
  for (int i = 0; i < 4; ++i) {
    if (kChartKinds[i] == kind) return m_views[i];
  }
  return nullptr;
}

QWidget* MainWindow::viewFor(ChartKind kind) const {
  if (kind == ChartKind::kTimeline) return m_timeline;
  return chartView(kind);
}

QString MainWindow::statusText() const { return m_status->fullText(); }

void MainWindow::showStatus(const QString& text, bool error) {
  m_status->setFullText(text);
  m_status->setStyleSheet(error ? QStringLiteral("color: #c0392b;") : QString());
}

bool MainWindow::openFile(const QString& path) {
  QString err;
  m_panel->resetOptionalFields();  // nothing of the previous file carries over
  if (!m_doc.load(path, &err)) {
    m_panel->refresh();  // the document is still the previous one: its values again
    showStatus(err, true);
    return false;
  }
  m_panel->setMaxGpus(defaultMaxGpus(m_doc.json()));
  refreshSystemsPicker();
  // A file that asks the planner a question opens on its answer (issue 41 item 3).
  if (m_doc.json().contains("plan")) m_tabs->setCurrentWidget(m_recommend);
  return true;
}

bool MainWindow::saveFile(const QString& path) {
  QString err;
  if (!m_doc.save(path, &err)) {
    showStatus(err, true);
    return false;
  }
  showStatus(tr("saved %1").arg(path), false);
  return true;
}

bool MainWindow::exportChart(ChartKind kind, const QString& path) {
  QString err;
  QWidget* v = viewFor(kind);
  if (!v->isVisible()) {
    // A hidden tab has no laid-out size: render at the visible tab's size.
    v->resize(m_tabs->currentWidget()->size());
  }
  if (!exportView(v, path, &err)) {
    showStatus(err, true);
    return false;
  }
  showStatus(tr("exported %1").arg(path), false);
  return true;
}

bool MainWindow::exportTableCsv(const QString& path) {
  QString err;
  if (!writeTextFile(path, m_table.toCsv(), &err)) {
    showStatus(err, true);
    return false;
  }
  showStatus(tr("exported %1").arg(path), false);
  return true;
}

void MainWindow::undo() {
  // Typing not committed yet is what a user takes back first; the next Ctrl+Z undoes the last
  // edit (the buyer's review, defect 16: the field's own undo shadowed the document's).
  if (m_panel->revertTyping()) {
    showStatus(tr("took back the typing in the field; Ctrl+Z again undoes the last edit"), false);
    return;
  }
  if (!m_doc.undo()) showStatus(tr("nothing to undo"), false);
}

void MainWindow::updateUndoActions() {
  // With a field of the form focused Ctrl+Z stays live: it may take back typing (undo()).
  QWidget* focused = QApplication::focusWidget();
  const bool field = focused != nullptr && m_panel->isAncestorOf(focused);
  m_undoAction->setEnabled(m_doc.canUndo() || field);
  m_redoAction->setEnabled(m_doc.canRedo() || field);
}

void MainWindow::redo() {
  if (!m_doc.redo()) showStatus(tr("nothing to redo"), false);
}

bool MainWindow::maybeSave() {
  if (!m_doc.isModified()) return true;
  const QString name =
      m_doc.filePath().isEmpty() ? tr("the new scenario") : QFileInfo(m_doc.filePath()).fileName();
  const QString question = tr("Save the changes to %1?").arg(name);
  const QMessageBox::StandardButton answer =
      m_savePrompt
          ? m_savePrompt(question)
          : QMessageBox::warning(this, tr("ddpsim planner"), question,
                                 QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel,
                                 QMessageBox::Save);
  if (answer == QMessageBox::Discard) return true;
  if (answer != QMessageBox::Save) return false;
  QString p = m_doc.filePath();
  if (p.isEmpty())
    p = QFileDialog::getSaveFileName(this, tr("Save scenario"), {}, tr("JSON (*.json)"));
  return !p.isEmpty() && saveFile(p);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (maybeSave()) {
    event->accept();
  } else {
    event->ignore();
  }
}

void MainWindow::onDocumentChanged() {
  updateTitle();
  updateUndoActions();
  if (!m_doc.isValid()) {
    showStatus(m_doc.issueMessage(), true);
    markStale();
    return;
  }
  showStatus(QString(), false);
  requestSweep();
}

void MainWindow::writeSweepRange(int maxGpus) {
  // The resolved GPUs per node (the hardware preset's when the document leaves it out) of the
  // latest valid result; without one the slider only moves the charts' range.
  // The planner's candidates honour the same bound (issue 41 item 3: at 2 it still recommended
  // 4096 GPUs).
  const int perNode = m_result && m_result->error.empty() ? m_result->gpusPerNode : 0;
  if (perNode < 1) {
    m_doc.setValue(QStringLiteral("/plan/max_gpus"), maxGpus);
    requestSweep();  // no change when the document has that bound already
    return;
  }
  nlohmann::json counts = nlohmann::json::array();
  for (int g : gpuAxis(maxGpus, perNode)) counts.push_back(g);
  m_doc.setValues({{QStringLiteral("/sweep/cluster.gpus"), counts},
                   {QStringLiteral("/plan/max_gpus"), maxGpus}});
}

void MainWindow::markStale() {
  const QString pointer = m_doc.issuePointer();
  const QString note = QStringLiteral("<font color=\"#c0392b\"><b>") +
                       StaleBanner::sentence(pointer).toHtmlEscaped().replace(
                           QStringLiteral("Not updated:"), QStringLiteral("Not updated:</b>")) +
                       QStringLiteral("</font><br>");
  for (QChartView* v : m_views) {
    QChart* c = v->chart();
    if (!c->title().startsWith(QStringLiteral("<font"))) c->setTitle(note + c->title());
  }
  m_timeline->setStale(true);
  m_recommend->setStale(true, pointer);
  m_tableBanner->setStale(true, pointer);
  m_compareBanner->setStale(true, pointer);
}

void MainWindow::requestSweep() {
  if (!m_doc.isValid()) return;
  SweepRequest req;
  req.doc = m_doc.json();
  req.file = m_doc.anchorPath();
  req.maxGpus = m_panel->maxGpus();
  req.planMaxGpus = m_panel->maxGpus();
  req.gpuCounts = scenarioGpuCounts(req.doc, req.maxPoints);
  m_requestNs = m_clock.nsecsElapsed();
  m_trigger = tr("edit");
  m_runner.request(std::move(req));
}

void MainWindow::applyResult(const SweepResultPtr& result) {
  m_result = result;
  if (m_measuredFor != result->name) {
    m_measured = readMeasured(defaultResultsDir(), result->name);
    m_measuredFor = result->name;
  }
  ChartOverlay overlay;
  overlay.pinned = m_pinned;
  overlay.pinnedLabel = m_pinnedLabel;
  overlay.measured = m_measured;
  overlay.logStep = m_logStep->isChecked();
  for (int i = 0; i < 4; ++i) {
    buildChart(kChartKinds[i], m_views[i]->chart(), *result, overlay);
    fitLegend(m_views[i]->chart());
  }
  if (result->error.empty() && result->modelParams > 0) {
    m_panel->showModelFacts(QString::fromStdString(result->modelName), result->modelParams,
                            result->seqLen);
  }
  m_timeline->setTimeline(result->timeline);
  m_timeline->setStale(false);
  m_table.setResult(result);
  // ETTR without a reliability section, steps and tokens to target without a training target.
  for (int c = 0; c < m_table.columnCount(); ++c)
    m_tableView->setColumnHidden(c, m_table.isOptionalColumn(c) && !m_table.hasColumnValues(c));
  m_recommend->setPlan(result->plan);
  m_recommend->setStale(false);
  m_tableBanner->setStale(false);
  m_compareBanner->setStale(false);
  updateCompare();
  if (!result->error.empty()) {
    showStatus(QString::fromStdString(result->error), true);
  } else if (const QString w = memoryWarning(*result); !w.isEmpty()) {
    // Charted, but not runnable: said where it cannot be missed, and said to be the panel's
    // configuration (the buyer's review, defect 9: "does not fit, 64 of 64 points" read as the
    // answer while the Recommendation offered an option that fits).
    QString text = tr("the panel's %1: %2").arg(QString::fromStdString(result->strategy), w);
    if (result->plan.chosen) {
      text += tr("; the Recommendation's %1 GPUs, %2 fits")
                  .arg(result->plan.chosen->gpus)
                  .arg(QString::fromStdString(result->plan.chosen->strategy));
    }
    showStatus(text, true);
  }
  m_lastRedrawMs = static_cast<double>(m_clock.nsecsElapsed() - m_requestNs) * 1e-6;
  m_timing->setText(tr("redrawn %1 ms after the %2").arg(m_lastRedrawMs, 0, 'f', 1).arg(m_trigger));
  m_timing->setToolTip(tr("%1 GPU counts computed in %2 ms; redrawn %3 ms after the latest %4")
                           .arg(result->points.size())
                           .arg(result->computeMs, 0, 'f', 1)
                           .arg(m_lastRedrawMs, 0, 'f', 1)
                           .arg(m_trigger));
  // A result of an earlier request that arrives after an invalid edit is the last valid one.
  if (!m_doc.isValid()) markStale();
  emit redrawn(m_lastRedrawMs);
}

void MainWindow::loadPlanPoint(const PlanPointView& p) {
  // A whole MiB count stays an integer in the file (25, not 25.0).
  const nlohmann::json cap = p.bucketCapMb == std::floor(p.bucketCapMb)
                                 ? nlohmann::json(static_cast<std::int64_t>(p.bucketCapMb))
                                 : nlohmann::json(p.bucketCapMb);
  nlohmann::json next = m_doc.json();
  // An option of another system of plan.hardware brings that system and its price along.
  if (!p.system.empty() && p.system != currentSystem(next) && isHardwarePreset(p.system))
    next = withSystem(next, p.system, m_panel->prices());
  const std::pair<const char*, nlohmann::json> knobs[] = {
      {"/cluster/gpus", p.gpus},
      {"/training/per_gpu_batch", p.perGpuBatch},
      {"/training/grad_accumulation", p.gradAccumulation},
      {"/parallelism/strategy", p.strategy},
      {"/parallelism/bucket_cap_mb", cap},
      {"/parallelism/comm_hook", p.commHook}};
  for (const auto& [pointer, value] : knobs) next[nlohmann::json::json_pointer(pointer)] = value;
  m_doc.replace(next);  // one edit, one undo step
  showStatus(tr("loaded the planner's point: %1 (Edit > Undo restores the previous values)")
                 .arg(planPointLabel(p, m_result && m_result->plan.byThroughput)),
             false);
}

void MainWindow::pinCurrent() {
  if (!m_result) return;
  m_pinned = m_result;
  m_pinnedDoc = m_doc.json();
  // What was predicted (model, system, strategy), not the file's `name`, which an edit of the
  // system does not change (issue 41 item 3: a B200 run was pinned as "GPT-2 XL on DGX H100").
  m_pinnedLabel = QString::fromStdString(m_result->subject.empty()
                                             ? std::string("pinned")
                                             : m_result->subject + ", " + m_result->strategy);
  if (m_pinnedLabel.size() > 60) m_pinnedLabel = m_pinnedLabel.left(59) + QChar(0x2026);
  redrawFor(tr("pin"));
}

void MainWindow::clearPin() {
  m_pinned.reset();
  m_pinnedDoc = nlohmann::json();
  redrawFor(tr("pin was cleared"));
}

void MainWindow::redrawFor(const QString& action) {
  if (!m_result) return;
  // The latency is this action's, not the last edit's (the buyer's review, defect 16: "redrawn
  // 12964.7 ms after the edit" after a Pin, timed from the edit before it).
  m_requestNs = m_clock.nsecsElapsed();
  m_trigger = action;
  applyResult(m_result);
}

void MainWindow::refreshSystemsPicker() {
  std::vector<std::string> ticked = comparedSystems(m_doc.json());
  if (const std::string current = currentSystem(m_doc.json());
      !current.empty() && std::find(ticked.begin(), ticked.end(), current) == ticked.end()) {
    ticked.insert(ticked.begin(), current);
  }
  m_systemsPicker->setSystems(hardwarePresets(), ticked, m_panel->prices().prices());
}

void MainWindow::compareSystems() {
  const std::vector<std::string> systems = m_systemsPicker->checkedSystems();
  if (systems.size() < 2 || systems.size() > 4) {
    showStatus(tr("Compare: tick 2 to 4 systems (%1 ticked)").arg(systems.size()), true);
    return;
  }
  // Prices typed here are the systems' prices from now on (the panel's price follows them).
  std::map<std::string, double> prices = m_panel->prices().prices();
  for (const auto& [system, usd] : m_systemsPicker->prices()) prices[system] = usd;
  m_doc.replace(withComparedSystems(m_doc.json(), systems, prices));  // one edit, one undo step
  QStringList names;
  for (const std::string& s : systems) names << QString::fromStdString(s);
  showStatus(tr("comparing %1 for the same job (Edit > Undo restores the previous plan)")
                 .arg(names.join(QStringLiteral(", "))),
             false);
}

void MainWindow::updateCompare() {
  m_compareSystems->setPlan(m_result ? m_result->plan : PlanView{});
  m_compareSystems->setVisible(m_result && m_result->plan.systems.size() > 1);
  m_compare->setRowCount(0);
  if (!m_pinned || !m_result) return;
  const auto add = [this](const QString& key, const QString& a, const QString& b) {
    const int row = m_compare->rowCount();
    m_compare->insertRow(row);
    m_compare->setItem(row, 0, new QTableWidgetItem(key));
    m_compare->setItem(row, 1, new QTableWidgetItem(a));
    m_compare->setItem(row, 2, new QTableWidgetItem(b));
  };
  for (const JsonDifference& d : jsonDiff(m_pinnedDoc, m_doc.json())) {
    add(QString::fromStdString(d.pointer), QString::fromStdString(d.left),
        QString::fromStdString(d.right));
  }
  const int gpus = m_result->currentGpus;
  const StepPoint* a = pointAt(*m_pinned, gpus);
  const StepPoint* b = pointAt(*m_result, gpus);
  const auto fmt = [](const StepPoint* p, double (*f)(const StepPoint&), int decimals) {
    return p ? QString::number(f(*p), 'f', decimals) : QStringLiteral("n/a");
  };
  add(tr("step time at %1 GPUs (ms)").arg(gpus),
      fmt(
          a, [](const StepPoint& p) { return 1e3 * p.stepTimeS; }, 2),
      fmt(
          b, [](const StepPoint& p) { return 1e3 * p.stepTimeS; }, 2));
  add(tr("exposed communication at %1 GPUs (ms)").arg(gpus),
      fmt(
          a, [](const StepPoint& p) { return 1e3 * p.exposedCommS; }, 2),
      fmt(
          b, [](const StepPoint& p) { return 1e3 * p.exposedCommS; }, 2));
  add(tr("throughput at %1 GPUs (samples/s)").arg(gpus),
      fmt(
          a, [](const StepPoint& p) { return p.throughputSamplesPerS; }, 1),
      fmt(
          b, [](const StepPoint& p) { return p.throughputSamplesPerS; }, 1));
  add(tr("memory per GPU at %1 GPUs (GiB)").arg(gpus),
      fmt(
          a, [](const StepPoint& p) { return p.memoryBytes / (1024.0 * 1024 * 1024); }, 2),
      fmt(
          b, [](const StepPoint& p) { return p.memoryBytes / (1024.0 * 1024 * 1024); }, 2));
}

void MainWindow::updateTitle() {
  // The model and system as they are now, not the file's `name` (issue 41 item 3).
  QString title = QStringLiteral("ddpsim planner");
  if (const QString subject = scenarioSubject(m_doc.json()); !subject.isEmpty())
    title += QStringLiteral(" \u2014 ") + subject;
  if (!m_doc.filePath().isEmpty())
    title += QStringLiteral(" [") + QFileInfo(m_doc.filePath()).fileName() + "]";
  if (m_doc.isModified()) title += QLatin1Char('*');
  setWindowTitle(title);
}

}  // namespace ddpsim::gui
