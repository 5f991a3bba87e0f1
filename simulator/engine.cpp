#include "simulator/engine.hpp"

#include <algorithm>
#include <utility>

#include "model/error.hpp"

namespace ddpsim::sim {

void Engine::schedule(SimTime at, Handler h, const char* what) {
  DDPSIM_ASSERT(at >= now_, "event scheduled in the past");
  DDPSIM_ASSERT(static_cast<bool>(h), "event without a handler");
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    slots_[slot].handler = std::move(h);
    slots_[slot].what = what != nullptr ? what : "";
  } else {
    DDPSIM_ASSERT(slots_.size() < 0xffffffffu, "too many pending events");
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.push_back(Slot{std::move(h), what != nullptr ? what : ""});
  }
  heap_.push_back(Key{at.count(), next_seq_++, slot});
  sift_up(heap_.size() - 1);
}

void Engine::sift_up(std::size_t i) {
  const Key k = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!before(k, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = k;
}

void Engine::sift_down(std::size_t i) {
  const std::size_t n = heap_.size();
  const Key k = heap_[i];
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t last = std::min(first + 4, n);
    for (std::size_t c = first + 1; c < last; ++c)
      if (before(heap_[c], heap_[best])) best = c;
    if (!before(heap_[best], k)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = k;
}

void Engine::schedule_in(SimTime delay, Handler h, const char* what) {
  DDPSIM_ASSERT(delay >= SimTime::zero(), "negative delay");
  schedule(now_ + delay, std::move(h), what);
}

bool Engine::step() {
  if (heap_.empty()) return false;
  const Key k = heap_.front();
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
  now_ = SimTime(k.at);
  ++processed_;
  // Slots live in a deque: scheduling from the handler never moves this one, and the slot is
  // freed only after the handler returns, so no new event can reuse it meanwhile.
  Slot& s = slots_[k.slot];
  s.handler();
  s.handler = nullptr;
  free_slots_.push_back(k.slot);
  if (observer_ != nullptr) observer_->on_event(now_, s.what);
  return true;
}

void Engine::run() {
  while (step()) {
  }
  if (observer_ != nullptr) observer_->on_finish(now_);
}

void Engine::run_until(SimTime limit) {
  while (!heap_.empty() && heap_.front().at <= limit.count()) step();
  if (limit > now_) now_ = limit;
  if (observer_ != nullptr) observer_->on_finish(now_);
}

}  // namespace ddpsim::sim
