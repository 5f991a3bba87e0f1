// number_format.hpp: how the window writes numbers for a buyer (issue 41 item 3): one money
// format everywhere ("$286,807" in the legend, the tables and the axes alike), durations in the
// unit that keeps their digits ("4.3 s", "12 min", "1.4 h", "4 d 16 h"; never "0.00 h") and
// plain numbers to three significant digits with thousands separators.
//
//   formatMoney(286807.2);   // "$286,807"
//   formatMoney(0.0512);     // "$0.0512"
//   formatHours(0.00123);    // "4.43 s"
//   formatNumber(12345.6);   // "12,346"
#pragma once

#include <QString>

namespace ddpsim::gui {

/// `significant` significant digits (at least 1), with thousands separators; whole numbers from
/// 10^significant up. Zero is "0"; a non-zero value never prints as zero.
QString formatNumber(double v, int significant = 3);

/// A large count with a suffix from a million up: "15,259", "1.91 M", "3.28 B", "1 T" (three
/// significant digits; steps and tokens to a training target).
QString formatCount(double v);

/// US dollars: whole dollars with thousands separators from $100 up, else three significant
/// digits ("$56.3", "$0.0512").
QString formatMoney(double usd);

/// A duration given in hours: seconds below a minute, minutes below an hour, hours below two
/// days ("1.4 h", "47.5 h"), then days and whole hours ("4 d 16 h").
QString formatHours(double hours);

/// The printf format of a chart axis whose ticks run from `lo` to `hi`, for a chart with
/// localized numbers (QChart::setLocalizeNumbers), which adds the thousands separators (1e+06
/// reads 1,000,000) and only understands "%.<digits><type>" (a bare "%g" draws no labels):
/// "%.0f" when every tick is at least 1, else "%.<p>g" with enough digits p that `hi` keeps no
/// exponent ("0.01", "0.1", "100"); `prefix` goes in front ("$").
QString axisLabelFormat(double lo, double hi, const QString& prefix = {});

}  // namespace ddpsim::gui
