// ddpsim-plot SCENARIO.json --chart step|scaling|memory|cost|timeline --out FILE.png|.svg
// Renders one of the planner's charts headless (Qt's offscreen platform) with the same code the
// window uses. Exit codes: 0 written, 2 bad input (one line naming the file and JSON pointer),
// 1 internal error.
#include <CLI/CLI.hpp>
#include <QApplication>
#include <QChartView>
#include <cstdio>

#include "gui/app/chart_export.hpp"
#include "gui/app/charts.hpp"
#include "gui/app/legend_fit.hpp"
#include "gui/app/timeline_view.hpp"
#include "gui/models/measured.hpp"
#include "gui/models/scenario_document.hpp"
#include "gui/models/sweep_engine.hpp"
#include "model/atomic_file.hpp"
#include "model/cli_validators.hpp"
#include "model/error.hpp"
#include "model/interrupt.hpp"
#include "model/scenario/scenario.hpp"

int main(int argc, char** argv) {
  // SIGINT/SIGTERM: the export's temporary removed, one line, exit 130/143.
  ddpsim::model::install_interrupt_handlers("ddpsim-plot");
  CLI::App cli{"ddpsim-plot: render a planner chart of a scenario to PNG or SVG (headless)"};
  std::string path, chart, out;
  int maxGpus = 0, width = 1000, height = 620, ranks = 4;
  cli.add_option("scenario", path, "scenario JSON file")->required();
  cli.add_option("--chart", chart, "step | scaling | memory | cost | timeline")
      ->required()
      ->check(CLI::IsMember({"step", "scaling", "memory", "cost", "timeline"}));
  cli.add_option("--out", out, "output file: .png or .svg")->required();
  cli.add_option("--max-gpus", maxGpus, "largest GPU count of the sweep (default: the scenario's)")
      ->check(ddpsim::model::integer_in(1, 1 << 20));
  cli.add_option("--width", width, "pixels")->check(ddpsim::model::integer_in(200, 8000));
  cli.add_option("--height", height, "pixels")->check(ddpsim::model::integer_in(150, 8000));
  cli.add_option("--ranks", ranks, "timeline: ranks drawn")
      ->check(ddpsim::model::integer_in(1, 64));
  try {
    cli.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli.exit(e);
  } catch (const CLI::ParseError& e) {
    ddpsim::print_error("ddpsim-plot", e.what());
    return 2;
  }
  if (!QString::fromStdString(out).endsWith(".png", Qt::CaseInsensitive) &&
      !QString::fromStdString(out).endsWith(".svg", Qt::CaseInsensitive)) {
    ddpsim::print_error("ddpsim-plot", "--out: expected a .png or .svg file, got " + out);
    return 2;
  }
  try {  // before any work: never onto the scenario, a FIFO or a device (model/atomic_file.hpp)
    ddpsim::model::check_output_path("--out", out, {path});
  } catch (const ddpsim::Error& e) {
    ddpsim::print_error("ddpsim-plot", e.what());
    return 2;
  }
  qputenv("QT_QPA_PLATFORM", "offscreen");  // headless whatever the session has
  int qargc = 1;
  QApplication app(qargc, argv);
  try {
    const nlohmann::json doc = ddpsim::model::read_json_file(path);
    (void)ddpsim::model::parse_scenario(doc, path);  // bad input: exit 2 with the one line
    ddpsim::gui::SweepRequest req;
    req.doc = doc;
    req.file = path;
    req.maxGpus = maxGpus > 0 ? maxGpus : ddpsim::gui::defaultMaxGpus(doc);
    // Without --max-gpus, the scenario's own GPU counts, as the window and the CLI sweep them.
    if (maxGpus <= 0) req.gpuCounts = ddpsim::gui::scenarioGpuCounts(doc, req.maxPoints);
    req.timelineRanks = ranks;
    const auto kind = *ddpsim::gui::chartKindFromName(QString::fromStdString(chart));
    req.withMemory = kind == ddpsim::gui::ChartKind::kMemory;
    req.withPlan = kind == ddpsim::gui::ChartKind::kCost;
    req.withTimeline = kind == ddpsim::gui::ChartKind::kTimeline;
    const ddpsim::gui::SweepResult r = ddpsim::gui::computeSweep(req);
    ddpsim::gui::ChartOverlay overlay;
    overlay.measured = ddpsim::gui::readMeasured(ddpsim::gui::defaultResultsDir(), r.name);

    std::unique_ptr<QWidget> view;
    if (kind == ddpsim::gui::ChartKind::kTimeline) {
      auto* t = new ddpsim::gui::TimelineView;
      t->setTimeline(r.timeline);
      view.reset(t);
      if (!r.timeline.error.empty()) {
        ddpsim::print_error("ddpsim-plot", "warning: " + r.timeline.error);
      }
    } else {
      auto* c = new QChart;
      c->setAnimationOptions(QChart::NoAnimation);
      ddpsim::gui::buildChart(kind, c, r, overlay);
      auto* v = new QChartView(c);
      v->setRenderHint(QPainter::Antialiasing);
      view.reset(v);
      for (const auto& p : r.points) {
        if (!p.ok()) {
          ddpsim::print_error("ddpsim-plot",
                              "warning: " + std::to_string(p.gpus) + " GPUs: " + p.error);
          break;
        }
      }
    }
    view->resize(width, height);
    view->setAttribute(Qt::WA_DontShowOnScreen);
    view->show();
    QApplication::processEvents();
    // Every legend entry whole at the chosen size (legend_fit.hpp).
    if (auto* v = qobject_cast<QChartView*>(view.get())) {
      ddpsim::gui::fitLegend(v->chart());
      QApplication::processEvents();
    }
    QString err;
    if (!ddpsim::gui::exportView(view.get(), QString::fromStdString(out), &err)) {
      ddpsim::print_error("ddpsim-plot", err.toStdString());
      return 2;
    }
    return 0;
  } catch (const ddpsim::Error& e) {
    ddpsim::print_error("ddpsim-plot", e.what());
    return 2;
  } catch (const std::exception& e) {
    ddpsim::print_error("ddpsim-plot", std::string("internal error: ") + e.what());
    return 1;
  }
}
