// ddpsim-gui [SCENARIO.json] [--screenshot FILE.png [--tab NAME] [--size WxH]]: the planner window
// (scenarios/default.json when no scenario is given and the data folder has one). --screenshot
// waits for the first redraw, saves the window as the display server shows it (QScreen grab;
// on the offscreen platform, the widget's own rendering) and exits: scripts/gui-screenshot.sh.
// A scenario that cannot be read opens the window with the error in the status bar (and on
// stderr); with --screenshot it exits 2.
#include <QApplication>
#include <QBuffer>
#include <QChartView>
#include <QFileInfo>
#include <QScreen>
#include <QTabWidget>
#include <QTimer>
#include <cstdio>
#include <filesystem>

#include "gui/app/main_window.hpp"
#include "model/atomic_file.hpp"
#include "model/error.hpp"
#include "model/interrupt.hpp"
#include "model/paths.hpp"

int main(int argc, char** argv) {
  // SIGINT/SIGTERM (a terminal's Ctrl-C): an export or a save being written leaves no
  // temporary; one line, exit 130/143 (model/interrupt.hpp).
  ddpsim::model::install_interrupt_handlers("ddpsim-gui");
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("ddpsim"));  // QSettings: recent files
  QApplication::setApplicationName(QStringLiteral("ddpsim-gui"));
  QApplication::setApplicationVersion(QStringLiteral(DDPSIM_VERSION));
  QStringList args = QApplication::arguments();
  args.removeFirst();
  QString path, screenshot, tab;
  QSize size;
  for (int i = 0; i < args.size(); ++i) {
    if (args[i] == QStringLiteral("--screenshot") && i + 1 < args.size()) {
      screenshot = args[++i];
    } else if (args[i] == QStringLiteral("--tab") && i + 1 < args.size()) {
      tab = args[++i];
    } else if (args[i] == QStringLiteral("--size") && i + 1 < args.size()) {
      const QStringList wh = args[++i].split(QLatin1Char('x'));
      bool okW = false, okH = false;
      if (wh.size() == 2) size = QSize(wh[0].toInt(&okW), wh[1].toInt(&okH));
      if (!okW || !okH || size.width() < 200 || size.height() < 200 || size.width() > 10000 ||
          size.height() > 10000) {
        std::fprintf(stderr,
                     "ddpsim-gui: --size: expected WIDTHxHEIGHT, 200..10000 each, got '%s'\n",
                     qPrintable(args[i]));
        return 2;
      }
    } else if (args[i] == QStringLiteral("--help") || args[i] == QStringLiteral("-h")) {
      std::printf(
          "usage: ddpsim-gui [SCENARIO.json] [--screenshot FILE.png [--tab NAME] [--size WxH]]\n");
      return 0;
    } else if (!args[i].startsWith(QLatin1Char('-')) && path.isEmpty()) {
      path = args[i];
    } else {
      std::fprintf(stderr,
                   "ddpsim-gui: unexpected argument '%s' (usage: ddpsim-gui "
                   "[SCENARIO.json] [--screenshot FILE.png [--tab NAME] [--size WxH]])\n",
                   qPrintable(args[i]));
      return 2;
    }
  }
  const bool explicitPath = !path.isEmpty();
  if (path.isEmpty()) {
    try {
      const auto def = ddpsim::model::data_dir() / "default.json";
      if (std::filesystem::exists(def)) path = QString::fromStdString(def.string());
    } catch (const std::exception&) {
      // No data folder: start with an empty document.
    }
  }
  ddpsim::gui::MainWindow w;
  const bool opened = !path.isEmpty() && w.openFile(path);
  if (!path.isEmpty() && !opened && explicitPath) {
    std::fprintf(stderr, "ddpsim-gui: %s\n", qPrintable(w.statusText()));
    // A screenshot has nothing to show; a user gets the window with the error in its status bar
    // (File > Open to pick another file) instead of a message on a terminal they may not see.
    if (!screenshot.isEmpty()) return 2;
  }
  // A file the user named is a recent file (File > Open recent); a screenshot run leaves the
  // user's settings alone.
  if (opened && explicitPath && screenshot.isEmpty()) w.addRecentFile(path);
  if (!tab.isEmpty()) {
    for (int i = 0; i < w.tabs()->count(); ++i) {
      // The first tab whose title starts with NAME ("Time" is Time & cost, not Timeline).
      if (w.tabs()->tabText(i).remove(QLatin1Char('&')).startsWith(tab, Qt::CaseInsensitive)) {
        w.tabs()->setCurrentIndex(i);
        break;
      }
    }
  }
  if (size.isValid()) w.resize(size);
  w.show();
  if (!screenshot.isEmpty()) {
    QObject::connect(&w, &ddpsim::gui::MainWindow::redrawn, &w, [&] {
      // Let the redraw reach the display before grabbing it.
      QTimer::singleShot(700, &w, [&] {
        if (w.runner()->latestGeneration() != w.lastResult()->generation) return;
        const bool offscreen = QGuiApplication::platformName() == QStringLiteral("offscreen");
        const QPixmap shot = offscreen ? w.grab() : w.screen()->grabWindow(w.winId());
        // Through the one output guard (model/atomic_file.hpp): never onto a FIFO, a device or
        // the scenario, atomically, every write checked.
        QByteArray bytes;
        QBuffer buffer(&bytes);
        bool ok = buffer.open(QIODevice::WriteOnly) && shot.save(&buffer, "PNG");
        try {
          if (ok) {
            ddpsim::model::check_output_path("--screenshot", screenshot.toStdString(),
                                             {path.toStdString()});
            ddpsim::model::write_file_atomic(screenshot.toStdString(), bytes.toStdString());
          }
        } catch (const std::exception& e) {
          ddpsim::print_error("ddpsim-gui", e.what());
          ok = false;
        }
        std::printf("ddpsim-gui: %s %s (%dx%d, platform %s)\n", ok ? "wrote" : "cannot write",
                    qPrintable(screenshot), shot.width(), shot.height(),
                    qPrintable(QGuiApplication::platformName()));
        QApplication::exit(ok ? 0 : 1);
      });
    });
  }
  return app.exec();
}
