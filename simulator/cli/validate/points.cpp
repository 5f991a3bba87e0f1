#include "simulator/cli/validate/points.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "model/atomic_file.hpp"
#include "model/interrupt.hpp"
#include "model/profile/profile.hpp"
#include "simulator/cli/validate/children.hpp"
#include "simulator/cli/validate/profiles.hpp"
#include "simulator/cli/validate/report.hpp"
#include "simulator/cli/validate/stats.hpp"
#include "simulator/cli/validate/torch_runner.hpp"
#include "simulator/report.hpp"
#include "simulator/run.hpp"

namespace ddpsim::validate {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json pooled(const std::vector<json>& steps, const char* key) {
  std::vector<double> v;
  for (const json& s : steps) v.push_back(s.at(key).get<double>());
  return validate::median(v);
}

json spread_json(const validate::RunSpread& s) {
  return {{"runs", s.runs},
          {"min", s.min},
          {"median", s.median},
          {"max", s.max},
          {"half_range_relative", s.half_range_relative}};
}

json ci_json(const validate::MedianCi& c) {
  return {{"n", c.n},
          {"median_s", c.median},
          {"ci_lo_s", c.lo},
          {"ci_hi_s", c.hi},
          {"coverage", c.coverage}};
}

std::vector<double> step_times(const std::vector<json>& steps) {
  std::vector<double> v;
  for (const json& s : steps) v.push_back(s.at("step_time_s").get<double>());
  return v;
}

json efficiency_json(const Point& p, int repeat, int steps) {
  std::vector<double> indep_all, slowest;
  std::map<std::size_t, std::vector<double>> per_rank;
  for (const json& s : p.indep_steps) {
    const json& r = s.at("rank_step_time_s");
    for (std::size_t k = 0; k < r.size(); ++k) {
      indep_all.push_back(r[k].get<double>());
      per_rank[k].push_back(r[k].get<double>());
    }
  }
  double slowest_rank = 0;
  json rank_medians = json::array();
  for (auto& [k, v] : per_rank) {
    const double m = validate::median(v);
    rank_medians.push_back(m);
    slowest_rank = std::max(slowest_rank, m);
  }
  const validate::MedianCi ddp = validate::median_ci(step_times(p.ddp_steps));
  const validate::MedianCi ind = validate::median_ci(indep_all);
  std::vector<double> ratios;
  for (std::size_t r = 0; r < std::min(p.rep_ddp_median.size(), p.rep_indep_median.size()); ++r) {
    if (p.rep_indep_median[r] > 0) ratios.push_back(p.rep_ddp_median[r] / p.rep_indep_median[r]);
  }
  const validate::MedianCi ratio = validate::median_ci(ratios);
  const int buckets = static_cast<int>(p.measured_buckets_last.size());
  const double overhead = ddp.median - ind.median;
  const double exposed = pooled(p.ddp_steps, "exposed_comm_s").get<double>();
  auto diff = [&](const char* key) {
    return pooled(p.ddp_steps, key).get<double>() - pooled(p.indep_steps, key).get<double>();
  };
  const bool hidden = p.overlap && exposed <= 0.02 * ddp.median;
  return {
      {"baseline",
       "N independent processes at once (ddpsim-exec --independent): the same forward, backward "
       "and optimizer per rank, no collectives; all ranks' steps pooled"},
      {"repeats", repeat},
      {"steps_per_run", steps},
      {"ddp", ci_json(ddp)},
      {"independent", ci_json(ind)},
      {"independent_rank_median_s", rank_medians},
      {"independent_slowest_rank_median_s", slowest_rank},
      {"overhead_per_step_s", overhead},
      {"overhead_fraction", ind.median > 0 ? json(overhead / ind.median) : json(nullptr)},
      {"bucket_count", buckets},
      {"overhead_per_bucket_s", buckets > 0 ? json(overhead / buckets) : json(nullptr)},
      {"overhead_vs_slowest_rank_s", ddp.median - slowest_rank},
      {"paired_ratios", ratios},
      {"paired_ratio",
       {{"n", ratio.n},
        {"median", ratio.median},
        {"ci_lo", ratio.lo},
        {"ci_hi", ratio.hi},
        {"coverage", ratio.coverage}}},
      {"components_s",
       {{"forward", diff("forward_time_s")},
        {"backward", diff("backward_time_s")},
        {"optimizer", diff("optimizer_time_s")},
        {"exposed_comm", exposed}}},
      {"comm_hidden", hidden},
      {"criterion",
       "comm hidden (overlap on, exposed comm <= 2% of the step): DDP step within 5% "
       "of the independent processes' median step"},
      {"within_5pct", ind.median > 0 && overhead <= 0.05 * ind.median},
      {"paired_ratio_ci_within_5pct", !ratios.empty() && ratio.hi <= 1.05}};
}

}  // namespace

