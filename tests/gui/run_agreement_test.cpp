// QTest: the GUI's sweep engine and the `ddpsim` CLI are two front-ends of one run API
// (simulator/run.hpp), so they must give the same answer for the same scenario. The CLI runs as
// a real process (`ddpsim predict F --engine event --format json`); the sweep engine predicts
// the scenario's own sweep points with the event engine. Every scenario in scenarios/ (the
// default and the examples) must give identical result objects, or the same one-line error.
// The Timeline must honour every simulation knob (interference, local SGD, network flow): its
// one simulated step equals the CLI's `--engine event` step of the same scenario with
// simulation.steps = 1 (the GUI's timeline once ran the event engine with hand-copied options
// that left those knobs out).
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gui/models/sweep_engine.hpp"
#include "model/scenario/scenario.hpp"
#include "tests/common/subprocess.hpp"

using namespace ddpsim::gui;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kScenarios = DDPSIM_SCENARIO_DIR;

/// Every scenario file of scenarios/: default.json and examples/*.json (imports/ holds DeepSpeed
/// configs and PyTorch knobs, models/ and hardware/ presets: none is a scenario).
std::vector<fs::path> scenarioFiles() {
  std::vector<fs::path> out = {fs::path(kScenarios) / "default.json"};
  for (const auto& e : fs::directory_iterator(fs::path(kScenarios) / "examples")) {
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct CliAnswer {
  int exitCode = -1;
  json doc;           ///< the JSON document (exit 0)
  std::string error;  ///< stderr without the "ddpsim: " prefix and newline (exit != 0)
};

CliAnswer cli(const fs::path& scenario, const fs::path& cwd) {
  const ddpsim::testing::Outcome o = ddpsim::testing::run(
      {DDPSIM_CLI, "predict", scenario.string(), "--engine", "event", "--format", "json"}, cwd,
      300);
  CliAnswer a;
  a.exitCode = o.exit_code;
  if (o.exit_code == 0) {
    a.doc = json::parse(o.out);
  } else {
    a.error = o.err;
    if (a.error.rfind("ddpsim: ", 0) == 0) a.error.erase(0, 8);
    while (!a.error.empty() && a.error.back() == '\n') a.error.pop_back();
  }
  return a;
}

SweepRequest eventRequest(const json& doc, const std::string& file) {
  SweepRequest r;
  r.doc = doc;
  r.file = file;
  r.engine = ddpsim::model::Engine::kEvent;
  r.scenarioSweep = true;
  r.withJson = true;
  r.withMemory = false;
  r.withPlan = false;
  r.withTimeline = false;
  return r;
}

}  // namespace

class RunAgreementTest : public QObject {
  Q_OBJECT

 private slots:
  void sweepEngineAndCliAgreeOnEveryScenario() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    int compared = 0;
    for (const fs::path& f : scenarioFiles()) {
      const CliAnswer c = cli(f, tmp.path().toStdString());
      const SweepResult g =
          computeSweep(eventRequest(ddpsim::model::read_json_file(f.string()), f.string()));
      if (c.exitCode != 0) {
        QCOMPARE(c.exitCode, 2);
        QCOMPARE(QString::fromStdString(g.error), QString::fromStdString(c.error));
        continue;
      }
      QVERIFY2(g.error.empty(), (f.string() + ": " + g.error).c_str());
      const json& results = c.doc.at("results");
      QCOMPARE(g.points.size(), results.size());
      for (std::size_t i = 0; i < g.points.size(); ++i) {
        if (g.points[i].json != results[i]) {
          QFAIL((f.string() + ": point " + std::to_string(i) + " differs:\nGUI " +
                 g.points[i].json.dump() + "\nCLI " + results[i].dump())
                    .c_str());
        }
        QCOMPARE(g.points[i].stepTimeS, results[i].at("step_time_s").get<double>());
        ++compared;
      }
    }
    QVERIFY(compared >= 12);  // every example has at least one point
  }

  void timelineHonoursEverySimulationKnob() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::string base = kScenarios + "/default.json";
    // The default scenario at 16 GPUs, one step, with each knob the old timeline ignored.
    std::vector<json> variants;
    for (const json& sim :
         {json{{"interference", 1.5}}, json{{"local_sgd_period", 4}, {"steps", 4}},
          // Four jobs on the network: with NCCL's NVLS_TREE the default scenario's buckets hide
          // under the backward unless the network is shared this much.
          json{{"network", "flow"}, {"background_traffic", 0.5}, {"concurrent_jobs", 4}}}) {
      json d = ddpsim::model::read_json_file(base);
      d.erase("sweep");
      d["cluster"]["gpus"] = 16;
      d["simulation"] = sim;
      if (!d["simulation"].contains("steps")) d["simulation"]["steps"] = 1;
      variants.push_back(d);
    }
    double plainStep = 0;
    {
      json d = variants[0];
      d["simulation"].erase("interference");
      SweepRequest r = eventRequest(d, base);
      r.withTimeline = true;
      plainStep = computeSweep(r).timeline.stepTimeS;
      QVERIFY(plainStep > 0);
    }
    for (std::size_t i = 0; i < variants.size(); ++i) {
      const fs::path copy =
          fs::path(tmp.path().toStdString()) / ("variant-" + std::to_string(i) + ".json");
      std::ofstream(copy) << variants[i].dump(2);
      const CliAnswer c = cli(copy, tmp.path().toStdString());
      QCOMPARE(c.exitCode, 0);
      SweepRequest r = eventRequest(variants[i], copy.string());
      r.withTimeline = true;
      const SweepResult g = computeSweep(r);
      QVERIFY2(g.timeline.error.empty(), g.timeline.error.c_str());
      const double cliStep = c.doc.at("results")[0].at("step_time_s").get<double>();
      QCOMPARE(g.timeline.stepTimeS, cliStep);
      QVERIFY2(std::abs(cliStep - plainStep) > 1e-6 * plainStep,
               ("knob " + variants[i]["simulation"].dump() + " changed nothing").c_str());
    }
  }
};

QTEST_GUILESS_MAIN(RunAgreementTest)
#include "run_agreement_test.moc"
