#include "simulator/event/engine.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

#include "model/error.hpp"

namespace ddpsim::sim {

int Engine::bucket_of(std::int64_t at) const {
  const auto x = static_cast<std::uint64_t>(at ^ last_);
  return x == 0 ? 0 : 64 - std::countl_zero(x);
}

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
  // last_ <= now_ <= at (last_ is the time of the latest extracted event), so the bucket index
  // is well defined; an event at last_ joins bucket 0 behind the ones already there.
  const int b = bucket_of(at.count());
  buckets_[static_cast<std::size_t>(b)].push_back(Item{at.count(), slot});
  if (b > 0) nonempty_ |= std::uint64_t{1} << (b - 1);
  ++pending_;
}

bool Engine::refill(std::int64_t limit) {
  auto& b0 = buckets_[0];
  if (head0_ < b0.size()) return last_ <= limit;
  b0.clear();
  head0_ = 0;
  if (nonempty_ == 0) return false;
  const int i = std::countr_zero(nonempty_) + 1;
  auto& bi = buckets_[static_cast<std::size_t>(i)];
  std::int64_t m = bi.front().at;
  for (const Item& it : bi) m = std::min(m, it.at);
  if (m > limit) return false;
  // Every queued time agrees with last_ above bit i-1 and bucket i's times differ from it at
  // bit i-1, so relative to m they all land in buckets < i (and those are empty now): moving
  // them in order keeps each bucket in scheduling order, hence FIFO among equal times.
  last_ = m;
  for (const Item& it : bi) {
    const int b = bucket_of(it.at);
    buckets_[static_cast<std::size_t>(b)].push_back(it);
    if (b > 0) nonempty_ |= std::uint64_t{1} << (b - 1);
  }
  bi.clear();
  nonempty_ &= ~(std::uint64_t{1} << (i - 1));
  return true;
}

void Engine::schedule_in(SimTime delay, Handler h, const char* what) {
  DDPSIM_ASSERT(delay >= SimTime::zero(), "negative delay");
  schedule(now_ + delay, std::move(h), what);
}

bool Engine::step() {
  if (!refill(std::numeric_limits<std::int64_t>::max())) return false;
  const Item k = buckets_[0][head0_++];
  --pending_;
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
  while (refill(limit.count())) step();
  if (limit > now_) now_ = limit;
  if (observer_ != nullptr) observer_->on_finish(now_);
}

}  // namespace ddpsim::sim
