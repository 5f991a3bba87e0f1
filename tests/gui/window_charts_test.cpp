// QTest of what the window draws, under the offscreen platform: a slider changes a chart series,
// exports, the pinned comparison, the timeline zoom, axes, legends, hover and the recommendation
// view. The scenario editor is window_test.cpp's.
#include <QAction>
#include <QAreaSeries>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QLineEdit>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMessageBox>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QValueAxis>
#include <QXYSeries>
#include <QtTest>
#include <algorithm>
#include <fstream>
#include <set>

#include "gui/app/charts.hpp"
#include "gui/app/hover_chart_view.hpp"
#include "gui/app/main_window.hpp"
#include "gui/app/recommendation_view.hpp"
#include "gui/app/scenario_panel.hpp"
#include "gui/app/timeline_view.hpp"
#include "model/scenario/scenario.hpp"
#include "window_fixture.hpp"

using namespace ddpsim::gui;
using namespace ddpsim::gui::testing;

class WindowChartsTest : public WindowFixture {
  Q_OBJECT

 private slots:
  void sliderChangesTheStepChart() {
    // GPT-2 XL: 25 MiB buckets hold several tensors, so the cap moves the overlap. With
    // gradient_as_bucket_view: otherwise DDP's 4.6 ms of copies back into .grad after the
    // backward hide the last all-reduces at every cap the slider offers.
    QSignalSpy loaded(m_w, &MainWindow::redrawn);
    QVERIFY(m_w->openFile(kScenarios + "/default.json"));
    QVERIFY(waitRedraw(loaded));
    QSignalSpy viewed(m_w, &MainWindow::redrawn);
    m_w->document()->setValue("/parallelism/gradient_as_bucket_view", true);
    QVERIFY(waitRedraw(viewed));
    m_w->runner()->waitForDone();
    QCoreApplication::processEvents();
    QChart* chart = m_w->chartView(ChartKind::kStep)->chart();
    const QList<QPointF> before = areaTop(chart, "exposed communication");
    QVERIFY(!before.isEmpty());
    auto* slider = qobject_cast<QSlider*>(m_w->panel()->field("/parallelism/bucket_cap_mb"));
    QVERIFY(slider);
    QSignalSpy redrawn(m_w, &MainWindow::redrawn);
    slider->setValue(200);  // 200 MiB buckets: less overlap, more exposed communication
    QVERIFY(waitRedraw(redrawn));
    QCOMPARE(m_w->document()->value("/parallelism/bucket_cap_mb"), nlohmann::json(200));
    const QList<QPointF> after = areaTop(chart, "exposed communication");
    QCOMPARE(after.size(), before.size());
    QVERIFY(after != before);
  }

  // Issue 19 item 1: a configuration that does not fit is marked on the charts and named in the
  // status bar.
  void notFittingIsMarkedAndSaid() {
    QSignalSpy loaded(m_w, &MainWindow::redrawn);
    QVERIFY(m_w->openFile(kScenarios + "/default.json"));
    QVERIFY(waitRedraw(loaded));
    QVERIFY(!hasSeriesStartingWith(m_w->chartView(ChartKind::kStep)->chart(), "does not fit"));
    QSignalSpy redrawn(m_w, &MainWindow::redrawn);
    m_w->document()->setValue("/training/per_gpu_batch", 24);
    QVERIFY(waitRedraw(redrawn));
    m_w->runner()->waitForDone();
    QCoreApplication::processEvents();
    for (ChartKind k : {ChartKind::kStep, ChartKind::kScaling, ChartKind::kCost}) {
      QVERIFY(hasSeriesStartingWith(m_w->chartView(k)->chart(), "does not fit in GPU memory"));
    }
    QVERIFY2(m_w->statusText().startsWith("does not fit in GPU memory"),
             qPrintable(m_w->statusText()));
  }

