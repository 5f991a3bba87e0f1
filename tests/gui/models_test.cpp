// QTest of the Qt-Core models library: the document (validation at the field's pointer, exact
// round trip), the sweep engine against the simulator it wraps, the background runner's
// latest-wins rule, the chart series and the CSV table, and the measured-points reader.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "gui/models/compare_systems.hpp"
#include "gui/models/measured.hpp"
#include "gui/models/number_format.hpp"
#include "gui/models/plan_bounds.hpp"
#include "gui/models/price_book.hpp"
#include "gui/models/results_table_model.hpp"
#include "gui/models/scenario_document.hpp"
#include "gui/models/scenario_subject.hpp"
#include "gui/models/series.hpp"
#include "gui/models/sweep_engine.hpp"
#include "gui/models/sweep_runner.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/prediction/memory.hpp"

using namespace ddpsim::gui;
using json = nlohmann::json;

namespace {

const std::string kScenarios = DDPSIM_SCENARIO_DIR;

SweepRequest defaultRequest(int maxGpus = 64) {
  SweepRequest r;
  r.file = kScenarios + "/default.json";
  r.doc = ddpsim::model::read_json_file(r.file);
  r.maxGpus = maxGpus;
  return r;
}

void writeFile(const QString& path, const std::string& text) {
  std::ofstream(path.toStdString()) << text;
}

}  // namespace

class ModelsTest : public QObject {
  Q_OBJECT

 private slots:
  void gpuAxisListsEveryNodeCountWhenItFits() {
    // 64 GPUs of 8 per node: 1, 2, 4 (part of a node), then 8, 16, ..., 64 (1 to 8 nodes).
    const std::vector<int> expected = {1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64};
    QCOMPARE(gpuAxis(64, 8), expected);
    QCOMPARE(gpuAxis(4, 8), (std::vector<int>{1, 2, 4}));
    QCOMPARE(gpuAxis(6, 8), (std::vector<int>{1, 2, 4, 6}));
  }

  // The window's axis when the scenario sweeps GPU counts (issue 19 item 6): the file's own
  // counts, sorted and unique; thinned by rank to maxPoints keeping the first and the last.
  void scenarioGpuCountsAreTheFilesOwn() {
    QCOMPARE(scenarioGpuCounts(json{{"sweep", {{"cluster.gpus", {64, 8, 8, 1, 16}}}}}),
             (std::vector<int>{1, 8, 16, 64}));
    QVERIFY(scenarioGpuCounts(json{{"cluster", {{"gpus", 8}}}}).empty());
    json many = json::array();
    for (int g = 1; g <= 200; ++g) many.push_back(g);
    const std::vector<int> t = scenarioGpuCounts(json{{"sweep", {{"cluster.gpus", many}}}}, 10);
    QCOMPARE(t.size(), std::size_t{10});
    QCOMPARE(t.front(), 1);
    QCOMPARE(t.back(), 200);
    QVERIFY(std::is_sorted(t.begin(), t.end()) &&
            std::adjacent_find(t.begin(), t.end()) == t.end());
    // Geometric by rank: 200^(1/9) = 1.80 -> the second kept is rank 2 (value 2).
    QCOMPARE(t[1], 2);
  }

  void gpuAxisThinsGeometricallyToMaxPoints() {
    const std::vector<int> a = gpuAxis(4096, 8, 64);
    QVERIFY(a.size() <= 64);
    QCOMPARE(a.front(), 1);
    QCOMPARE(a.back(), 4096);
    for (std::size_t i = 1; i < a.size(); ++i) {
      QVERIFY(a[i] > a[i - 1]);
      if (a[i] >= 8) QCOMPARE(a[i] % 8, 0);  // every count above a node is whole nodes
    }
  }

  void defaultMaxGpusFollowsTheSweep() {
    QCOMPARE(defaultMaxGpus(ddpsim::model::read_json_file(kScenarios + "/default.json")), 1024);
    QCOMPARE(defaultMaxGpus(json{{"cluster", {{"gpus", 32}}}}), 64);
    QCOMPARE(defaultMaxGpus(json{{"cluster", {{"gpus", 256}}}}), 256);
  }

