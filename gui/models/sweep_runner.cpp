#include "gui/models/sweep_runner.hpp"

#include <QCoreApplication>
#include <QEvent>
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

// A result on its way to the runner's thread, published the same way. Qt's event queue hands a
// posted event to the receiving thread under its own (uninstrumented) locks, so a queued call
// through QMetaObject::invokeMethod(lambda) made TSan report the receiving thread's read of the
// lambda's captures against the worker's write (found re-running gui.models under TSan after
// CI's TSan failure of stop 12). Here every access of ours to the event's members on the
// receiving side, delivery and destruction alike (Qt deletes it after event(), or when the
// runner dies with it still queued), starts with an acquire load of the flag that the worker's
// constructor stored with release, after it had written everything else. (event() reads the
// type first, but QEvent's own fields are written and read inside uninstrumented Qt.)
class ResultEvent final : public QEvent {
 public:
  explicit ResultEvent(SweepResultPtr r) : QEvent(eventType()), m_result(std::move(r)) {
    m_published.store(true, std::memory_order_release);
  }
  ~ResultEvent() override { (void)m_published.load(std::memory_order_acquire); }
  SweepResultPtr take() {
    (void)m_published.load(std::memory_order_acquire);
    return std::move(m_result);
  }
  static QEvent::Type eventType() {
    static const auto t = static_cast<QEvent::Type>(QEvent::registerEventType());
    return t;
  }

 private:
  SweepResultPtr m_result;
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
    // Delivered on this object's thread by event(); the destructor waits for this job, and
    // Qt then discards an event still queued for the runner.
    QCoreApplication::postEvent(
        this, new ResultEvent(std::make_shared<const SweepResult>(computeSweep(req, &m_cache))));
  }));  // the pool deletes the job after run() (autoDelete)
  return generation;
}

bool SweepRunner::event(QEvent* e) {
  if (e->type() != ResultEvent::eventType()) return QObject::event(e);
  const SweepResultPtr result = static_cast<ResultEvent*>(e)->take();
  if (result->generation != m_latest.load()) {
    m_dropped.fetch_add(1);
  } else {
    emit finished(result);
  }
  return true;
}

void SweepRunner::waitForDone() { m_pool.waitForDone(); }

}  // namespace ddpsim::gui
