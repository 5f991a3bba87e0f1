#include "calibrate/fit_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/error.hpp"
#include "model/units.hpp"

namespace ddpsim::calib {

using nlohmann::json;

FitCheck check_fit(const model::Profile& profile, const json& sweep, const std::string& sweep_file,
                   model::CollectiveOp op, double above_bytes, double tolerance) {
  const json& section = sweep.contains("collectives") ? sweep.at("collectives") : sweep;
  const std::string prefix = sweep.contains("collectives") ? "/collectives" : "";
  const std::string name = model::collective_op_name(op);
  if (!section.is_object() || !section.contains("ops") || !section.at("ops").contains(name)) {
    throw InputError(sweep_file, prefix + "/ops/" + name,
                     "a collective sweep with a table for " + name + " (ddpsim-collectives --json)",
                     "none");
  }
  const model::CollectiveTable* t = profile.collective(op);
  if (t == nullptr) {
    throw Error(profile.file() + ": the profile has no " + name + " measurements to check");
  }
  const int ranks = section.value("ranks", 0);
  if (ranks != t->ranks) {
    throw InputError(sweep_file, prefix + "/ranks",
                     std::to_string(t->ranks) + " ranks, as the profile measured",
                     std::to_string(ranks));
  }
  const bool in_place = t->rows.front().in_place;
  FitCheck r;
  r.op = name;
  r.ranks = ranks;
  r.above_bytes = above_bytes;
  r.tolerance = tolerance;
  const json& rows = section.at("ops").at(name).at("rows");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& row = rows[i];
    const std::string ptr = prefix + "/ops/" + name + "/rows/" + std::to_string(i);
    if (!row.contains("size_bytes") || !row.contains("time_us") || !row.contains("in_place")) {
      throw InputError(sweep_file, ptr, "a row with size_bytes, in_place and time_us", row.dump());
    }
    if (row.at("in_place").get<bool>() != in_place) continue;
    FitCheckRow c;
    c.size_bytes = row.at("size_bytes").get<double>();
    if (c.size_bytes <= 0) continue;
    if (row.value("wrong", std::int64_t{0}) > 0) {
      throw InputError(sweep_file, ptr + "/wrong", "0 (a wrong result is not a measurement)",
                       std::to_string(row.at("wrong").get<std::int64_t>()));
    }
    c.measured_s = row.at("time_us").get<double>() * 1e-6;
    if (!(c.measured_s > 0)) {
      throw InputError(sweep_file, ptr + "/time_us", "a time > 0", row.at("time_us").dump());
    }
    c.measured_min_s = row.value("time_us_min", c.measured_s * 1e6) * 1e-6;
    c.measured_max_s = row.value("time_us_max", c.measured_s * 1e6) * 1e-6;
    c.repeats = row.value("repeats", 0);
    c.fit_s = t->fit.predict(c.size_bytes);
    const model::Estimate e = profile.collective_time_s(op, c.size_bytes, ranks);
    c.lookup_s = e.time_s;
    c.lookup_extrapolated = e.extrapolated;
    c.fit_error = (c.fit_s - c.measured_s) / c.measured_s;
    c.lookup_error = (c.lookup_s - c.measured_s) / c.measured_s;
    c.in_profile = std::any_of(t->rows.begin(), t->rows.end(), [&](const model::CollectiveRow& p) {
      return p.size_bytes == c.size_bytes;
    });
    c.judged = c.size_bytes > above_bytes && c.size_bytes >= t->rows.front().size_bytes &&
               c.size_bytes <= t->rows.back().size_bytes;
    c.ok = !c.judged || std::fabs(c.fit_error) <= tolerance;
    if (c.judged) {
      ++r.judged;
      r.max_abs_fit_error = std::max(r.max_abs_fit_error, std::fabs(c.fit_error));
      if (!c.ok) ++r.failures;
    }
    r.rows.push_back(c);
  }
  std::sort(r.rows.begin(), r.rows.end(),
            [](const FitCheckRow& a, const FitCheckRow& b) { return a.size_bytes < b.size_bytes; });
  return r;
}

std::string format_fit_check(const FitCheck& r) {
  std::string s =
      "| size | measured median (us) | min..max (us) | fit (us) | fit error | lookup (us) | "
      "lookup error | verdict |\n|---:|---:|---:|---:|---:|---:|---:|---|\n";
  char buf[512];
  for (const FitCheckRow& c : r.rows) {
    const char* verdict = !c.judged ? "not judged" : c.ok ? "ok" : "FAIL";
    std::snprintf(buf, sizeof buf,
                  "| %s | %.1f | %.1f..%.1f | %.1f | %+.1f%% | %.1f%s | %+.1f%% | %s%s |\n",
                  human_bytes(c.size_bytes).c_str(), c.measured_s * 1e6, c.measured_min_s * 1e6,
                  c.measured_max_s * 1e6, c.fit_s * 1e6, c.fit_error * 100, c.lookup_s * 1e6,
                  c.lookup_extrapolated ? " (extrap.)" : "", c.lookup_error * 100, verdict,
                  c.in_profile ? " (size also in the profile)" : "");
    s += buf;
  }
  std::snprintf(buf, sizeof buf,
                "%s over %d ranks: %d size(s) above %s judged, largest |fit error| %.1f%%, %d "
                "above %.0f%%: %s\n",
                r.op.c_str(), r.ranks, r.judged, human_bytes(r.above_bytes).c_str(),
                r.max_abs_fit_error * 100, r.failures, r.tolerance * 100,
                r.judged == 0 ? "NOTHING JUDGED" : (r.failures == 0 ? "PASS" : "FAIL"));
  s += buf;
  return s;
}

}  // namespace ddpsim::calib