  void roundTripIsExactForEveryShippedScenario() {
    QTemporaryDir tmp;
    QStringList files = {QString::fromStdString(kScenarios + "/default.json")};
    for (const auto& e : std::filesystem::directory_iterator(kScenarios + "/examples")) {
      if (e.is_regular_file() && e.path().extension() == ".json") {
        files << QString::fromStdString(e.path().string());
      }
    }
    for (const QString& f : files) {
      ScenarioDocument doc;
      QString err;
      QVERIFY2(doc.load(f, &err), qPrintable(err));
      const QString out = tmp.filePath(QStringLiteral("out.json"));
      QVERIFY2(doc.save(out, &err), qPrintable(err));
      QCOMPARE(ddpsim::model::read_json_file(out.toStdString()),
               ddpsim::model::read_json_file(f.toStdString()));
    }
  }

  void validationNamesThePointer() {
    ScenarioDocument doc;
    QString err;
    QVERIFY(doc.load(QString::fromStdString(kScenarios + "/default.json"), &err));
    QVERIFY(doc.isValid());
    QSignalSpy changed(&doc, &ScenarioDocument::changed);
    doc.setValue("/training/per_gpu_batch", 0);
    QCOMPARE(changed.count(), 1);
    QVERIFY(!doc.isValid());
    QCOMPARE(doc.issuePointer(), QStringLiteral("/training/per_gpu_batch"));
    QVERIFY(doc.issueMessage().contains(QStringLiteral("/training/per_gpu_batch")));
    QVERIFY(doc.issueMessage().contains(QStringLiteral("default.json")));
    QVERIFY(doc.isModified());
    doc.setValue("/training/per_gpu_batch", 4);
    QVERIFY(doc.isValid());
    QVERIFY(!doc.isModified());  // back to the file's value: nothing to save (issue 19 item 4)
    // Setting an equal value is not a change.
    doc.setValue("/training/per_gpu_batch", 4);
    QCOMPARE(changed.count(), 2);
    // Nested keys are created on the way and removed again.
    doc.setValue("/pricing/gpu_hour_usd", 2.5);
    QCOMPARE(doc.value("/pricing/gpu_hour_usd"), json(2.5));
    doc.removeValue("/pricing");
    QVERIFY(doc.value("/pricing").is_null());
    // A preset name the zoo does not have is the validator's error at /model/preset.
    doc.setValue("/model/preset", std::string("gpt-17"));
    QVERIFY(!doc.isValid());
    QVERIFY(doc.issuePointer().startsWith(QStringLiteral("/model")));
  }

  void jsonDiffListsChangedLeaves() {
    const json a = {{"cluster", {{"gpus", 8}}}, {"name", "a"}, {"x", {1, 2}}};
    const json b = {
        {"cluster", {{"gpus", 16}, {"gpus_per_node", 4}}}, {"name", "a"}, {"x", {1, 3}}};
    const auto d = jsonDiff(a, b);
    QCOMPARE(d.size(), std::size_t{3});
    QCOMPARE(d[0].pointer, std::string("/cluster/gpus"));
    QCOMPARE(d[0].left, std::string("8"));
    QCOMPARE(d[0].right, std::string("16"));
    QCOMPARE(d[1].pointer, std::string("/cluster/gpus_per_node"));
    QCOMPARE(d[1].left, std::string("(absent)"));
    QCOMPARE(d[2].pointer, std::string("/x"));
    QVERIFY(jsonDiff(a, a).empty());
  }