json point_scenario(const Options& o, const model::Scenario& base, const model::Scenario& s) {
  json doc = s.doc;
  doc.erase("sweep");
  doc["cluster"]["gpus"] = o.nproc > 0 ? o.nproc : s.cluster.gpus;
  absolutize_paths(doc, base.file);
  return doc;
}

fs::path point_file(const fs::path& tmp, std::size_t i) {
  return tmp / ("point-" + std::to_string(i) + ".json");
}

fs::path workload_file(const fs::path& tmp, std::size_t i) {
  return tmp / ("workload-" + std::to_string(i) + ".json");
}

void write_point_files(const Point& p, std::size_t i, const fs::path& tmp,
                       model::RunOutputs* outputs) {
  const auto write = [&](const fs::path& f, const json& doc) {
    model::write_file_atomic(f.string(), doc.dump(2) + "\n", outputs);  // checked
  };
  write(point_file(tmp, i), p.doc);
  if (!p.workload.is_null()) write(workload_file(tmp, i), p.workload);
}

Point predict_validation_point(const Options& o, const model::Scenario& base,
                               const model::Scenario& s, const std::string& profile, int steps,
                               const json& torch_facts) {
  Point pt;
  pt.label = s.point;
  pt.ranks = o.nproc > 0 ? o.nproc : s.cluster.gpus;
  pt.cap_mb = s.parallelism.bucket_cap_mb;
  pt.overlap = s.parallelism.overlap;
  // The point as a plain scenario, completed by what its runner runs where it leaves a key
  // unset (runner_defaults), and (for the prediction) the profile as its hardware, exactly as
  // `ddpsim predict POINT --profile PROFILE` reads it: the run API applies every section of the
  // profile (its torch calibration included), nothing is composed here.
  pt.doc = point_scenario(o, base, s);
  if (o.runner == "torch") pt.workload = workload_json(s);
  apply_runner_defaults(pt.doc, o.runner, torch_facts);
  json pdoc = pt.doc;
  model::use_profile_as_hardware(pdoc, profile);
  const model::Scenario ps = model::parse_scenario(pdoc, base.file);
  sim::PredictorCache cache;
  sim::RunOptions run;
  run.engine = model::Engine::kAnalytic;
  pt.analytic = sim::predict_point(ps, run, cache);
  // The event engine with every knob of the scenario, over the measured steps.
  run.engine = model::Engine::kEvent;
  run.steps = std::max(steps, 2);
  pt.event = sim::predict_point(ps, run, cache);
  pt.analytic_json = sim::prediction_json(ps, pt.analytic);
  pt.event_json = sim::prediction_json(ps, pt.event);
  return pt;
}

void record_prediction(Point& into, const Point& fresh) {
  for (const char* q : kQuantities) {
    into.rep_predicted_analytic[q].push_back(fresh.analytic_json.at(q).get<double>());
    into.rep_predicted_event[q].push_back(fresh.event_json.at(q).get<double>());
  }
}

