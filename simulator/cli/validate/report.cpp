#include "simulator/cli/validate/report.hpp"

#include <cmath>
#include <cstdio>
#include <map>

namespace ddpsim::validate {

using nlohmann::json;

nlohmann::json relative_error(double predicted, double measured) {
  // Relative to the measurement; undefined (null) when nothing was measured (e.g. no exposed
  // communication), where abs_error_s still says how far off the prediction is.
  if (std::abs(measured) < 1e-9) return nullptr;
  return (predicted - measured) / measured;
}

nlohmann::json row(const std::string& quantity, double analytic, double event, double measured) {
  return {{"quantity", quantity},
          {"analytic", analytic},
          {"event", event},
          {"measured", measured},
          {"abs_error_analytic_s", analytic - measured},
          {"abs_error_event_s", event - measured},
          {"error_analytic", relative_error(analytic, measured)},
          {"error_event", relative_error(event, measured)}};
}

std::string pct(const nlohmann::json& e) {
  if (e.is_null()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * e.get<double>());
  return buf;
}

std::string ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", 1e3 * s);
  return buf;
}

std::string spread_text(const json& spread) {
  if (spread.is_null() || spread.value("runs", 0) < 2) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "+-%.1f%%", 100 * spread.at("half_range_relative").get<double>());
  return buf;
}

std::string noise_warnings(const json& point) {
  std::string out;
  for (const json& r : point.at("rows")) {
    if (!r.contains("spread")) continue;
    const json& s = r.at("spread");
    std::string engines;
    for (const char* e : {"analytic", "event"}) {
      if (!s.value(std::string("exceeds_error_") + e, false)) continue;
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%.1f%% (%s)", engines.empty() ? "" : ", ",
                    100 * std::abs(r.at(std::string("error_") + e).get<double>()), e);
      engines += buf;
    }
    if (engines.empty()) continue;
    std::string calib;
    if (r.contains("predicted_spread")) {
      const json& ps = r.at("predicted_spread");
      calib = ", calibrations " + spread_text(ps.at("analytic")) + " (analytic), " +
              spread_text(ps.at("event")) + " (event)";
    }
    char buf[640];
    std::snprintf(buf, sizeof buf,
                  "  warning: %s: |error| %s within the run-to-run spread: measured %s over %d "
                  "runs (%s..%s ms)%s: the error is within the noise\n",
                  r.at("quantity").get<std::string>().c_str(), engines.c_str(),
                  spread_text(s).c_str(), s.at("runs").get<int>(),
                  ms(s.at("min").get<double>()).c_str(), ms(s.at("max").get<double>()).c_str(),
                  calib.c_str());
    out += buf;
  }
  return out;
}

std::string label_text(const json& label, int ranks) {
  std::string s;
  for (auto it = label.begin(); it != label.end(); ++it) {
    if (it.key() == "cluster.gpus") continue;
    std::string k = it.key();
    if (k.rfind("model.", 0) == 0) {
      k = k.substr(6);  // mlp.widths.1
    } else if (const auto dot = k.rfind('.'); dot != std::string::npos) {
      k = k.substr(dot + 1);
    }
    s += (s.empty() ? "" : ", ") + k + "=" + it.value().dump();
  }
  return "gpus=" + std::to_string(ranks) + (s.empty() ? "" : ", " + s);
}