  void sweepAgreesWithThePredictor() {
    const SweepRequest req = defaultRequest(64);
    const SweepResult r = computeSweep(req);
    QVERIFY2(r.error.empty(), r.error.c_str());
    const std::vector<int> axis = gpuAxis(64, 8);
    QCOMPARE(r.points.size(), axis.size());
    const ddpsim::model::Scenario s = ddpsim::model::parse_scenario(req.doc, req.file);
    const ddpsim::sim::Predictor p(s);
    for (std::size_t i = 0; i < axis.size(); ++i) {
      QVERIFY2(r.points[i].ok(), r.points[i].error.c_str());
      QCOMPARE(r.points[i].gpus, axis[i]);
      ddpsim::model::ClusterConfig c = s.cluster;
      c.gpus = axis[i];
      const auto pred = p.predict(c, s.training, s.parallelism, s.gpu_hour_usd);
      QCOMPARE(r.points[i].stepTimeS, pred.step_time_s);
      QCOMPARE(r.points[i].exposedCommS, pred.exposed_comm_s);
      QCOMPARE(r.points[i].computeS, pred.forward_time_s + pred.backward_time_s);
      QCOMPARE(r.points[i].memoryBytes, pred.memory.total());
    }
    // One GPU: no communication exposed, efficiency 100% both ways.
    QCOMPARE(r.points[0].exposedCommS, 0.0);
    QCOMPARE(r.points[0].weakEfficiency, 1.0);
    QCOMPARE(r.capacityBytes, s.hardware.gpu.memory_bytes);
  }

  void memoryCoversEveryStrategy() {
    const SweepResult r = computeSweep(defaultRequest(8));
    QCOMPARE(r.memory.size(), std::size_t{8});  // ddp .. fsdp_hybrid, fsdp2
    QCOMPARE(r.memory[0].strategy, std::string("ddp"));
    QCOMPARE(r.memory[0].source, std::string("predictor"));
    // DDP at the scenario's 8 GPUs is the prediction's memory.
    const StepPoint* at8 = nullptr;
    for (const StepPoint& p : r.points) {
      if (p.gpus == 8) at8 = &p;
    }
    QVERIFY(at8);
    QCOMPARE(r.memory[0].totalBytes(), at8->memoryBytes);
    for (const StrategyMemory& m : r.memory) QVERIFY2(m.error.empty(), m.error.c_str());
    // ZeRO sharding (memory.hpp): ZeRO-1 shards the optimizer states over 8 GPUs, so they are
    // 1/8 of DDP's; ZeRO-3 shards parameters as well.
    QCOMPARE(r.memory[1].strategy, std::string("zero1"));
    QVERIFY(qFuzzyCompare(r.memory[1].optimizerBytes * 8, r.memory[0].optimizerBytes));
    QVERIFY(r.memory[3].paramsBytes < r.memory[0].paramsBytes);
  }

  // Issue 19 item 1: GPT-2 XL at a per-GPU batch of 24 needs more than an 80 GiB H100 at every
  // GPU count under DDP; the warning names the GPU counts, the worst point against the capacity
  // and the largest memory term (activations, at that batch). At batch 4 everything fits.
  void notFittingPointsAreNamed() {
    SweepRequest req = defaultRequest(16);
    QVERIFY(memoryWarning(computeSweep(req)).isEmpty());
    req.doc["training"]["per_gpu_batch"] = 24;
    const SweepResult r = computeSweep(req);
    const QList<int> bad = gpusNotFitting(r);
    QCOMPARE(bad.size(), static_cast<qsizetype>(r.points.size()));
    const StepPoint* worst = &r.points.front();
    for (const StepPoint& p : r.points) {
      if (p.memoryBytes > worst->memoryBytes) worst = &p;
    }
    QVERIFY(worst->memoryBytes > r.capacityBytes);
    const QString w = memoryWarning(r);
    QVERIFY2(
        w.startsWith(QStringLiteral("does not fit in GPU memory at 1-16 GPUs (5 of 5 points)")),
        qPrintable(w));
    QVERIFY2(w.contains(QStringLiteral("%1 GiB per GPU at %2 GPU")
                            .arg(worst->memoryBytes / (1024.0 * 1024.0 * 1024.0), 0, 'f', 1)
                            .arg(worst->gpus)),
             qPrintable(w));
    QVERIFY2(w.contains(QStringLiteral("capacity 80.0 GiB")), qPrintable(w));
    QVERIFY2(w.contains(QStringLiteral("largest term at 8 GPUs: activations")), qPrintable(w));
  }