void measure(const Options& o, Point& p, std::size_t i, bool independent, int steps,
             const fs::path& exec, const fs::path& tmp) {
  const std::string tag = std::to_string(i) + (independent ? "-ind" : "-ddp");
  const fs::path point = point_file(tmp, i);
  const fs::path exec_out = tmp / ("exec-" + tag + ".json");
  write_point_files(p, i, tmp);
  std::vector<std::string> argv = launcher(o, p.ranks);
  if (o.runner == "torch") {
    for (std::string& a : torch_runner_argv()) argv.push_back(std::move(a));
    argv.push_back(point.string());
    argv.push_back("--workload");
    argv.push_back(workload_file(tmp, i).string());
  } else {
    argv.push_back(exec.string());
    argv.push_back(point.string());
    argv.push_back("--noise-scale");
    argv.push_back("false");
  }
  for (const std::string& a :
       {std::string("--nproc"), std::to_string(p.ranks), std::string("--steps"),
        std::to_string(steps), std::string("--out"), exec_out.string()}) {
    argv.push_back(a);
  }
  if (min_seconds(o) > 0) {
    argv.push_back("--min-seconds");
    argv.push_back(json(min_seconds(o)).dump());
  }
  if (independent) argv.push_back("--independent");
  run_child(argv, tmp / ("exec-" + tag + ".log"));
  const json doc = model::read_json_file(exec_out.string());
  const json& m = doc.at("results").at(0);
  std::vector<json>& into = independent ? p.indep_steps : p.ddp_steps;
  std::vector<double> mine;
  for (const json& s : m.at("steps")) {
    if (s.at("warmup").get<bool>()) continue;
    into.push_back(s);
    if (independent) {
      // Every rank's steps: the baseline is N processes, not rank 0.
      for (const json& t : s.at("rank_step_time_s")) mine.push_back(t.get<double>());
    } else {
      mine.push_back(s.at("step_time_s").get<double>());
    }
  }
  (independent ? p.rep_indep_median : p.rep_ddp_median).push_back(validate::median(mine));
  if (!independent) {
    std::vector<json> run;
    for (const json& s : m.at("steps")) {
      if (!s.at("warmup").get<bool>()) run.push_back(s);
    }
    for (const char* q : kQuantities)
      p.rep_quantity_median[q].push_back(pooled(run, q).get<double>());
  }
  if (!independent) p.measured_buckets_last = m.at("buckets");
}

