// The comparison rows and Markdown tables of `ddpsim validate` (simulator/cli/validate/report.hpp),
// checked against values computed by hand.
#include "simulator/cli/validate/report.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace ddpsim::validate {
namespace {

using nlohmann::json;

TEST(Report, RowErrorsAreRelativeToTheMeasurement) {
  // Predicted 12 ms (analytic) and 11 ms (event) against a measured 10 ms:
  // (12 - 10) / 10 = +20%, (11 - 10) / 10 = +10%; absolute errors 2 ms and 1 ms.
  const json r = row("step_time_s", 0.012, 0.011, 0.010);
  EXPECT_EQ(r["quantity"], "step_time_s");
  EXPECT_NEAR(r["error_analytic"].get<double>(), 0.2, 1e-12);
  EXPECT_NEAR(r["error_event"].get<double>(), 0.1, 1e-12);
  EXPECT_NEAR(r["abs_error_analytic_s"].get<double>(), 0.002, 1e-15);
  EXPECT_NEAR(r["abs_error_event_s"].get<double>(), 0.001, 1e-15);
  EXPECT_EQ(pct(r["error_analytic"]), "+20.0%");
  EXPECT_EQ(pct(r["error_event"]), "+10.0%");
  // Under-prediction is negative: (7.5 - 10) / 10 = -25%.
  EXPECT_EQ(pct(relative_error(0.0075, 0.010)), "-25.0%");
  // Nothing measured (no exposed communication): no relative error, the absolute one stays.
  const json none = row("exposed_comm_s", 0.003, 0.0, 0.0);
  EXPECT_TRUE(none["error_analytic"].is_null());
  EXPECT_EQ(pct(none["error_analytic"]), "-");
  EXPECT_DOUBLE_EQ(none["abs_error_analytic_s"].get<double>(), 0.003);
}

TEST(Report, MillisecondsAndLabels) {
  EXPECT_EQ(ms(0.0123456), "12.346");  // rounded to the microsecond
  EXPECT_EQ(ms(1.5), "1500.000");
  // Keys in order (nlohmann::json sorts them); cluster.gpus is the leading "gpus=".
  const json label = {
      {"cluster.gpus", 4}, {"model.mlp.widths.1", 512}, {"parallelism.bucket_cap_mb", 25}};
  EXPECT_EQ(label_text(label, 4), "gpus=4, mlp.widths.1=512, bucket_cap_mb=25");
  EXPECT_EQ(label_text(json::object(), 2), "gpus=2");
}

TEST(Report, MarkdownHasOneRowPerPoint) {
  json rows = json::array();
  rows.push_back(row("step_time_s", 0.012, 0.011, 0.010));
  rows.push_back(row("forward_time_s", 0.004, 0.004, 0.005));    // -20.0% from both engines
  rows.push_back(row("backward_time_s", 0.006, 0.006, 0.006));   // +0.0%
  rows.push_back(row("optimizer_time_s", 0.001, 0.001, 0.002));  // -50.0%
  rows.push_back(row("exposed_comm_s", 0.001, 0.0005, 0.0));     // nothing measured: "-"
  rows.push_back(row("comm_time_s", 0.003, 0.003, 0.002));       // +50.0%
  const json doc = {
      {"context",
       {{"host", "vm"},
        {"date", "2026-12-03"},
        {"load_average", "0.10"},
        {"load_average_after", "0.20"},
        {"steps", 3},
        {"repeat", 2}}},
      {"points", {{{"point", {{"parallelism.bucket_cap_mb", 25}}}, {"gpus", 2}, {"rows", rows}}}},
      {"bucket_choice", json::array()}};
  const std::string md = markdown(doc);
  EXPECT_NE(md.find("Host `vm`, 2026-12-03, load average before/after 0.10 / 0.20; 3 steps x 2 "
                    "repetitions per point"),
            std::string::npos)
      << md;
  // The step error shows the event engine's in parentheses only where it differs.
  EXPECT_NE(md.find("| gpus=2, bucket_cap_mb=25 | 12.000 | 10.000 | +20.0% (+10.0%) | - | "
                    "-20.0% | +0.0% | -50.0% | 1.000 / 0.000 | +50.0% |\n"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("DDP efficiency"), std::string::npos);  // no point has an efficiency block
  EXPECT_EQ(md.find("Bucket size choice"), std::string::npos);
}

// A row with a run-to-run spread of 3 runs whose step medians were 9, 10 and 12 ms: half-range
// (12 - 9) / 2 / 10 = 15%. The analytic error +20% is outside it, the event error +10% inside.
TEST(Report, SpreadColumnAndNoiseWarnings) {
  json r = row("step_time_s", 0.012, 0.011, 0.010);
  r["spread"] = {{"runs", 3},
                 {"min", 0.009},
                 {"median", 0.010},
                 {"max", 0.012},
                 {"half_range_relative", 0.15},
                 {"exceeds_error_analytic", false},
                 {"exceeds_error_event", true}};
  EXPECT_EQ(spread_text(r["spread"]), "+-15.0%");
  EXPECT_EQ(spread_text(nullptr), "-");
  json one = r["spread"];
  one["runs"] = 1;
  EXPECT_EQ(spread_text(one), "-");  // one run has no spread
  const json point = {{"rows", json::array({r, row("forward_time_s", 0.004, 0.004, 0.005)})}};
  EXPECT_EQ(noise_warnings(point),
            "  warning: step_time_s: |error| 10.0% (event) within the run-to-run spread: "
            "measured +-15.0% over 3 runs (9.000..12.000 ms): the error is within the noise\n");
  // With --recalibrate-each the calibrations' spread is named too.
  json recal = point;
  recal["rows"][0]["predicted_spread"] = {{"analytic", {{"runs", 3}, {"half_range_relative", 0.3}}},
                                          {"event", {{"runs", 3}, {"half_range_relative", 0.05}}}};
  recal["rows"][0]["spread"]["exceeds_error_analytic"] = true;
  EXPECT_EQ(noise_warnings(recal),
            "  warning: step_time_s: |error| 20.0% (analytic), 10.0% (event) within the run-to-run "
            "spread: measured +-15.0% over 3 runs (9.000..12.000 ms), calibrations +-30.0% "
            "(analytic), +-5.0% (event): the error is within the noise\n");
  json quiet = point;
  quiet["rows"][0]["spread"]["exceeds_error_event"] = false;
  EXPECT_EQ(noise_warnings(quiet), "");
}

}  // namespace
}  // namespace ddpsim::validate