  void everyStrategyGivesPointsOrMessages() {
    // Every sharded strategy has a step model (simulator/analytic/sharded.hpp), so each point of
    // the 1..16 GPU axis is a prediction, with one exception that must be a message, never a throw:
    // fsdp_hybrid (HYBRID_SHARD) shards within a node, so 1, 2 and 4 GPUs (not a multiple of
    // gpus_per_node = 8) are refused naming /cluster/gpus_per_node, and the sweep goes on to 8
    // and 16. The timeline is simulated at the scenario's 8 GPUs, which every strategy runs.
    for (const char* st : {"zero1", "zero2", "zero3", "fsdp_full_shard", "fsdp_shard_grad_op",
                           "fsdp_hybrid", "fsdp2"}) {
      SweepRequest req = defaultRequest(16);
      req.doc["parallelism"]["strategy"] = st;
      const SweepResult r = computeSweep(req);
      QVERIFY2(r.error.empty(), r.error.c_str());
      QCOMPARE(r.strategy, std::string(st));
      QCOMPARE(r.points.size(), std::size_t{5});  // 1, 2, 4, 8, 16
      for (const StepPoint& p : r.points) {
        if (std::string(st) == "fsdp_hybrid" && p.gpus < 8) {
          QVERIFY2(!p.ok(), st);
          QVERIFY2(p.error.find("/cluster/gpus_per_node") != std::string::npos, p.error.c_str());
        } else {
          QVERIFY2(p.ok(), p.error.c_str());
          QVERIFY(p.stepTimeS > 0);
        }
      }
      QVERIFY2(r.timeline.error.empty(), r.timeline.error.c_str());
      QVERIFY(!r.timeline.spans.empty());
      QCOMPARE(r.memory.size(), std::size_t{8});  // ddp .. fsdp_hybrid, fsdp2
    }
  }

  void timelineMatchesTheAnalyticStep() {
    const SweepResult r = computeSweep(defaultRequest(8));
    QVERIFY2(r.timeline.error.empty(), r.timeline.error.c_str());
    QCOMPARE(r.timeline.gpus, 8);
    QVERIFY(!r.timeline.spans.empty());
    QVERIFY(r.timeline.ranks.size() >= 4);
    // event/simulate.hpp: with no jitter the event step equals the analytic one within 1 ns per
    // event.
    double analytic = 0;
    for (const StepPoint& p : r.points) {
      if (p.gpus == 8) analytic = p.stepTimeS;
    }
    QVERIFY(std::abs(r.timeline.stepTimeS - analytic) < 1e-6);
    bool collective = false;
    for (const TimelineSpan& s : r.timeline.spans) {
      QVERIFY(s.endS >= s.startS);
      QVERIFY(s.lane >= 0 && s.lane < static_cast<int>(2 * r.timeline.ranks.size()));
      collective |= s.kind == TimelineSpan::Kind::kCollective && s.bucket >= 0;
    }
    QVERIFY(collective);
  }

  void planHasAFrontAndAChoice() {
    SweepRequest req;
    req.file = kScenarios + "/examples/plan-gpt2-xl.json";
    req.doc = ddpsim::model::read_json_file(req.file);
    req.maxGpus = 1024;
    const SweepResult r = computeSweep(req);
    QVERIFY2(r.plan.error.empty(), r.plan.error.c_str());
    QVERIFY(!r.plan.pareto.empty());
    QVERIFY(r.plan.chosen.has_value());
    QVERIFY(!r.plan.byThroughput);
    // The Cartesian product of the plan's candidate lists (8 GPU counts x 3 batches x ...).
    std::size_t product = 1;
    for (const auto& [key, list] : req.doc.at("plan").items()) {
      if (list.is_array()) product *= list.size();
    }
    QVERIFY(product >= 24);
    QCOMPARE(r.plan.candidates, product);
    QCOMPARE(costLabel(r), QStringLiteral("cost to train (USD)"));
    // Issue 19 item 3: the chosen point's label names its strategy and cost.
    const PlanPointView& c = *r.plan.chosen;
    QVERIFY(c.costUsd.has_value());
    const QString label = planPointLabel(c, r.plan.byThroughput);
    QVERIFY2(label.startsWith(QStringLiteral("chosen: %1 GPUs, %2, %3 per GPU")
                                  .arg(c.gpus)
                                  .arg(QString::fromStdString(c.strategy))
                                  .arg(c.perGpuBatch)),
             qPrintable(label));
    QVERIFY2(label.endsWith(QStringLiteral(", $%1").arg(*c.costUsd, 0, 'f', 0)), qPrintable(label));
    PlanPointView one = c;
    one.gpus = 1;
    one.costUsd.reset();
    one.gpuHoursMetric = 12.34;
    QVERIFY2(planPointLabel(one, true).startsWith(QStringLiteral("chosen: 1 GPU, ")),
             qPrintable(planPointLabel(one, true)));
    QVERIFY(
        planPointLabel(one, true).endsWith(QStringLiteral(", 12.3 GPU-hours per million samples")));
  }

