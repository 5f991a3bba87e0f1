#include "gui/models/sweep_runner.hpp"

#include <QMetaObject>
#include <QRunnable>
#include <atomic>
#include <functional>
#include <utility>

namespace ddpsim::gui {

namespace {
// A pool job that publishes itself: QThreadPool hands a runnable to its thread under a QMutex
// inside libQt6Core, which ThreadSanitizer does not see (Qt is not instrumented). The release
// store after construction and the acquire load that starts run() make the hand-off visible to
// it, so CI's TSan step (scripts/ci-reliability.sh) needs no suppression for our own jobs.
class PublishedJob final : public QRunnable {
 public:
  explicit PublishedJob(std::function<void()> f) : m_f(std::move(f)) {
    m_published.store(true, std::memory_order_release);
  }
  void run() override {
    if (m_published.load(std::memory_order_acquire)) m_f();
  }

 private:
  std::function<void()> m_f;
  std::atomic<bool> m_published{false};
};
}  // namespace

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
  m_pool.start(new PublishedJob([this, req = std::move(req)]() {
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
  }));  // the pool deletes the job after run() (autoDelete)
  return generation;
}

void SweepRunner::waitForDone() { m_pool.waitForDone(); }

}  // namespace ddpsim::gui