std::string markdown(const json& doc) {
  std::string md;
  md += "Host `" + doc["context"].value("host", std::string("?")) + "`, " +
        doc["context"].value("date", std::string("?")) + ", load average before/after " +
        doc["context"]["load_average"].get<std::string>() + " / " +
        doc["context"]["load_average_after"].get<std::string>() + "; " +
        std::to_string(doc["context"]["steps"].get<int>()) + " steps" +
        (doc["context"].value("min_seconds", 0.0) > 0
             ? " (at least " + json(doc["context"]["min_seconds"]).dump() + " s)"
             : std::string()) +
        " x " + std::to_string(doc["context"]["repeat"].get<int>()) +
        " repetitions per point; errors (predicted - measured) / measured, analytic (event).\n\n";
  md +=
      "| point | step pred ms | step meas ms | step err | step spread | fwd err | bwd err | opt "
      "err | exposed pred/meas ms | comm err |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (const json& p : doc["points"]) {
    std::map<std::string, json> r;
    for (const json& x : p["rows"]) r[x["quantity"].get<std::string>()] = x;
    auto err = [&](const char* q) {
      const std::string an = pct(r[q]["error_analytic"]), ev = pct(r[q]["error_event"]);
      return an + (ev == an ? "" : " (" + ev + ")");
    };
    md += "| " + label_text(p["point"], p["gpus"].get<int>()) + " | " +
          ms(r["step_time_s"]["analytic"].get<double>()) + " | " +
          ms(r["step_time_s"]["measured"].get<double>()) + " | " + err("step_time_s") + " | " +
          spread_text(r["step_time_s"].value("spread", json(nullptr))) + " | " +
          err("forward_time_s") + " | " + err("backward_time_s") + " | " + err("optimizer_time_s") +
          " | " + ms(r["exposed_comm_s"]["analytic"].get<double>()) + " / " +
          ms(r["exposed_comm_s"]["measured"].get<double>()) + " | " + err("comm_time_s") + " |\n";
  }
  std::string noise;
  for (const json& p : doc["points"]) {
    const std::string w = noise_warnings(p);
    if (!w.empty()) noise += "- " + label_text(p["point"], p["gpus"].get<int>()) + ":\n" + w;
  }
  if (!noise.empty()) {
    md +=
        "\nErrors within the noise (run-to-run spread, half the range of the runs' medians, "
        "above |error|):\n\n" +
        noise;
  }
  bool any_eff = false;
  for (const json& p : doc["points"]) any_eff |= p.contains("efficiency");
  if (any_eff) {
    md +=
        "\nDDP efficiency (DDP vs the same per-rank work as N independent processes at once, "
        "interleaved runs; medians over all measured steps):\n\n| point | DDP ms | independent ms "
        "| overhead ms/step | overhead | buckets | ms/bucket | paired ratio [CI, coverage] | comm "
        "hidden "
        "| within 5% |\n|---|---|---|---|---|---|---|---|---|---|\n";
    for (const json& p : doc["points"]) {
      if (!p.contains("efficiency")) continue;
      const json& e = p["efficiency"];
      char buf[512];
      std::snprintf(
          buf, sizeof buf,
          "| %s | %s | %s | %s | %s | %d | %s | %.3f [%.3f, %.3f, %.0f%%] | %s | %s |\n",
          label_text(p["point"], p["gpus"].get<int>()).c_str(),
          ms(e["ddp"]["median_s"].get<double>()).c_str(),
          ms(e["independent"]["median_s"].get<double>()).c_str(),
          ms(e["overhead_per_step_s"].get<double>()).c_str(), pct(e["overhead_fraction"]).c_str(),
          e["bucket_count"].get<int>(),
          e["overhead_per_bucket_s"].is_null()
              ? "-"
              : ms(e["overhead_per_bucket_s"].get<double>()).c_str(),
          e["paired_ratio"]["median"].get<double>(), e["paired_ratio"]["ci_lo"].get<double>(),
          e["paired_ratio"]["ci_hi"].get<double>(),
          100 * e["paired_ratio"]["coverage"].get<double>(),
          e["comm_hidden"].get<bool>() ? "yes" : "no", e["within_5pct"].get<bool>() ? "yes" : "no");
      md += buf;
    }
  }
  if (!doc["bucket_choice"].empty()) {
    md +=
        "\nBucket size choice (median step over all measured steps, order-statistic CI, >= 95% "
        "from n = 6; "
        "measured best set = caps whose CI overlaps the best's):\n\n| group | cap MB | buckets | "
        "predicted ms | measured median ms [CI, coverage] | n | in best set | predicted best in "
        "set "
        "|\n|---|---|---|---|---|---|---|---|\n";
    for (const json& g : doc["bucket_choice"]) {
      json grp = g["group"];
      const int gpus = grp["gpus"].get<int>();
      grp.erase("gpus");
      for (const json& r : g["rows"]) {
        char buf[512];
        std::snprintf(
            buf, sizeof buf, "| %s | %g | %d | %s | %s [%s, %s, %.1f%%] | %d | %s | %s |\n",
            label_text(grp, gpus).c_str(), r["bucket_cap_mb"].get<double>(),
            r["bucket_count"].get<int>(), ms(r["predicted_analytic_s"].get<double>()).c_str(),
            ms(r["median_s"].get<double>()).c_str(), ms(r["ci_lo_s"].get<double>()).c_str(),
            ms(r["ci_hi_s"].get<double>()).c_str(), 100 * r["coverage"].get<double>(),
            r["n"].get<int>(), r["in_measured_best_set"].get<bool>() ? "yes" : "no",
            g["predicted_best_in_set_analytic"].get<bool>() ? "yes" : "no");
        md += buf;
      }
    }
  }
  return md;
}

}  // namespace ddpsim::validate
