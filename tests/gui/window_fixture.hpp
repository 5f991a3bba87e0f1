// window_fixture.hpp: what the window tests share (window_test.cpp: the scenario editor;
// window_form_test.cpp: the form as a buyer uses it; window_charts_test.cpp: what the window
// draws; window_buyer_test.cpp: the buyer's review): a fresh MainWindow per test, opened on an
// example and settled, and the chart helpers.
#pragma once

#include <QAreaSeries>
#include <QChart>
#include <QCoreApplication>
#include <QLineSeries>
#include <QObject>
#include <QSignalSpy>

#include "gui/app/main_window.hpp"

namespace ddpsim::gui::testing {

inline const QString kScenarios = QStringLiteral(DDPSIM_SCENARIO_DIR);
inline const QString kData = QStringLiteral(DDPSIM_GUI_TEST_DATA);

/// The upper points of the area series `name` of `chart` (empty when there is none).
inline QList<QPointF> areaTop(QChart* chart, const QString& name) {
  for (QAbstractSeries* s : chart->series()) {
    if (s->name() == name) {
      if (auto* a = qobject_cast<QAreaSeries*>(s)) return a->upperSeries()->points();
    }
  }
  return {};
}

inline bool hasSeriesStartingWith(QChart* chart, const QString& prefix) {
  for (QAbstractSeries* s : chart->series()) {
    if (s->name().startsWith(prefix)) return true;
  }
  return false;
}

/// QTest runs init() before and cleanup() after every test slot of a subclass.
class WindowFixture : public QObject {
  Q_OBJECT

 protected:
  MainWindow* m_w = nullptr;

  // Waits for the redraw caused by the latest request.
  bool waitRedraw(QSignalSpy& spy, int ms = 30000) {
    if (!spy.isEmpty()) spy.clear();
    return spy.wait(ms) || !spy.isEmpty();
  }

  // Opens `path` and waits until the latest request's result is drawn.
  bool openAndSettle(const QString& path) {
    QSignalSpy redrawn(m_w, &MainWindow::redrawn);
    if (!m_w->openFile(path) || !waitRedraw(redrawn)) return false;
    settle();
    return true;
  }

  // Lets the last delivered result be the latest request's.
  void settle() {
    m_w->runner()->waitForDone();
    QCoreApplication::processEvents();
  }

 private slots:
  void init() {
    m_w = new MainWindow;
    m_w->resize(1400, 900);
    m_w->show();
    QSignalSpy redrawn(m_w, &MainWindow::redrawn);
    QVERIFY(m_w->openFile(kScenarios + "/examples/mlp-fp16-hook.json"));
    QVERIFY(waitRedraw(redrawn));
    // Settle: the last delivered result is the latest request's.
    m_w->runner()->waitForDone();
    QCoreApplication::processEvents();
  }

  void cleanup() {
    delete m_w;
    m_w = nullptr;
  }
};

}  // namespace ddpsim::gui::testing
