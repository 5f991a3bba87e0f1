#include "gui/models/number_format.hpp"

#include <QLocale>
#include <algorithm>
#include <cmath>
#include <utility>

namespace ddpsim::gui {

namespace {

const QLocale& english() {
  static const QLocale l(QLocale::English, QLocale::UnitedStates);
  return l;
}

}  // namespace

QString formatNumber(double v, int significant) {
  if (!std::isfinite(v)) return QString::number(v);
  if (v == 0) return QStringLiteral("0");
  significant = std::max(1, significant);
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  const int decimals = std::max(0, significant - 1 - magnitude);
  return english().toString(v, 'f', decimals);
}

QString formatCount(double v) {
  constexpr std::pair<double, const char*> kSuffixes[] = {{1e12, " T"}, {1e9, " B"}, {1e6, " M"}};
  for (const auto& [scale, suffix] : kSuffixes) {
    if (std::fabs(v) >= 0.9995 * scale) return formatNumber(v / scale) + QLatin1String(suffix);
  }
  return formatNumber(v);
}

QString formatMoney(double usd) {
  if (std::isfinite(usd) && std::fabs(usd) >= 99.5) {
    return (usd < 0 ? QStringLiteral("-$") : QStringLiteral("$")) +
           english().toString(std::round(std::fabs(usd)), 'f', 0);
  }
  const QString n = formatNumber(std::fabs(usd), 3);
  return (usd < 0 ? QStringLiteral("-$") : QStringLiteral("$")) + n;
}

QString formatHours(double hours) {
  if (!std::isfinite(hours)) return QString::number(hours) + QStringLiteral(" h");
  const double s = hours * 3600.0;
  if (std::fabs(s) < 59.95) return formatNumber(s) + QStringLiteral(" s");
  if (std::fabs(hours) < 0.9995) return formatNumber(s / 60.0) + QStringLiteral(" min");
  if (std::fabs(hours) < 47.95) return formatNumber(hours) + QStringLiteral(" h");
  double days = std::floor(hours / 24.0);
  double rest = std::round(hours - 24.0 * days);
  if (rest >= 24) {
    days += 1;
    rest -= 24;
  }
  QString out = english().toString(days, 'f', 0) + QStringLiteral(" d");
  if (rest > 0) out += QStringLiteral(" %1 h").arg(rest, 0, 'f', 0);
  return out;
}

QString axisLabelFormat(double lo, double hi, const QString& prefix) {
  if (!(lo > 0) || lo >= 1) return prefix + QStringLiteral("%.0f");
  const int digits =
      hi >= 1 ? std::clamp(static_cast<int>(std::floor(std::log10(hi) + 1e-9)) + 1, 1, 15) : 1;
  return prefix + QStringLiteral("%.") + QString::number(digits) + QStringLiteral("g");
}

}  // namespace ddpsim::gui