  // Issue 21: with a reliability section the Time & cost series are the planner's metrics (time
  // with failures) and the failure-free times and the ETTR come beside them.
  void failuresSeriesAndEttr() {
    SweepRequest req;
    req.file = kScenarios + "/examples/plan-llama-2-7b-failures.json";
    req.doc = ddpsim::model::read_json_file(req.file);
    req.gpuCounts = {1024, 2048};
    req.withPlan = false;
    req.withTimeline = false;
    const SweepResult r = computeSweep(req);
    QVERIFY2(r.error.empty(), r.error.c_str());
    QCOMPARE(r.points.size(), std::size_t{2});
    const QList<QPointF> with = timeToTrainSeries(r);
    const QList<QPointF> without = timeWithoutFailuresSeries(r);
    QCOMPARE(with.size(), 2);
    QCOMPARE(without.size(), 2);
    for (int i = 0; i < 2; ++i) {
      const StepPoint& p = r.points[static_cast<std::size_t>(i)];
      QVERIFY(p.ettr.has_value() && *p.ettr > 0 && *p.ettr < 1);
      // time with failures = time without / ETTR, both in hours
      QVERIFY(std::abs(with[i].y() * *p.ettr - without[i].y()) <= 1e-9 * without[i].y());
    }
    // 2,048 GPUs train faster without failures and slower with them (the example's point).
    QVERIFY(without[1].y() < without[0].y());
    QVERIFY(with[1].y() > with[0].y());
    QCOMPARE(timeToTrainLabel(r), QStringLiteral("time to train with failures (h)"));
    QVERIFY2(ettrText(r).startsWith(QStringLiteral("ETTR 0.819 at 1024 GPUs to 0.694 at 2048")),
             qPrintable(ettrText(r)));
    // Without the section: no second series, no ETTR.
    req.doc.erase("reliability");
    const SweepResult plain = computeSweep(req);
    QVERIFY(timeWithoutFailuresSeries(plain).isEmpty());
    QVERIFY(ettrText(plain).isEmpty());
    QCOMPARE(timeToTrainLabel(plain), QStringLiteral("time to train (h)"));
  }

  void invalidDocumentGivesTheMessage() {
    SweepRequest req = defaultRequest();
    req.doc["training"]["per_gpu_batch"] = 0;
    const SweepResult r = computeSweep(req);
    QVERIFY(r.error.find("/training/per_gpu_batch") != std::string::npos);
    QVERIFY(r.points.empty());
  }

  void seriesStackToTheStepTime() {
    const SweepResult r = computeSweep(defaultRequest(64));
    const QList<QPointF> top = stackedStepSeries(r, StepComponent::kOther);
    const QList<QPointF> step = stepTimeSeries(r);
    QCOMPARE(top.size(), step.size());
    for (int i = 0; i < top.size(); ++i) {
      QCOMPARE(top[i].x(), step[i].x());
      QVERIFY(std::abs(top[i].y() - step[i].y()) <= 1e-9 * step[i].y());
    }
    QCOMPARE(weakEfficiencySeries(r).front().y(), 100.0);
  }

