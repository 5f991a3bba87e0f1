// engine.hpp: the discrete-event core of the event-driven simulator.
//
// Simulated time is integer nanoseconds (ddpsim::SimTime, model/units.hpp). Events live in a
// binary heap keyed by (time, sequence number): two events at the same time run in the order
// they were scheduled (FIFO), so every run of the same model is bit-for-bit reproducible.
// The engine knows nothing about ranks, streams or collectives; models (simulator/event_dp.hpp)
// schedule handlers on it. No CUDA, NCCL or Qt: it builds and tests with plain g++.
//
// Preconditions: an event is never scheduled before now() (DDPSIM_ASSERT); handlers may
// schedule further events, including at now() (they run after the events already queued for
// that time).
//
//   Engine e;
//   e.schedule(SimTime(10), [&] { e.schedule_in(SimTime(5), [] { /* at 15 ns */ }); });
//   e.run();                        // now() == 15 ns, events_processed() == 2
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "model/units.hpp"

namespace ddpsim::sim {

/// Watches an engine (progress bars, the GUI, debugging). Every method is optional.
class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  /// After each event; `what` is the label given to schedule() (never null, may be "").
  virtual void on_event(SimTime /*at*/, const char* /*what*/) {}
  /// Forwarded from Engine::report_progress: a model's own estimate in [0, 1].
  virtual void on_progress(double /*fraction*/) {}
  /// When run() or run_until() returns with nothing left before its limit.
  virtual void on_finish(SimTime /*at*/) {}
};

class Engine {
 public:
  using Handler = std::function<void()>;

  /// Runs `h` at absolute time `at` (>= now()). `what` must outlive the event (a literal).
  void schedule(SimTime at, Handler h, const char* what = "");
  /// Runs `h` at now() + `delay` (delay >= 0).
  void schedule_in(SimTime delay, Handler h, const char* what = "");

  /// Runs the earliest event; false when there was none.
  bool step();
  /// Runs events until none is left.
  void run();
  /// Runs every event with time <= `limit`, then advances now() to `limit` (if later). Events
  /// after `limit` stay queued; a later run() continues with them.
  void run_until(SimTime limit);

  SimTime now() const { return now_; }
  bool empty() const { return heap_.empty(); }
  std::size_t pending() const { return heap_.size(); }
  std::uint64_t events_processed() const { return processed_; }

  /// The observer is not owned; nullptr detaches it.
  void set_observer(EngineObserver* o) { observer_ = o; }
  /// Lets a model report how far it is (fraction in [0, 1]) to the observer.
  void report_progress(double fraction) {
    if (observer_ != nullptr) observer_->on_progress(fraction);
  }

 private:
  // A 4-ary min-heap of small keys (half the depth of a binary heap, and a node's children
  // share a cache line); handlers sit in slots of a deque, which never move, so a handler runs
  // in place even when it schedules more events (measured in tests/bench/event_bench.cpp).
  struct Key {
    std::int64_t at;  ///< ns
    std::uint64_t seq;
    std::uint32_t slot;
  };
  struct Slot {
    Handler handler;
    const char* what = "";
  };
  static bool before(const Key& a, const Key& b) {
    return a.at != b.at ? a.at < b.at : a.seq < b.seq;
  }
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);

  std::vector<Key> heap_;
  std::deque<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  SimTime now_{0};
  std::uint64_t next_seq_ = 0;
  std::uint64_t processed_ = 0;
  EngineObserver* observer_ = nullptr;
};

}  // namespace ddpsim::sim
