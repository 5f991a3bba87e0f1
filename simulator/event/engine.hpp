// event/engine.hpp: the discrete-event core of the event-driven simulator.
//
// Simulated time is integer nanoseconds (ddpsim::SimTime, model/units.hpp). Events are ordered
// by (time, sequence number): two events at the same time run in the order they were scheduled
// (FIFO), so every run of the same model is bit-for-bit reproducible. The queue is a radix heap
// (Ahuja, Mehlhorn, Orlin, Tarjan 1990) on the time: simulated time never goes back, so an
// event waits in bucket b = bit length of (time XOR the last extracted time); a pop scans only
// the lowest non-empty bucket and redistributes it into lower ones, so each event is moved at
// most ~log2(delay) times and no comparison chain depends on the queue depth (a 4-ary heap
// did 8.5 M events/s with 64 pending, the radix heap >= 10 M/s: results/BENCHMARKS.md).
// Buckets are appended to in scheduling order and redistributed in order, so within one time
// the sequence order (FIFO) falls out without storing a sequence number.
// The engine knows nothing about ranks, streams or collectives; models
// (simulator/event/simulate.hpp) schedule handlers on it. No CUDA, NCCL or Qt: it builds and tests
// with plain g++.
//
// Preconditions: an event is never scheduled before now() (DDPSIM_ASSERT); handlers may
// schedule further events, including at now() (they run after the events already queued for
// that time).
//
//   Engine e;
//   e.schedule(SimTime(10), [&] { e.schedule_in(SimTime(5), [] { /* at 15 ns */ }); });
//   e.run();                        // now() == 15 ns, events_processed() == 2
#pragma once

#include <array>
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
  bool empty() const { return pending_ == 0; }
  std::size_t pending() const { return pending_; }
  std::uint64_t events_processed() const { return processed_; }

  /// The observer is not owned; nullptr detaches it.
  void set_observer(EngineObserver* o) { observer_ = o; }
  /// Lets a model report how far it is (fraction in [0, 1]) to the observer.
  void report_progress(double fraction) {
    if (observer_ != nullptr) observer_->on_progress(fraction);
  }

 private:
  // Handlers sit in slots of a deque, which never move, so a handler runs in place even when
  // it schedules more events; the queue holds only (time, slot) pairs.
  struct Item {
    std::int64_t at;  ///< ns
    std::uint32_t slot;
  };
  struct Slot {
    Handler handler;
    const char* what = "";
  };
  static constexpr int kBuckets = 65;  ///< 0: time == last_; b >= 1: highest differing bit b-1
  int bucket_of(std::int64_t at) const;
  /// Makes bucket 0 hold the earliest events if the earliest time is <= limit; false if none.
  bool refill(std::int64_t limit);

  std::array<std::vector<Item>, kBuckets> buckets_;
  std::size_t head0_ = 0;       ///< bucket 0 is consumed from here (FIFO)
  std::uint64_t nonempty_ = 0;  ///< bit b-1 set when bucket b >= 1 holds events
  std::int64_t last_ = 0;       ///< the time of bucket 0's events; <= every queued time
  std::size_t pending_ = 0;
  std::deque<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  SimTime now_{0};
  std::uint64_t processed_ = 0;
  EngineObserver* observer_ = nullptr;
};

}  // namespace ddpsim::sim
