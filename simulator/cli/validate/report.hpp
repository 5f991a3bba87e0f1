// report.hpp: the comparison rows and the Markdown tables of `ddpsim validate`.
//
// A row compares one quantity (step, forward, backward, exposed communication, optimizer, summed
// communication, a bucket's end) as predicted by both engines with its measurement: absolute
// errors predicted - measured in seconds and relative errors (predicted - measured) / measured,
// null where the measurement is below 1 ns (nothing to be relative to, e.g. no exposed
// communication). markdown() renders a finished validation document (the JSON that
// ddpsim-validate writes: context, points with rows and an optional efficiency block,
// bucket_choice) as the tables results/VALIDATION.md quotes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ddpsim::validate {

/// (predicted - measured) / measured, or null when |measured| < 1e-9 s.
nlohmann::json relative_error(double predicted, double measured);
/// {"quantity", "analytic", "event", "measured", "abs_error_{analytic,event}_s",
///  "error_{analytic,event}"} for one quantity.
nlohmann::json row(const std::string& quantity, double analytic, double event, double measured);
/// A relative error as a signed percentage with one decimal ("+20.0%"), "-" for null.
std::string pct(const nlohmann::json& e);
/// Seconds as milliseconds with three decimals ("12.346").
std::string ms(double s);
/// A sweep point's label: "gpus=N" then each other key shortened ("model.mlp.widths.1" to
/// "mlp.widths.1", any other dotted key to its last part) with its JSON value, in key order.
std::string label_text(const nlohmann::json& label, int ranks);
/// A row's "spread" block (stats.hpp RunSpread as JSON) as "+-4.1%"; "-" for null or one run.
std::string spread_text(const nlohmann::json& spread);
/// One line per quantity of a point block (point_json) whose run-to-run spread (measured, or
/// with --recalibrate-each the calibrations') exceeds the |error| it reports: "  warning:
/// step_time_s: |error| 10.0% (event) within the run-to-run spread: measured +-15.0% over 3 runs
/// (9.000..12.000 ms): the error is within the noise"; empty when none does.
std::string noise_warnings(const nlohmann::json& point);
/// The Markdown tables of a validation document.
std::string markdown(const nlohmann::json& doc);

}  // namespace ddpsim::validate
