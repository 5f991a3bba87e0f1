// The one Chrome trace writer (model/chrome_trace.hpp) on spans small enough to read by hand.
#include "model/chrome_trace.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ddpsim::model {
namespace {

using nlohmann::json;

std::vector<TraceSpan> two_spans() {
  TraceSpan fwd;
  fwd.rank = 1;
  fwd.name = "fwd fc0";
  fwd.layer = "fc0";
  fwd.start_ns = 0;
  fwd.end_ns = 1500;  // 1.500 us
  TraceSpan ar;
  ar.rank = 1;
  ar.stream = kCommStream;
  ar.step = 2;
  ar.name = "allreduce bucket 0";
  ar.bytes = 4096;
  ar.start_ns = 1500;
  ar.end_ns = 2000001;  // 1998.501 us
  return {fwd, ar};
}

TEST(ChromeTrace, EventsByHand) {
  const std::string text = chrome_trace_text(two_spans(), {{"scenario", "s"}}, {0});
  // Times as integer nanoseconds to exactly three decimals of a microsecond, never rounded.
  EXPECT_NE(text.find("\"ts\": 0.000, \"dur\": 1.500"), std::string::npos) << text;
  EXPECT_NE(text.find("\"ts\": 1.500, \"dur\": 1998.501"), std::string::npos) << text;
  const json j = json::parse(text);
  EXPECT_EQ(j.at("displayTimeUnit"), "ms");
  EXPECT_EQ(j.at("otherData").at("scenario"), "s");
  EXPECT_EQ(j.at("otherData").at("ranks"), json({0, 1}));  // rank 0 named without spans
  int meta = 0, complete = 0, counters = 0;
  for (const json& e : j.at("traceEvents")) {
    const std::string ph = e.at("ph").get<std::string>();
    if (ph == "M") ++meta;
    if (ph == "X") {
      ++complete;
      if (e.at("tid") == kCommStream) {
        EXPECT_EQ(e.at("cat"), "collective");
        EXPECT_EQ(e.at("args").at("step"), 3);  // 1-based
        EXPECT_EQ(e.at("args").at("bytes"), 4096);
      } else {
        EXPECT_EQ(e.at("args").at("layer"), "fc0");
      }
    }
    if (ph == "C") {
      // The bytes in flight step to 4096 at the start and back to 0 at the end.
      EXPECT_EQ(e.at("args").at("bytes"), counters == 0 ? 4096 : 0);
      ++counters;
    }
  }
  EXPECT_EQ(meta, 8);  // 2 ranks x (process name, sort index, two thread names)
  EXPECT_EQ(complete, 2);
  EXPECT_EQ(counters, 2);
}

TEST(ChromeTrace, SerialStreamsAreCheckedOnRequest) {
  std::vector<TraceSpan> s = two_spans();
  s[1].stream = kComputeStream;  // back to back with the forward on one stream: serial
  EXPECT_NO_THROW(chrome_trace_text(s, json::object(), {}, true));
  s[1].start_ns = 1000;                   // starts before the forward ends
  EXPECT_NO_THROW(chrome_trace_text(s));  // measured spans are not asserted
  EXPECT_DEATH(chrome_trace_text(s, json::object(), {}, true), "overlapping spans");
}

}  // namespace
}  // namespace ddpsim::model
