// The discrete-event core: ordering, ties, run_until and the observer.
#include "simulator/engine.hpp"

#include <gtest/gtest.h>

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

TEST(EngineDeathTest, SchedulingInThePastAborts) {
  Engine e;
  e.schedule(SimTime(10), [] {});
  e.run();
  EXPECT_DEATH(e.schedule(SimTime(9), [] {}), "past");
}

}  // namespace
}  // namespace ddpsim::sim
