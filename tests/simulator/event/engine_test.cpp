// The discrete-event core: ordering, ties, run_until and the observer.
#include "simulator/event/engine.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ddpsim::sim {
namespace {

TEST(EngineTest, RunsInTimeOrderAndTiesFifo) {
  Engine e;
  std::vector<int> order;
  e.schedule(SimTime(20), [&] { order.push_back(3); });
  e.schedule(SimTime(10), [&] { order.push_back(1); });
  e.schedule(SimTime(10), [&] { order.push_back(2); });  // same time: after the first
  e.schedule(SimTime(20), [&] { order.push_back(4); });
  e.run();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(e.now(), SimTime(20));
  EXPECT_EQ(e.events_processed(), 4u);
  EXPECT_TRUE(e.empty());
}

TEST(EngineTest, HandlersScheduleAtNowAfterQueuedTies) {
  // An event scheduled at now() by a handler runs after the events already queued for now().
  Engine e;
  std::vector<std::string> order;
  e.schedule(SimTime(5), [&] {
    order.push_back("a");
    e.schedule_in(SimTime(0), [&] { order.push_back("c"); });
  });
  e.schedule(SimTime(5), [&] { order.push_back("b"); });
  e.run();
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(EngineTest, StepRunsOneEvent) {
  Engine e;
  int n = 0;
  EXPECT_FALSE(e.step());
  e.schedule_in(SimTime(7), [&] { ++n; });
  e.schedule_in(SimTime(9), [&] { ++n; });
  EXPECT_TRUE(e.step());
  EXPECT_EQ(n, 1);
  EXPECT_EQ(e.now(), SimTime(7));
  EXPECT_EQ(e.pending(), 1u);
}

TEST(EngineTest, RunUntilIncludesTheLimitAndAdvancesTheClock) {
  Engine e;
  std::vector<int> seen;
  for (int t : {10, 20, 30}) e.schedule(SimTime(t), [&seen, t] { seen.push_back(t); });
  e.run_until(SimTime(20));  // events at exactly the limit run
  EXPECT_EQ(seen, (std::vector<int>{10, 20}));
  EXPECT_EQ(e.now(), SimTime(20));
  e.run_until(SimTime(25));  // nothing due: the clock still moves to the limit
  EXPECT_EQ(e.now(), SimTime(25));
  EXPECT_EQ(e.pending(), 1u);
  e.run_until(SimTime(5));  // a limit in the past does nothing
  EXPECT_EQ(e.now(), SimTime(25));
  e.run();
  EXPECT_EQ(seen, (std::vector<int>{10, 20, 30}));
  EXPECT_EQ(e.now(), SimTime(30));
}

TEST(EngineTest, ObserverSeesEventsProgressAndFinish) {
  struct Counter : EngineObserver {
    int events = 0;
    double progress = 0;
    SimTime finish{-1};
    std::vector<std::string> names;
    void on_event(SimTime, const char* what) override {
      ++events;
      names.emplace_back(what);
    }
    void on_progress(double f) override { progress = f; }
    void on_finish(SimTime at) override { finish = at; }
  } c;
  Engine e;
  e.set_observer(&c);
  e.schedule(
      SimTime(3), [&] { e.report_progress(0.5); }, "half");
  e.schedule(SimTime(4), [] {});
  e.run();
  EXPECT_EQ(c.events, 2);
  EXPECT_EQ(c.names, (std::vector<std::string>{"half", ""}));
  EXPECT_DOUBLE_EQ(c.progress, 0.5);
  EXPECT_EQ(c.finish, SimTime(4));
}

TEST(EngineTest, DeepQueueRunsInTimeThenSequenceOrder) {
  // The radix heap against a plain sort by (time, sequence): 20,000 events, many ties, times
  // spread over 2^0 .. 2^40 ns, some scheduled from handlers (at now() and later) while deep.
  Engine e;
  struct Ev {
    std::int64_t at;
    int seq;
  };
  std::vector<Ev> want;
  std::vector<int> got;
  std::uint64_t x = 88172645463325252ull;  // xorshift64
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  int seq = 0;
  std::function<void(std::int64_t)> add = [&](std::int64_t at) {
    const int id = seq++;
    want.push_back({at, id});
    e.schedule(SimTime(at), [&, id] {
      got.push_back(id);
      if (id % 3 == 0 && seq < 20000) {
        const int shift = static_cast<int>(next() % 41);
        const std::int64_t delay =
            id % 2 == 0 ? 0 : static_cast<std::int64_t>(next() % (std::uint64_t{1} << shift));
        add(e.now().count() + delay);
      }
    });
  };
  for (int i = 0; i < 10000; ++i) {
    const int shift = static_cast<int>(next() % 41);
    add(static_cast<std::int64_t>(next() % (std::uint64_t{1} << shift)) / 1000 * 1000);
  }
  EXPECT_EQ(e.pending(), 10000u);
  e.run();
  std::stable_sort(want.begin(), want.end(), [](const Ev& a, const Ev& b) { return a.at < b.at; });
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i].seq) << "at " << i;
  EXPECT_TRUE(e.empty());
}

TEST(EngineTest, RunUntilLeavesLaterEventsSchedulableBeforeThem) {
  // run_until must not commit to the next event's time: after it, an event between the limit
  // and the queued one runs first.
  Engine e;
  std::vector<int> order;
  e.schedule(SimTime(1000), [&] { order.push_back(2); });
  e.run_until(SimTime(10));
  e.schedule(SimTime(20), [&] { order.push_back(1); });
  e.run();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(EngineDeathTest, SchedulingInThePastAborts) {
  Engine e;
  e.schedule(SimTime(10), [] {});
  e.run();
  EXPECT_DEATH(e.schedule(SimTime(9), [] {}), "past");
}

}  // namespace
}  // namespace ddpsim::sim
