// QTest of what the window draws, under the offscreen platform: a slider changes a chart series,
// exports, the pinned comparison, the timeline zoom, axes, legends, hover and the recommendation
// view; and what a buyer reads (issue 41 item 3): a "Not updated" mark on every view, a
// recommendation within the sizes the panel allows with digits that do not round to zero, one
// money format, MFU and tokens/s, pins named by what they predicted, each system's best option
// and its error band. The scenario editor is window_test.cpp's.
#include <QAction>
#include <QAreaSeries>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QLabel>
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
#include "gui/app/stale_banner.hpp"
#include "gui/app/systems_table.hpp"
#include "gui/app/timeline_view.hpp"
#include "gui/models/number_format.hpp"
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
    // Said to be the panel's configuration (the buyer's review, defect 9), as is the time curve.
    QVERIFY2(m_w->statusText().startsWith("the panel's ddp: does not fit in GPU memory"),
             qPrintable(m_w->statusText()));
    QVERIFY(hasSeriesStartingWith(m_w->chartView(ChartKind::kCost)->chart(),
                                  "time to train (h), the panel's ddp") ||
            hasSeriesStartingWith(m_w->chartView(ChartKind::kCost)->chart(),
                                  "hours per million samples, the panel's ddp"));
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

  // Issue 41 item 3: with localized numbers (thousands separators) a chart draws an axis's
  // labels only for a "%.<digits><type>" format: a bare "%g" left the GPU and time axes blank.
  void axisLabelFormatsHaveAPrecision() {
    QVERIFY(openAndSettle(kScenarios + "/examples/plan-gpt2-xl.json"));
    const QRegularExpression ok(QStringLiteral("^[^%]*%\\.\\d+[defgiEG][^%]*$"));
    QList<QChart*> charts;
    for (ChartKind k :
         {ChartKind::kStep, ChartKind::kScaling, ChartKind::kMemory, ChartKind::kCost})
      charts << m_w->chartView(k)->chart();
    charts << m_w->recommendationView()->chartView()->chart();
    for (QChart* c : charts) {
      QVERIFY(c->localizeNumbers());
      for (QAbstractAxis* a : c->axes()) {
        QString format;
        if (auto* v = qobject_cast<QValueAxis*>(a)) format = v->labelFormat();
        if (auto* l = qobject_cast<QLogValueAxis*>(a)) format = l->labelFormat();
        QVERIFY2(format.isEmpty() || ok.match(format).hasMatch(),
                 qPrintable(a->titleText() + ": " + format));
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

  // Issue 41 item 3, defect 1: after an invalid edit (plan-gpt2-xl.json switched to dgx-b200,
  // then to gb200-nvl72, whose 72-GPU nodes make /plan/gpus/4 = 128 no cluster shape) the
  // Recommendation and Table tabs kept the B200's answer with no mark: markChartsStale marked
  // only the charts and the timeline. Every view now says "Not updated"; a valid edit clears it.
  // Without the banners the Recommendation check fails.
  void everyViewIsMarkedStale() {
    QVERIFY(openAndSettle(kScenarios + "/examples/plan-gpt2-xl.json"));
    ScenarioDocument* d = m_w->document();
    QSignalSpy redrawn(m_w, &MainWindow::redrawn);
    d->setValue("/hardware/preset", "dgx-b200");
    QVERIFY(waitRedraw(redrawn));
    settle();
    RecommendationView* r = m_w->recommendationView();
    QVERIFY(!r->isStale());
    QVERIFY(r->staleBanner()->isHidden());
    d->setValue("/hardware/preset", "gb200-nvl72");
    QVERIFY(!d->isValid());
    QCOMPARE(d->issuePointer(), QStringLiteral("/plan/gpus/4"));
    for (StaleBanner* b : {r->staleBanner(), m_w->tableBanner(), m_w->compareBanner()}) {
      QVERIFY(b->isStale());
      QVERIFY(!b->isHidden());
      QVERIFY2(b->text().startsWith("Not updated") && b->text().contains("/plan/gpus/4"),
               qPrintable(b->text()));
    }
    QVERIFY(!r->table()->isEnabled());  // the last valid rows are not loadable
    for (ChartKind k :
         {ChartKind::kStep, ChartKind::kScaling, ChartKind::kMemory, ChartKind::kCost}) {
      QVERIFY(m_w->chartView(k)->chart()->title().contains("Not updated"));
    }
    QVERIFY(m_w->timelineView()->isStale());
    d->setValue("/hardware/preset", "dgx-h100");
    QVERIFY(waitRedraw(redrawn));
    settle();
    for (StaleBanner* b : {r->staleBanner(), m_w->tableBanner(), m_w->compareBanner()}) {
      QVERIFY(!b->isStale());
      QVERIFY(b->isHidden());
    }
    QVERIFY(r->table()->isEnabled());
  }

  // Issue 41 item 3, defect 5: "max GPUs" at 2 still recommended 4096 GPUs. The slider writes
  // /plan/max_gpus, and min GPUs /plan/min_gpus: every option recommended is within them.
  // Without the bound the chosen option has 4096 GPUs.
  void maxAndMinGpusBoundTheRecommendation() {
    QVERIFY(openAndSettle(kScenarios + "/default.json"));
    QSignalSpy redrawn(m_w, &MainWindow::redrawn);
    m_w->panel()->findChild<QSlider*>("maxGpus")->setValue(1);  // 2 GPUs
    QVERIFY(waitRedraw(redrawn));
    settle();
    QCOMPARE(m_w->document()->value("/plan/max_gpus"), nlohmann::json(2));
    const PlanView& plan = m_w->recommendationView()->plan();
    QVERIFY2(plan.chosen.has_value(), qPrintable(m_w->recommendationView()->chosenText()));
    QVERIFY(plan.chosen->gpus <= 2);
    for (const PlanPointView& p : plan.pareto) QVERIFY(p.gpus <= 2);
    qobject_cast<QSpinBox*>(m_w->panel()->field("/plan/min_gpus"))->setValue(2);
    QVERIFY(waitRedraw(redrawn));
    settle();
    QCOMPARE(m_w->recommendationView()->plan().chosen->gpus, 2);
    QCOMPARE(m_w->recommendationView()->plan().searchedGpus, std::vector<int>{2});
  }

  // Issue 41 item 3, defect 7: default.json (a 1-1024 GPU sweep, no plan section) and the FSDP2
  // example (256 GPUs) were recommended 4096 GPUs, "0.00 h per 1M samples". The planner searches
  // up to the panel's max GPUs (the sweep's largest count) and the time keeps its digits.
  // Without the bound both choose 4096; with 'f', 2 the time reads "0.00 h".
  void recommendationStaysWithinTheSweep() {
    QVERIFY(openAndSettle(kScenarios + "/default.json"));
    RecommendationView* r = m_w->recommendationView();
    QVERIFY(r->plan().chosen.has_value());
    QVERIFY2(r->plan().chosen->gpus <= 1024, qPrintable(r->chosenText()));
    for (const PlanPointView& p : r->plan().pareto) QVERIFY(p.gpus <= 1024);
    QCOMPARE(r->plan().searchedGpus.back(), 1024);
    QVERIFY2(r->summaryText().contains("searched 1-1024 GPUs"), qPrintable(r->summaryText()));
    QVERIFY(!r->chosenText().contains("0.00 h"));
    const QString time = formatHours(r->plan().chosen->timeMetric / 3600.0);
    QVERIFY2(r->chosenText().contains(time + " per 1M samples"), qPrintable(r->chosenText()));
    QVERIFY(!time.startsWith("0 "));
    const int timeColumn = r->columnOf("time");
    QVERIFY(timeColumn >= 0);
    for (int row = 0; row < r->table()->rowCount(); ++row)
      QVERIFY(!r->table()->item(row, timeColumn)->text().startsWith("0.00"));
    // The document itself is unchanged: saving writes the file as it was.
    QVERIFY(m_w->document()->value("/plan").is_null());
    QVERIFY(openAndSettle(kScenarios + "/examples/llama-3-70b-fsdp2-hsdp.json"));
    QVERIFY(r->plan().chosen.has_value());
    QVERIFY2(r->plan().chosen->gpus <= 256, qPrintable(r->chosenText()));
  }

  // Issue 41 item 3, defect 8: money one way with units ("$286807" in the legend, "$286,807" in
  // the Recommendation table, "286807" in the Table tab, "1e+06" on cost axes), and the Table
  // tab has MFU and tokens/s/GPU. Before, the legend and the Table's cost cells differ from
  // formatMoney and the columns are missing.
  void moneyIsFormattedOneWayAndTheTableHasMfu() {
    QVERIFY(openAndSettle(kScenarios + "/examples/plan-gpt2-xl.json"));
    const PlanView& plan = m_w->recommendationView()->plan();
    QVERIFY(plan.chosen && plan.chosen->costUsd);
    const QString money = formatMoney(*plan.chosen->costUsd);
    QChart* cost = m_w->chartView(ChartKind::kCost)->chart();
    QVERIFY(hasSeriesStartingWith(cost, "chosen:"));
    bool legend = false;
    for (QAbstractSeries* s : cost->series()) legend |= s->name().endsWith(", " + money);
    QVERIFY2(legend, qPrintable(money));
    QVERIFY(cost->localizeNumbers());
    bool dollarAxis = false;
    for (QAbstractAxis* a : cost->axes(Qt::Vertical)) {
      if (auto* log = qobject_cast<QLogValueAxis*>(a))
        dollarAxis |= log->labelFormat().startsWith("$") && !log->labelFormat().contains("%g");
    }
    QVERIFY(dollarAxis);
    QTableWidget* rec = m_w->recommendationView()->table();
    bool cell = false;
    const int costColumn = m_w->recommendationView()->columnOf("cost");
    for (int row = 0; row < rec->rowCount(); ++row)
      cell |= rec->item(row, costColumn)->text() == money;
    QVERIFY(cell);
    ResultsTableModel* t = m_w->tableModel();
    QStringList headers;
    for (int c = 0; c < t->columnCount(); ++c)
      headers << t->headerData(c, Qt::Horizontal).toString();
    const int costCol = static_cast<int>(headers.indexOf("cost"));
    const int mfuCol = static_cast<int>(headers.indexOf("MFU (%)"));
    const int tokCol = static_cast<int>(headers.indexOf("tokens/s/GPU"));
    QVERIFY2(costCol >= 0 && mfuCol >= 0 && tokCol >= 0, qPrintable(headers.join("|")));
    const StepPoint& p0 = m_w->lastResult()->points.front();
    QVERIFY(p0.costUsd.has_value());
    QCOMPARE(t->data(t->index(0, costCol)).toString(), formatMoney(*p0.costUsd));
    QVERIFY(p0.mfu > 0 && p0.tokensPerSPerGpu > 0);
    QVERIFY(t->data(t->index(0, mfuCol)).toString().toDouble() > 0);
    QVERIFY(t->data(t->index(0, tokCol)).toString().toDouble() > 0);
    QVERIFY(m_w->tableModel()->toCsv().contains("mfu"));
  }

  // Issue 41 item 3, defect 8: a pin was labelled with the file's `name`, so a B200 run pinned
  // from plan-gpt2-xl.json read "pinned - GPT-2 XL on DGX H100". It is labelled with the model,
  // system and strategy predicted.
  void pinIsNamedByWhatWasPredicted() {
    QVERIFY(openAndSettle(kScenarios + "/examples/plan-gpt2-xl.json"));
    QSignalSpy redrawn(m_w, &MainWindow::redrawn);
    m_w->document()->setValue("/hardware/preset", "dgx-b200");
    QVERIFY(waitRedraw(redrawn));
    settle();
    m_w->pinCurrent();
    m_w->document()->setValue("/hardware/preset", "hgx-h200");
    QVERIFY(waitRedraw(redrawn));
    settle();
    QString pinned;
    for (QAbstractSeries* s : m_w->chartView(ChartKind::kStep)->chart()->series()) {
      if (s->name().startsWith("pinned")) pinned = s->name();
    }
    QVERIFY2(pinned.contains("dgx-b200") && pinned.contains("ddp"), qPrintable(pinned));
    QVERIFY2(!pinned.contains("DGX H100"), qPrintable(pinned));
  }

  // Issue 41 item 3: a file with a plan section opens on its answer, the Recommendation tab.
  void planFileOpensOnTheRecommendation() {
    QVERIFY(m_w->tabs()->currentWidget() != m_w->recommendationView());  // mlp-fp16-hook.json
    QVERIFY(openAndSettle(kScenarios + "/examples/plan-gpt2-xl.json"));
    QCOMPARE(m_w->tabs()->currentWidget(), static_cast<QWidget*>(m_w->recommendationView()));
  }

  // Issue 41 item 3: with several systems (plan.hardware) the Recommendation lists each one's
  // best option, and each option carries the error band of its class (median and max |error|
  // of published runs like it).
  void eachSystemsBestAndTheErrorBandAreShown() {
    QVERIFY(openAndSettle(kScenarios + "/examples/plan-buy-llama-3-8b.json"));
    RecommendationView* r = m_w->recommendationView();
    const PlanView& plan = r->plan();
    QVERIFY2(plan.error.empty(), plan.error.c_str());
    QCOMPARE(plan.systems.size(), std::size_t{3});
    SystemsTable* t = r->systemsTable();
    QVERIFY(!t->isHidden());
    QCOMPARE(t->rowCount(), 3);
    QStringList systems;
    for (int row = 0; row < 3; ++row) systems << t->item(row, 0)->text();
    QVERIFY2(systems.join("|").contains("dgx-h100") && systems.join("|").contains("hgx-h200") &&
                 systems.join("|").contains("dgx-b200"),
             qPrintable(systems.join("|")));
    QVERIFY(plan.chosen.has_value());
    int chosenRows = 0;
    for (int row = 0; row < 3; ++row) chosenRows += t->item(row, 12)->text() == "chosen" ? 1 : 0;
    QCOMPARE(chosenRows, 1);
    if (plan.chosen->band) {
      QVERIFY2(r->chosenText().contains("Error band"), qPrintable(r->chosenText()));
      QVERIFY(t->item(0, 11)->text().contains("median"));
    }
    QVERIFY(r->chosenText().contains(QString::fromStdString(plan.chosen->system)));
    // The chosen option's notes are listed in view, not hidden in a tooltip (the buyer's
    // review, defect 11: "7 planner notes: hover here").
    QVERIFY(!plan.warnings.empty());
    QVERIFY(!r->findChild<QLabel*>("recommendationNotes")->isHidden());
    QVERIFY2(r->notesText().contains(QStringLiteral("Notes (%1)").arg(plan.warnings.size())),
             qPrintable(r->notesText()));
    QVERIFY2(r->notesText().contains("chosen: fsdp2"), qPrintable(r->notesText()));
    QVERIFY(!r->summaryText().contains("hover here"));
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