  void exportsChartsAndTable() {
    QTemporaryDir tmp;
    for (ChartKind k : {ChartKind::kStep, ChartKind::kScaling, ChartKind::kMemory, ChartKind::kCost,
                        ChartKind::kTimeline}) {
      const QString png = tmp.filePath(chartKindName(k) + ".png");
      QVERIFY(m_w->exportChart(k, png));
      QImage image(png);
      QVERIFY(!image.isNull());
      QVERIFY(image.width() >= 400);
#ifdef DDPSIM_GUI_HAVE_SVG
      const QString svg = tmp.filePath(chartKindName(k) + ".svg");
      QVERIFY(m_w->exportChart(k, svg));
      QFile f(svg);
      QVERIFY(f.open(QIODevice::ReadOnly));
      QVERIFY(f.readAll().contains("<svg"));
#endif
    }
    const QString csv = tmp.filePath("table.csv");
    QVERIFY(m_w->exportTableCsv(csv));
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(f.readAll()).trimmed().split('\n');
    QCOMPARE(lines.size(), m_w->tableModel()->rowCount() + 1);
  }

  void pinAndCompare() {
    m_w->pinCurrent();
    QSignalSpy redrawn(m_w, &MainWindow::redrawn);
    m_w->document()->setValue("/cluster/gpus", 8);
    QVERIFY(waitRedraw(redrawn));
    QTableWidget* t = m_w->compareTable();
    bool found = false;
    for (int r = 0; r < t->rowCount(); ++r) {
      if (t->item(r, 0)->text() == "/cluster/gpus") {
        found = true;
        QCOMPARE(t->item(r, 1)->text(), QStringLiteral("32"));
        QCOMPARE(t->item(r, 2)->text(), QStringLiteral("8"));
      }
    }
    QVERIFY(found);
    QVERIFY(hasSeriesStartingWith(m_w->chartView(ChartKind::kStep)->chart(), "pinned"));
    m_w->clearPin();
    QCOMPARE(t->rowCount(), 0);
    QVERIFY(!hasSeriesStartingWith(m_w->chartView(ChartKind::kStep)->chart(), "pinned"));
  }

  void timelineZooms() {
    TimelineView* v = m_w->timelineView();
    QVERIFY(!v->timeline().spans.empty());
    const double full = v->visibleEnd() - v->visibleStart();
    v->zoomIn();
    QVERIFY(std::abs((v->visibleEnd() - v->visibleStart()) - full / 2) < 1e-12 * full + 1e-15);
    v->resetZoom();
    QCOMPARE(v->visibleEnd() - v->visibleStart(), full);
    // Issue 19 item 7: a timeline of fewer lanes than GPUs says which ranks it shows.
    const int shown = static_cast<int>(v->timeline().ranks.size());
    if (shown < v->timeline().gpus) {
      QVERIFY2(v->title().contains(
                   QStringLiteral("ranks shown: %1 of %2").arg(shown).arg(v->timeline().gpus)),
               qPrintable(v->title()));
    } else {
      QVERIFY(!v->title().contains(QStringLiteral("ranks shown")));
    }
  }

  // Issue 19 item 7: the efficiency axis ticks every 20% (it read 0/26/53/79/105).
  void scalingAxisHasCleanTicks() {
    QChart* chart = m_w->chartView(ChartKind::kScaling)->chart();
    QValueAxis* eff = nullptr;
    for (QAbstractAxis* a : chart->axes(Qt::Vertical)) {
      if (a->titleText().startsWith("scaling efficiency")) eff = qobject_cast<QValueAxis*>(a);
    }
    QVERIFY(eff);
    QCOMPARE(eff->min(), 0.0);
    QVERIFY(eff->max() == 100.0 || eff->max() == 120.0);
    QCOMPARE(eff->tickCount(), static_cast<int>(eff->max() / 20) + 1);
  }

  // Issue 19 item 7: legends list only what is drawn. A sweep of one GPU has no communication:
  // no "exposed communication" entry; and no chart keeps a line without points.
  void legendsListOnlyDrawnSeries() {
    QSignalSpy redrawn(m_w, &MainWindow::redrawn);
    m_w->panel()->findChild<QSlider*>("maxGpus")->setValue(0);  // the user moves it to 1 GPU
    QVERIFY(waitRedraw(redrawn));
    m_w->runner()->waitForDone();
    QCoreApplication::processEvents();
    QChart* step = m_w->chartView(ChartKind::kStep)->chart();
    QVERIFY(hasSeriesStartingWith(step, "compute"));
    QVERIFY(!hasSeriesStartingWith(step, "exposed communication"));
    for (ChartKind k : {ChartKind::kStep, ChartKind::kScaling, ChartKind::kCost}) {
      for (QAbstractSeries* s : m_w->chartView(k)->chart()->series()) {
        if (auto* xy = qobject_cast<QXYSeries*>(s))
          QVERIFY2(xy->count() > 0, qPrintable(s->name()));
      }
    }
  }

