// sweep_runner.hpp: runs computeSweep() off the UI thread; the latest request wins.
//
// Every request gets a generation number. Jobs run one at a time on a private one-thread pool
// (a Predictor's caches are not thread-safe, and a slider drag must not queue work): a job that
// is no longer the latest when its turn comes is skipped, and a result that is stale when it
// arrives is dropped, so only the newest request's result is ever delivered (hotspot's
// JobTracker pattern). Results arrive on the runner's thread as posted events.
//
//   SweepRunner runner;
//   connect(&runner, &SweepRunner::finished, this, &Window::apply);
//   runner.request(req);            // returns the generation; older pending jobs are abandoned
#pragma once

#include <QObject>
#include <QThreadPool>
#include <atomic>
#include <memory>

#include "gui/models/sweep_engine.hpp"

namespace ddpsim::gui {

using SweepResultPtr = std::shared_ptr<const SweepResult>;

class SweepRunner : public QObject {
  Q_OBJECT

 public:
  explicit SweepRunner(QObject* parent = nullptr);
  ~SweepRunner() override;

  /// Queues `req` (its generation is overwritten) and returns its generation number.
  quint64 request(SweepRequest req);
  quint64 latestGeneration() const { return m_latest.load(); }
  /// Jobs skipped because a newer request came before they started, and results dropped
  /// because a newer request came before they were delivered.
  quint64 skippedJobs() const { return m_skipped.load(); }
  quint64 droppedResults() const { return m_dropped.load(); }
  /// Blocks until no job is running or queued (for tests and shutdown).
  void waitForDone();

 signals:
  /// The result of the latest request (never a stale one).
  void finished(ddpsim::gui::SweepResultPtr result);

 protected:
  /// Receives a worker's result (a posted event) and emits finished() unless it is stale.
  bool event(QEvent* e) override;

 private:
  QThreadPool m_pool;
  PredictorCache m_cache;
  std::atomic<quint64> m_latest{0};
  std::atomic<quint64> m_skipped{0};
  std::atomic<quint64> m_dropped{0};
};

}  // namespace ddpsim::gui

Q_DECLARE_METATYPE(ddpsim::gui::SweepResultPtr)
