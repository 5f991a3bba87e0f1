// The trace comparison of trace_compare.hpp.
#include "simulator/cli/validate/trace_compare.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "model/atomic_file.hpp"
#include "model/kineto_import.hpp"
#include "model/scenario.hpp"
#include "simulator/cli/validate/report.hpp"
#include "simulator/report.hpp"
#include "simulator/run.hpp"

namespace ddpsim::validate {

using nlohmann::json;

namespace {

struct Measured {
  double step = 0, forward = 0, backward = 0, optimizer = 0, comm = 0, exposed = 0;
};

double at(const json& o, const char* k) { return o.contains(k) ? o.at(k).get<double>() : 0.0; }

}  // namespace

int run_trace_comparison(const std::string& scenario, const std::vector<std::string>& traces,
                         const std::string& out) {
  const model::Scenario base = model::load_scenario(scenario);
  Measured m;
  json traced = json::array();
  json measured_buckets = json::array();
  for (const std::string& f : traces) {
    const json l = model::import_kineto_file(f);
    const json& ph = l.at("phases");
    const json comm = l.value("communication", json::object());
    m.step += at(l, "step_s");
    m.forward += at(ph, "forward_s");
    m.backward += at(ph, "backward_s");
    m.optimizer += at(ph, "optimizer_s");
    m.comm += at(comm, "comm_s");
    m.exposed += at(comm, "exposed_s");
    if (traced.empty() && comm.contains("per_step")) {
      for (const json& c : comm.at("per_step").at(0).at("collectives")) {
        if (c.at("op") == "all_reduce") measured_buckets.push_back(c.value("bytes", json()));
      }
    }
    traced.push_back({{"file", f},
                      {"steps", l.at("steps")},
                      {"device", l.at("device")},
                      {"world_size", comm.value("world_size", json())},
                      {"whole_model", l.at("whole_model")}});
  }
  const double n = static_cast<double>(traces.size());
  for (double* x : {&m.step, &m.forward, &m.backward, &m.optimizer, &m.comm, &m.exposed}) *x /= n;

  json points = json::array();
  std::string table;
  sim::PredictorCache cache;
  for (const model::Scenario& s : model::expand_sweep(base)) {
    sim::RunOptions run;
    run.engine = model::Engine::kAnalytic;
    const sim::Prediction a = sim::predict_point(s, run, cache);
    run.engine = model::Engine::kEvent;
    const sim::Prediction e = sim::predict_point(s, run, cache);
    json rows = json::array({row("step", a.step_time_s, e.step_time_s, m.step),
                             row("forward", a.forward_time_s, e.forward_time_s, m.forward),
                             row("backward", a.backward_time_s, e.backward_time_s, m.backward),
                             row("optimizer", a.optimizer_time_s, e.optimizer_time_s, m.optimizer),
                             row("comm (sum)", a.comm_time_s, e.comm_time_s, m.comm),
                             row("exposed comm", a.exposed_comm_s, e.exposed_comm_s, m.exposed)});
    json predicted_buckets = json::array();
    for (const sim::BucketTiming& b : a.buckets) predicted_buckets.push_back(b.bytes);
    table += label_text(s.point, s.cluster.gpus) + "\n";
    char line[256];
    std::snprintf(line, sizeof line, "  %-14s %12s %12s %12s %9s %9s\n", "quantity", "analytic",
                  "event", "traced", "err a", "err e");
    table += line;
    for (const json& r : rows) {
      std::snprintf(
          line, sizeof line, "  %-14s %12s %12s %12s %9s %9s\n",
          r.at("quantity").get<std::string>().c_str(), ms(r.at("analytic").get<double>()).c_str(),
          ms(r.at("event").get<double>()).c_str(), ms(r.at("measured").get<double>()).c_str(),
          pct(r.at("error_analytic")).c_str(), pct(r.at("error_event")).c_str());
      table += line;
    }
    table += "  buckets (bytes): predicted " + predicted_buckets.dump() + ", traced all-reduces " +
             measured_buckets.dump() + "\n";
    points.push_back({{"point", s.point},
                      {"gpus", s.cluster.gpus},
                      {"rows", std::move(rows)},
                      {"buckets",
                       {{"predicted_bytes", std::move(predicted_buckets)},
                        {"measured_bytes", measured_buckets}}}});
  }
  std::printf("times in ms per step; traced: the mean of %zu trace(s)\n%s", traces.size(),
              table.c_str());
  if (!out.empty()) {
    json doc;
    doc["context"] = sim::context_json("analytic+event vs PyTorch profiler traces");
    doc["scenario"] = sim::scenario_json(base);
    doc["traces"] = std::move(traced);
    doc["errors_are"] = "(predicted - traced) / traced; null where nothing was traced";
    doc["points"] = std::move(points);
    model::write_file_atomic(out, doc.dump(2) + "\n");
    std::printf("wrote %s\n", out.c_str());
  }
  return 0;
}

}  // namespace ddpsim::validate