  void timelineOfManyGpusNamesTheRanksShown() {
    QSignalSpy loaded(m_w, &MainWindow::redrawn);
    QVERIFY(m_w->openFile(kScenarios + "/default.json"));  // cluster.gpus 8
    QVERIFY(waitRedraw(loaded));
    m_w->runner()->waitForDone();
    QCoreApplication::processEvents();
    TimelineView* v = m_w->timelineView();
    QCOMPARE(v->timeline().gpus, 8);
    QVERIFY(v->timeline().ranks.size() < 8u);
    QVERIFY2(
        v->title().contains(QStringLiteral("ranks shown: %1 of 8").arg(v->timeline().ranks.size())),
        qPrintable(v->title()));
  }

  // Issue 19 item 6: the scenario's own sweep is honoured: its GPU counts are the axis and its
  // other axes (here the comm hook) are series.
  void scenarioSweepAxesAreSeries() {
    std::vector<int> drawn;
    for (const StepPoint& p : m_w->lastResult()->points) drawn.push_back(p.gpus);
    QCOMPARE(drawn, (std::vector<int>{8, 32, 128}));
    QChart* step = m_w->chartView(ChartKind::kStep)->chart();
    QVERIFY(hasSeriesStartingWith(step, "sweep: comm_hook none"));
    QVERIFY(hasSeriesStartingWith(step, "sweep: comm_hook fp16"));
    // The fp16 hook halves the bytes on the wire: faster than none at 128 GPUs over 100 Gb/s.
    const auto& v = m_w->lastResult()->variants;
    QCOMPARE(v.size(), std::size_t{2});
    QVERIFY(v[1].points.back().stepTimeS < v[0].points.back().stepTimeS);
  }

  // Issue 19 item 5: titles name the model being predicted now, and an invalid edit marks the
  // charts as showing the last valid result.
  void titlesFollowTheModelAndStaleIsMarked() {
    QSignalSpy redrawn(m_w, &MainWindow::redrawn);
    m_w->document()->setValue("/model", nlohmann::json{{"preset", "resnet50"}});
    QVERIFY(waitRedraw(redrawn));
    m_w->runner()->waitForDone();
    QCoreApplication::processEvents();
    QChart* step = m_w->chartView(ChartKind::kStep)->chart();
    QVERIFY2(step->title().contains("resnet50"), qPrintable(step->title()));
    m_w->document()->setValue("/training/per_gpu_batch", 0);
    QVERIFY(!m_w->document()->isValid());
    for (ChartKind k :
         {ChartKind::kStep, ChartKind::kScaling, ChartKind::kMemory, ChartKind::kCost}) {
      const QString t = m_w->chartView(k)->chart()->title();
      QVERIFY2(t.contains("Not updated") && t.contains("/training/per_gpu_batch"), qPrintable(t));
    }
    QVERIFY(m_w->timelineView()->isStale());
    QVERIFY(m_w->timelineView()->title().startsWith("Not updated"));
    m_w->document()->setValue("/training/per_gpu_batch", 16);
    QVERIFY(waitRedraw(redrawn));
    m_w->runner()->waitForDone();
    QCoreApplication::processEvents();
    QVERIFY(!step->title().contains("Not updated"));
    QVERIFY(!m_w->timelineView()->isStale());
  }

  // Issue 19 item 7: no axis without a series (Qt draws an unused log axis as a lone "1").
  void everyAxisCarriesASeries() {
    for (ChartKind k : {ChartKind::kStep, ChartKind::kScaling, ChartKind::kCost}) {
      QChart* c = m_w->chartView(k)->chart();
      for (QAbstractAxis* a : c->axes()) {
        bool used = false;
        for (QAbstractSeries* s : c->series()) used |= s->attachedAxes().contains(a);
        QVERIFY2(used, qPrintable(chartKindName(k) + ": " + a->titleText()));
      }
    }
  }