json point_json(const Point& pt, const std::string& profile_kept, bool efficiency, int repeat,
                int steps) {
  json rows = json::array();
  json noise = json::array();
  for (const char* q : kQuantities) {
    json r = row(q, pt.analytic_json.at(q).get<double>(), pt.event_json.at(q).get<double>(),
                 pooled(pt.ddp_steps, q).get<double>());
    // The run-to-run spread of this quantity (each run's median), and whether it exceeds the
    // error reported: then the error is within the noise of the measurement.
    auto it = pt.rep_quantity_median.find(q);
    if (it != pt.rep_quantity_median.end()) {
      const validate::RunSpread sp = validate::run_spread(it->second);
      r["spread"] = spread_json(sp);
      // --recalibrate-each: the spread of each engine's prediction over the calibrations.
      std::map<std::string, validate::RunSpread> pred;
      if (pt.rep_predicted_analytic.count(q)) {
        pred["analytic"] = validate::run_spread(pt.rep_predicted_analytic.at(q));
        pred["event"] = validate::run_spread(pt.rep_predicted_event.at(q));
        r["predicted_spread"] = {{"analytic", spread_json(pred["analytic"])},
                                 {"event", spread_json(pred["event"])}};
        // Each repetition against the calibration made just before it (the analytic
        // prediction): the machine's drift between calibration and measurement bounded to one
        // repetition's minutes.
        const std::vector<double>& pr = pt.rep_predicted_analytic.at(q);
        if (pr.size() == it->second.size()) {
          json paired = json::array();
          for (std::size_t k = 0; k < pr.size(); ++k) {
            paired.push_back(it->second[k] > 0 ? json(pr[k] / it->second[k] - 1) : json(nullptr));
          }
          r["paired_errors_analytic"] = paired;
        }
      }
      for (const char* e : {"analytic", "event"}) {
        const json& err = r.at(std::string("error_") + e);
        // The noise of this error: the larger of the measurement's and (with
        // --recalibrate-each) the calibration's relative half-range.
        validate::RunSpread noisiest = sp;
        if (pred.count(e) && pred[e].half_range_relative > noisiest.half_range_relative) {
          noisiest = pred[e];
        }
        const bool within = !err.is_null() && validate::within_noise(noisiest, err.get<double>());
        r["spread"][std::string("exceeds_error_") + e] = within;
        if (within) {
          noise.push_back({{"quantity", q},
                           {"engine", e},
                           {"error", err},
                           {"half_range_relative", noisiest.half_range_relative},
                           {"source", noisiest.half_range_relative > sp.half_range_relative
                                          ? "calibrations"
                                          : "measured runs"}});
        }
      }
    }
    rows.push_back(std::move(r));
  }
  // Bucket end times: medians over the measured steps (every step after the first has the
  // rebuilt buckets).
  std::map<std::size_t, std::vector<double>> ends;
  for (const json& s : pt.ddp_steps) {
    for (std::size_t b = 0; b < s.at("buckets").size(); ++b) {
      ends[b].push_back(s.at("buckets")[b].at("end_s").get<double>());
    }
  }
  const std::size_t nb =
      std::min({ends.size(), pt.analytic.buckets.size(), pt.event.buckets.size()});
  for (std::size_t b = 0; b < nb; ++b) {
    rows.push_back(row("bucket[" + std::to_string(b) + "].end_s", pt.analytic.buckets[b].end_s,
                       pt.event.buckets[b].end_s, validate::median(ends[b])));
  }
  json pj = {
      {"point", pt.label},
      {"gpus", pt.ranks},
      {"bucket_count",
       {{"predicted", pt.analytic.buckets.size()}, {"measured", pt.measured_buckets_last.size()}}},
      {"rows", rows},
      {"measured_step_time", ci_json(validate::median_ci(step_times(pt.ddp_steps)))},
      {"predicted_step_time_interval_s",
       pt.analytic_json.value("step_time_interval_s", json(nullptr))},
      {"measured_sources", pt.analytic_json.value("measured", json(nullptr))},
      {"profile", profile_kept},
      {"warnings", pt.analytic.warnings},
      {"error_within_noise", noise}};
  if (pj["measured_sources"].is_object()) pj["measured_sources"]["profile"] = profile_kept;
  if (efficiency) pj["efficiency"] = efficiency_json(pt, repeat, steps);
  return pj;
}

std::string point_table(const Point& pt, const json& pj) {
  std::string table;
  const json& rows = pj.at("rows");
  table += "point " + label_text(pt.label, pt.ranks) + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-18s %11s %11s %11s %9s %9s %8s\n", "quantity",
                "analytic_ms", "event_ms", "measured_ms", "err_an", "err_ev", "spread");
  table += line;
  for (const json& r : rows) {
    std::snprintf(line, sizeof line, "  %-18s %11.3f %11.3f %11.3f %9s %9s %8s\n",
                  r.at("quantity").get<std::string>().c_str(), 1e3 * r.at("analytic").get<double>(),
                  1e3 * r.at("event").get<double>(), 1e3 * r.at("measured").get<double>(),
                  pct(r.at("error_analytic")).c_str(), pct(r.at("error_event")).c_str(),
                  spread_text(r.value("spread", json(nullptr))).c_str());
    table += line;
  }
  table += noise_warnings(pj);
  if (pj.contains("efficiency")) {
    const json& e = pj.at("efficiency");
    std::snprintf(
        line, sizeof line,
        "  efficiency: DDP %.3f ms vs independent %.3f ms: overhead %.3f ms/step (%s), "
        "%s ms/bucket, paired ratio %.3f\n",
        1e3 * e["ddp"]["median_s"].get<double>(), 1e3 * e["independent"]["median_s"].get<double>(),
        1e3 * e["overhead_per_step_s"].get<double>(), pct(e["overhead_fraction"]).c_str(),
        e["overhead_per_bucket_s"].is_null() ? "-"
                                             : ms(e["overhead_per_bucket_s"].get<double>()).c_str(),
        e["paired_ratio"]["median"].get<double>());
    table += line;
  }
  return table;
}

