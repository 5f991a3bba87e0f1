#include "simulator/engine.hpp"

#include <algorithm>
#include <utility>

#include "model/error.hpp"

namespace ddpsim::sim {

void Engine::schedule(SimTime at, Handler h, const char* what) {
  DDPSIM_ASSERT(at >= now_, "event scheduled in the past");
  DDPSIM_ASSERT(static_cast<bool>(h), "event without a handler");
  heap_.push_back(Event{at, next_seq_++, what != nullptr ? what : "", std::move(h)});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

void Engine::schedule_in(SimTime delay, Handler h, const char* what) {
  DDPSIM_ASSERT(delay >= SimTime::zero(), "negative delay");
  schedule(now_ + delay, std::move(h), what);
}

bool Engine::step() {
  if (heap_.empty()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), later);
  // Move the event out before running it: the handler may push onto heap_ and reallocate it.
  Event e = std::move(heap_.back());
  heap_.pop_back();
  now_ = e.at;
  ++processed_;
  e.handler();
  if (observer_ != nullptr) observer_->on_event(now_, e.what);
  return true;
}

void Engine::run() {
  while (step()) {
  }
  if (observer_ != nullptr) observer_->on_finish(now_);
}

void Engine::run_until(SimTime limit) {
  while (!heap_.empty() && heap_.front().at <= limit) step();
  if (limit > now_) now_ = limit;
  if (observer_ != nullptr) observer_->on_finish(now_);
}

}  // namespace ddpsim::sim