  // Issue 19 item 8: hover values and the log scale.
  void hoverShowsValuesAndLogScaleSeparatesComponents() {
    QChart* step = m_w->chartView(ChartKind::kStep)->chart();
    const QString text = hoverText(step, 30);  // nearest point: 32 GPUs
    QVERIFY2(text.startsWith("32 GPUs") && text.contains("compute (forward + backward): "),
             qPrintable(text));
    const StepPoint& p32 = m_w->lastResult()->points[1];
    QVERIFY2(text.contains(QString::number(1e3 * p32.computeS, 'g', 5)), qPrintable(text));
    m_w->tabs()->setCurrentIndex(0);
    QCoreApplication::processEvents();
    auto* view = qobject_cast<HoverChartView*>(m_w->chartView(ChartKind::kStep));
    QVERIFY(view);
    const QPointF centre = view->mapFromScene(step->mapToScene(step->plotArea().center()));
    QVERIFY(!view->hoverAt(centre).isEmpty());
    QVERIFY(view->hoverAt(QPointF(1, 1)).isEmpty());  // outside the plot
    const QString memory = hoverText(m_w->chartView(ChartKind::kMemory)->chart(), 0);
    QVERIFY2(memory.startsWith("ddp") && memory.contains("parameters: "), qPrintable(memory));
    TimelineView* tl = m_w->timelineView();
    tl->resize(900, 400);
    bool found = false;
    for (int x = 130; x < 880 && !found; x += 7) found = !tl->spanTextAt(QPointF(x, 60)).isEmpty();
    QVERIFY(found);
    QSignalSpy redrawn(m_w, &MainWindow::redrawn);
    m_w->logStepBox()->setChecked(true);
    bool log = false;
    for (QAbstractAxis* a : step->axes(Qt::Vertical))
      log |= qobject_cast<QLogValueAxis*>(a) != nullptr;
    QVERIFY(log);
    QVERIFY(hasSeriesStartingWith(step, "exposed communication"));
    QVERIFY(hasSeriesStartingWith(step, "step time"));
  }

  // Issue 19 item 3: the recommendation, its front, and loading a point as one undoable edit.
  void recommendationLoadsAPoint() {
    QSignalSpy redrawn(m_w, &MainWindow::redrawn);
    QVERIFY(m_w->openFile(kScenarios + "/examples/plan-gpt2-xl.json"));
    QVERIFY(waitRedraw(redrawn));
    m_w->runner()->waitForDone();
    QCoreApplication::processEvents();
    RecommendationView* r = m_w->recommendationView();
    QVERIFY2(r->chosenText().contains("Recommended (minimises cost)"), qPrintable(r->chosenText()));
    QVERIFY2(r->summaryText().contains("candidates"), qPrintable(r->summaryText()));
    QVERIFY(r->rows().size() >= 1);
    QCOMPARE(r->table()->rowCount(), static_cast<int>(r->rows().size()));
    // Rows are ordered by the objective (cost orders like GPU-hours).
    for (std::size_t i = 1; i < r->rows().size(); ++i)
      QVERIFY(r->rows()[i - 1].gpuHoursMetric <= r->rows()[i].gpuHoursMetric);
    QChart* cost = m_w->chartView(ChartKind::kCost)->chart();
    QVERIFY(hasSeriesStartingWith(cost, "deadline 2 h"));
    const PlanPointView pick = r->rows().back();
    r->requestLoad(static_cast<int>(r->rows().size()) - 1);
    ScenarioDocument* d = m_w->document();
    QCOMPARE(d->value("/cluster/gpus"), nlohmann::json(pick.gpus));
    QCOMPARE(d->value("/training/per_gpu_batch"), nlohmann::json(pick.perGpuBatch));
    QCOMPARE(d->value("/parallelism/strategy"), nlohmann::json(pick.strategy));
    QVERIFY(d->undo());  // one step back to the file
    QVERIFY(!d->isModified());
  }
};

QTEST_MAIN(WindowChartsTest)
#include "window_charts_test.moc"