json bucket_choice_json(const std::vector<Point>& points) {
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < points.size(); ++i) {
    json key = points[i].label;
    if (!key.contains(kCapKey)) return json::array();
    key.erase(kCapKey);
    key.erase("cluster.gpus");  // "gpus" says it (also under --nproc)
    key["gpus"] = points[i].ranks;
    groups[key.dump()].push_back(i);
  }
  json out = json::array();
  for (auto& [key, idx] : groups) {
    if (idx.size() < 2) continue;
    std::sort(idx.begin(), idx.end(),
              [&](std::size_t a, std::size_t b) { return points[a].cap_mb < points[b].cap_mb; });
    std::vector<validate::MedianCi> cis;
    json rows = json::array();
    double best_a = 1e300, best_e = 1e300;
    for (std::size_t i : idx) {
      cis.push_back(validate::median_ci(step_times(points[i].ddp_steps)));
      best_a = std::min(best_a, points[i].analytic.step_time_s);
      best_e = std::min(best_e, points[i].event.step_time_s);
    }
    const std::vector<std::size_t> set = validate::best_set(cis);
    json set_mb = json::array(), pred_a = json::array(), pred_e = json::array();
    for (std::size_t j : set) set_mb.push_back(points[idx[j]].cap_mb);
    bool a_all = true, a_any = false, e_all = true, e_any = false;
    auto in_set = [&](std::size_t j) { return std::find(set.begin(), set.end(), j) != set.end(); };
    for (std::size_t j = 0; j < idx.size(); ++j) {
      const Point& p = points[idx[j]];
      // Ties (caps that give the same buckets predict the same step) are all "predicted best".
      const bool is_a = p.analytic.step_time_s <= best_a * (1 + 1e-9);
      const bool is_e = p.event.step_time_s <= best_e * (1 + 1e-9);
      if (is_a) pred_a.push_back(p.cap_mb), a_all &= in_set(j), a_any |= in_set(j);
      if (is_e) pred_e.push_back(p.cap_mb), e_all &= in_set(j), e_any |= in_set(j);
      json r = ci_json(cis[j]);
      r["bucket_cap_mb"] = p.cap_mb;
      r["predicted_analytic_s"] = p.analytic.step_time_s;
      r["predicted_event_s"] = p.event.step_time_s;
      r["bucket_count"] = p.analytic.buckets.size();
      r["in_measured_best_set"] = in_set(j);
      rows.push_back(r);
    }
    json g = json::parse(key);
    out.push_back({{"group", g},
                   {"rows", rows},
                   {"measured_best_mb", points[idx[set.front()]].cap_mb},
                   {"measured_best_set_mb", set_mb},
                   {"predicted_best_mb_analytic", pred_a},
                   {"predicted_best_mb_event", pred_e},
                   {"predicted_best_in_set_analytic", a_all},
                   {"predicted_best_in_set_event", e_all},
                   {"some_predicted_best_in_set_analytic", a_any},
                   {"some_predicted_best_in_set_event", e_any}});
  }
  return out;
}

}  // namespace ddpsim::validate