  void tableAndCsv() {
    auto r = std::make_shared<const SweepResult>(computeSweep(defaultRequest(64)));
    ResultsTableModel m;
    m.setResult(r);
    QCOMPARE(m.rowCount(), static_cast<int>(r->points.size()));
    const QStringList lines = m.toCsv().trimmed().split(QLatin1Char('\n'));
    QCOMPARE(lines.size(), m.rowCount() + 1);
    // "fits" first (issue 19), then the GPU count, nodes, global batch, step time.
    QVERIFY(
        lines[0].startsWith(QStringLiteral("fits_in_memory,gpus,nodes,global_batch,step_time_s")));
    QVERIFY(lines[1].startsWith(QStringLiteral("yes,1,1,4,")));  // fits, 1 GPU, 1 node, batch 4
    const QStringList cells = lines[2].split(QLatin1Char(','));
    QCOMPARE(cells[4].toDouble(), r->points[1].stepTimeS);  // full precision in the CSV
    QCOMPARE(m.data(m.index(0, 0)).toString(), QStringLiteral("yes"));
    QCOMPARE(m.data(m.index(0, 1)).toString(), QStringLiteral("1"));
    // A remainder that rounds to zero is "0.00", never "-0.00" (issue 19 item 7).
    SweepResult tiny = *r;
    tiny.points[0].exposedCommS = -1e-15;
    tiny.points[0].fitsInMemory = false;
    m.setResult(std::make_shared<const SweepResult>(tiny));
    QCOMPARE(m.data(m.index(0, 6)).toString(), QStringLiteral("0.00"));
    QCOMPARE(m.data(m.index(0, 0)).toString(), QStringLiteral("no"));
    QCOMPARE(m.headerData(6, Qt::Horizontal).toString(), QStringLiteral("exposed comm (ms)"));
  }

  void runnerDeliversOnlyTheLatest() {
    SweepRunner runner;
    QSignalSpy spy(&runner, &SweepRunner::finished);
    const int n = 12;
    for (int i = 1; i <= n; ++i) {
      SweepRequest req = defaultRequest(64);
      req.doc["parallelism"]["bucket_cap_mb"] = i;
      QCOMPARE(runner.request(req), static_cast<quint64>(i));
    }
    QTRY_VERIFY_WITH_TIMEOUT(
        spy.count() >= 1 && spy.last().at(0).value<SweepResultPtr>()->generation == n, 30000);
    runner.waitForDone();
    QCoreApplication::processEvents();
    // Every request was either skipped before starting, dropped on arrival or delivered, and
    // only the latest was delivered.
    QCOMPARE(static_cast<quint64>(spy.count()) + runner.skippedJobs() + runner.droppedResults(),
             static_cast<quint64>(n));
    for (const auto& args : spy)
      QCOMPARE(args.at(0).value<SweepResultPtr>()->generation, quint64(n));
  }

