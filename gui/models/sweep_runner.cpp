#include "gui/models/sweep_runner.hpp"

#include <QMetaObject>

namespace ddpsim::gui {

SweepRunner::SweepRunner(QObject* parent) : QObject(parent) {
  qRegisterMetaType<SweepResultPtr>();
  m_pool.setMaxThreadCount(1);
}

SweepRunner::~SweepRunner() {
  m_latest.store(~quint64{0});  // every queued job is now stale: skip them
  m_pool.waitForDone();
}

quint64 SweepRunner::request(SweepRequest req) {
  const quint64 generation = m_latest.fetch_add(1) + 1;
  req.generation = generation;
  m_pool.start([this, req = std::move(req)]() {
    if (req.generation != m_latest.load()) {
      m_skipped.fetch_add(1);
      return;
    }
    auto result = std::make_shared<const SweepResult>(computeSweep(req, &m_cache));
    // Delivered on this object's thread; cancelled by Qt if the runner is gone.
    QMetaObject::invokeMethod(
        this,
        [this, result]() {
          if (result->generation != m_latest.load()) {
            m_dropped.fetch_add(1);
            return;
          }
          emit finished(result);
        },
        Qt::QueuedConnection);
  });
  return generation;
}

void SweepRunner::waitForDone() { m_pool.waitForDone(); }

}  // namespace ddpsim::gui