  void measuredPointsAreRead() {
    QTemporaryDir dir;
    writeFile(dir.filePath("validation-a.json"),
              R"({"scenario": {"name": "S"}, "results": [
                   {"gpus": 8, "measured": {"step_time_s": 0.5}, "predicted": {"step_time_s": 0.4}},
                   {"gpus": 16, "step_time_s": 0.7}]})");
    writeFile(dir.filePath("validation-b.json"),
              R"({"scenario_name": "other", "results": [{"gpus": 8, "step_time_s": 9}]})");
    writeFile(dir.filePath("validation-c.json"), "{not json");
    writeFile(dir.filePath("other.json"), R"({"gpus": 4, "step_time_s": 1})");
    writeFile(dir.filePath("validation-d.json"),
              R"({"predicted": [{"gpus": 2, "step_time_s": 3}]})");
    const auto pts = readMeasured(dir.path().toStdString(), "S");
    QCOMPARE(pts.size(), std::size_t{2});
    QCOMPARE(pts[0].gpus, 8);
    QCOMPARE(pts[0].stepTimeS, 0.5);
    QCOMPARE(pts[1].gpus, 16);
    QCOMPARE(pts[1].stepTimeS, 0.7);
    QCOMPARE(pts[0].source, std::string("validation-a.json"));
  }
  // Issue 41 item 3: one money format, durations that keep their digits, no "1e+06" axis.
  void numbersAreFormattedForABuyer() {
    QCOMPARE(formatMoney(286807.2), QStringLiteral("$286,807"));
    QCOMPARE(formatMoney(56.34), QStringLiteral("$56.3"));
    QCOMPARE(formatMoney(0.05123), QStringLiteral("$0.0512"));
    QCOMPARE(formatMoney(0), QStringLiteral("$0"));
    QCOMPARE(formatNumber(12345.6), QStringLiteral("12,346"));
    QCOMPARE(formatNumber(0.001234), QStringLiteral("0.00123"));
    QCOMPARE(formatHours(0.00123), QStringLiteral("4.43 s"));  // was "0.00 h"
    QCOMPARE(formatHours(0.25), QStringLiteral("15.0 min"));
    QCOMPARE(formatHours(1.4), QStringLiteral("1.40 h"));
    QCOMPARE(formatHours(112.3), QStringLiteral("4 d 16 h"));
    QCOMPARE(axisLabelFormat(1000, 1e7, "$"), QStringLiteral("$%.0f"));  // "$10,000,000"
    QCOMPARE(axisLabelFormat(0.01, 100), QStringLiteral("%.3g"));        // "0.01" .. "100"
    QCOMPARE(axisLabelFormat(0.01, 1e7), QStringLiteral("%.8g"));        // never "1e+07"
  }

  // Issue 41 item 3, defect 7: the planner reads the panel's max GPUs as plan.max_gpus when the
  // file bounds nothing; a file's own bound and sizes are kept; plan.hardware limits are capped.
  void planDocumentIsBoundedByThePanel() {
    const json def = ddpsim::model::read_json_file(kScenarios + "/default.json");
    QCOMPARE(planDocument(def, 1024).at("plan"), json({{"max_gpus", 1024}}));
    QCOMPARE(planDocument(def, 0), def);
    const json gpt2 = ddpsim::model::read_json_file(kScenarios + "/examples/plan-gpt2-xl.json");
    QCOMPARE(planDocument(gpt2, 16), gpt2);  // its own plan.gpus
    const std::string buyFile = kScenarios + "/examples/plan-buy-llama-3-8b.json";
    const json buy = ddpsim::model::read_json_file(buyFile);
    const json b = planDocument(buy, 40);
    QCOMPARE(b.at("plan").at("max_gpus"), json(40));
    QCOMPARE(b.at("plan").at("hardware").at(0).at("max_gpus"), json(40));
    QCOMPARE(b.at("plan").at("hardware").at(2).at("max_gpus"), json(32));
    (void)ddpsim::model::parse_scenario(b, buyFile);
    // A minimum above the bound is left to the file (no invented contradiction).
    const json high = json{{"plan", {{"min_gpus", 64}}}};
    QVERIFY(!planDocument(high, 16).at("plan").contains("max_gpus"));
  }

  // Issue 41 item 3, defect 4: a price per system; a switch takes the system's own price.
  void priceBookKeepsAPricePerSystem() {
    const json gpt2 = ddpsim::model::read_json_file(kScenarios + "/examples/plan-gpt2-xl.json");
    PriceBook book;
    book.record(gpt2);
    QCOMPARE(currentSystem(gpt2), std::string("dgx-h100"));
    QCOMPARE(book.price("dgx-h100"), std::optional<double>(2.5));
    json b200 = withSystem(gpt2, "dgx-b200", book);
    QCOMPARE(b200.at("hardware"), json({{"preset", "dgx-b200"}}));
    QVERIFY(!b200.contains("pricing"));
    book.set("dgx-b200", 5.0);
    b200 = withSystem(gpt2, "dgx-b200", book);
    QCOMPARE(currentPrice(b200), std::optional<double>(5.0));
    QCOMPARE(currentPrice(withSystem(b200, "dgx-h100", book)), std::optional<double>(2.5));
    const json buy =
        ddpsim::model::read_json_file(kScenarios + "/examples/plan-buy-llama-3-8b.json");
    QCOMPARE(currentSystem(buy), std::string("dgx-h100"));
    QCOMPARE(currentPrice(buy), std::optional<double>(2.5));
    PriceBook buyBook;
    buyBook.record(buy);
    QCOMPARE(buyBook.prices().size(), std::size_t{3});
    // /hardware set: the price goes to /pricing and to that system's plan.hardware entry.
    const json h200 = withPrice(withSystem(buy, "hgx-h200", buyBook), 3.25);
    QCOMPARE(h200.at("pricing").at("gpu_hour_usd"), json(3.25));
    QCOMPARE(h200.at("plan").at("hardware").at(1).at("gpu_hour_usd"), json(3.25));
    QCOMPARE(h200.at("plan").at("hardware").at(0).at("gpu_hour_usd"), json(2.5));
  }

  // Issue 41 item 3 (compare 2-4 systems for the same job): the ticked systems become
  // plan.hardware with their prices, an entry the file had keeps its bounds, /hardware stays,
  // fewer than two remove the list (and an emptied plan).
  void comparedSystemsBecomePlanHardware() {
    const json gpt2 = ddpsim::model::read_json_file(kScenarios + "/examples/plan-gpt2-xl.json");
    QVERIFY(comparedSystems(gpt2).empty());
    const json two = withComparedSystems(gpt2, {"dgx-h100", "hgx-h200", "dgx-h100"},
                                         {{"dgx-h100", 2.5}, {"hgx-h200", 3.5}});
    QCOMPARE(two.at("plan").at("hardware"),
             json::parse(R"([{"preset": "dgx-h100", "gpu_hour_usd": 2.5},
                             {"preset": "hgx-h200", "gpu_hour_usd": 3.5}])"));
    QCOMPARE(two.at("hardware"), gpt2.at("hardware"));
    QCOMPARE(comparedSystems(two), (std::vector<std::string>{"dgx-h100", "hgx-h200"}));
    // The other plan keys are the file's; a system without a price gets none.
    QCOMPARE(two.at("plan").at("objective"), gpt2.at("plan").at("objective"));
    const json unpriced = withComparedSystems(gpt2, {"dgx-h100", "dgx-b200"}, {});
    QVERIFY(!unpriced.at("plan").at("hardware").at(1).contains("gpu_hour_usd"));
    // A buyer's file without /hardware: its max_gpus bounds are kept, /hardware is added.
    const json buy =
        ddpsim::model::read_json_file(kScenarios + "/examples/plan-buy-llama-3-8b.json");
    const json bought = withComparedSystems(buy, {"hgx-h200", "dgx-h100"}, {{"hgx-h200", 3.0}});
    QCOMPARE(bought.at("hardware"), json({{"preset", "dgx-h100"}}));
    QCOMPARE(bought.at("plan").at("hardware").at(0).at("gpu_hour_usd"), json(3.0));
    QCOMPARE(bought.at("plan").at("hardware").at(0).at("max_gpus"),
             buy.at("plan").at("hardware").at(1).at("max_gpus"));
    QVERIFY(!bought.at("plan").at("hardware").at(1).contains("gpu_hour_usd"));
    // One system: nothing to compare.
    const json one = withComparedSystems(two, {"dgx-h100"}, {});
    QVERIFY(!one.at("plan").contains("hardware"));
    const json bare = withComparedSystems(
        ddpsim::model::read_json_file(kScenarios + "/default.json"), {"dgx-h100"}, {});
    QVERIFY(!bare.contains("plan"));
  }

  // Issue 41 item 3, defect 8: the window title's subject, read from the document as it is.
  void scenarioSubjectNamesModelAndSystem() {
    QCOMPARE(scenarioSubject(ddpsim::model::read_json_file(kScenarios + "/default.json")),
             QStringLiteral("gpt2-xl on dgx-h100"));
    QCOMPARE(scenarioSubject(ddpsim::model::read_json_file(
                 kScenarios + "/examples/llama-3-70b-fsdp2-hsdp.json")),
             QStringLiteral("llama-3-70b on dgx-h100"));
    QCOMPARE(scenarioSubject(json{{"model", {{"mlp", {{"widths", {1024, 4096, 1024}}}}}}}),
             QStringLiteral("MLP 1024-4096-1024"));
  }
};

QTEST_GUILESS_MAIN(ModelsTest)
#include "models_test.moc"
