// ddpsim-validate (`ddpsim validate`): predict a scenario on this machine's calibration profile
// with both engines, run it for real with ddpsim-exec, and tabulate predicted vs measured.
//
//   ddpsim-validate SCENARIO.json [--nproc N] [--profile P]... [--calibrate] [--steps S]
//                   [--repeat R] [--efficiency] [--netns-launch SCRIPT] [--out F] [--markdown M]
//
// Per sweep point (bucket sizes, widths, batches, cluster.gpus...): step time, forward, backward,
// exposed communication, optimizer, summed communication and every bucket's end time, each as
// analytic and event prediction, measurement (the median over every measured step of every
// repetition) and their relative errors (predicted - measured) / measured. Points may differ in
// rank count (a cluster.gpus sweep): each rank count gets its own profile — a --profile measured
// on that many ranks, else results/profile-<host>.json when it was, else `ddpsim-calibrate
// --backend cpu --quick` on the scenario at that rank count (also with --calibrate); calibrated
// profiles are kept beside the output. --repeat R runs every point R times, round-robin over
// the points, so that drift of a loaded machine spreads over all points instead of biasing the
// last ones. ddpsim-exec runs with --noise-scale false (the simulator does not model the
// noise-scale norms, which add a pass over the gradients to backward).
//
// --efficiency also runs every point as N independent processes (ddpsim-exec --independent:
// the same per-rank work, all ranks at once, no collectives), alternating DDP and independent
// runs within each repetition (order flipped every repetition), and reports the DDP overhead per
// step and per bucket with a paired ratio and its CI (a point's "efficiency" block).
// Where the sweep has a parallelism.bucket_cap_mb axis, "bucket_choice" groups the points that
// differ only in the cap: per cap the median step with a 95% order-statistic CI (stats.hpp),
// the measured best set and whether the predicted best lies in it.
// --netns-launch SCRIPT runs every multi-rank child (calibration and executor) under
// calibrate/netns/netns-launch.sh, one rank per network namespace of scripts/netns-lab.sh.
//
// The children (ddpsim-calibrate, ddpsim-exec) are the binaries beside this one; a missing one
// or a failing run is named on one line, exits 1 and writes no file. The output is written
// atomically (default results/validation-<host>-<YYYYMMDD>.json); --markdown writes the tables
// (rows and tables: report.hpp).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "simulator/cli/validate/report.hpp"
#include "simulator/cli/validate/stats.hpp"
#include "model/error.hpp"
#include "model/profile.hpp"
#include "model/scenario.hpp"
#include "simulator/report.hpp"
#include "simulator/run.hpp"

namespace {

using namespace ddpsim;
using nlohmann::json;
using validate::label_text;
using validate::markdown;
using validate::ms;
using validate::pct;
using validate::row;
namespace fs = std::filesystem;

// A child that could not run or failed: one line, exit 1.
struct ChildError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string utc(const char* format) {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

fs::path self_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

fs::path sibling(const std::string& name) {
  const fs::path p = self_dir() / name;
  if (access(p.c_str(), X_OK) != 0) {
    throw ChildError(name + " not found beside ddpsim-validate (" + p.string() +
                     "); build the target " + name);
  }
  return p;
}

std::string last_line(const fs::path& log) {
  std::ifstream f(log);
  std::string line, last;
  while (std::getline(f, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

// Runs `argv` with stdout and stderr into `log`; throws ChildError naming it unless it exits 0.
void run_child(const std::vector<std::string>& argv, const fs::path& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw ChildError("cannot fork to run " + argv[0]);
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw ChildError("lost the child " + argv[0]);
  }
  const std::string name = fs::path(argv[0]).filename().string();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  const std::string how = WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                            : "signal " + std::to_string(WTERMSIG(status));
  throw ChildError(name + " failed (" + how + "): " + last_line(log));
}

// A temporary folder removed on every exit path.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "ddpsim-validate-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw ChildError("cannot create a temporary folder");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// The quantities compared, in the keys both `ddpsim predict` and ddpsim-exec write.
const char* const kQuantities[] = {"step_time_s",    "forward_time_s",   "backward_time_s",
                                   "exposed_comm_s", "optimizer_time_s", "comm_time_s"};
const char* const kCapKey = "parallelism.bucket_cap_mb";

struct Options {
  std::string scenario;
  int nproc = 0;
  std::vector<std::string> profiles;
  bool calibrate = false;
  int steps = 0;
  int repeat = 1;
  bool efficiency = false;
  std::string netns_launch;
  std::string out;
  std::string markdown;
};

// argv prefix that runs a child on `ranks` ranks: the child itself (it launches its own local
// ranks), or under netns-launch.sh, one rank per namespace.
std::vector<std::string> launcher(const Options& o, int ranks) {
  if (o.netns_launch.empty() || ranks < 2) return {};
  return {"bash", o.netns_launch, "--nproc", std::to_string(ranks), "--timeout-s", "3600", "--"};
}

// The scenario `doc` with relative hardware.profile made absolute (the points are written to a
// temporary folder; the loader resolves it relative to the scenario file).
void absolutize_profile(json& doc, const std::string& scenario_file) {
  json& hw = doc["hardware"];
  if (hw.contains("profile") && hw["profile"].is_string() &&
      fs::path(hw["profile"].get<std::string>()).is_relative()) {
    hw["profile"] =
        fs::absolute(fs::path(scenario_file).parent_path() / hw["profile"].get<std::string>())
            .lexically_normal()
            .string();
  }
}

// The profile to predict `ranks`-rank points with: a given one measured on that many ranks
// (else the first given), the host's own when it has the right rank count, else a fresh quick
// calibration of the scenario at that rank count (into `tmp`).
std::string choose_profile(const Options& o, const model::Scenario& base, int ranks,
                           std::int64_t max_bytes, const fs::path& tmp, json& how) {
  if (!o.profiles.empty()) {
    for (const std::string& p : o.profiles) {
      if (model::Profile::load(p).ranks() == ranks) {
        how = "given (--profile)";
        return fs::absolute(p).string();
      }
    }
    how = "given (--profile; measured on " +
          std::to_string(model::Profile::load(o.profiles.front()).ranks()) + " ranks, used for " +
          std::to_string(ranks) + ")";
    return fs::absolute(o.profiles.front()).string();
  }
  const fs::path own = fs::path("results") / ("profile-" + host_name() + ".json");
  if (!o.calibrate && fs::exists(own)) {
    const model::Profile p = model::Profile::load(own.string());
    if (p.ranks() == ranks) {
      how = "results/profile-<host>.json";
      return fs::absolute(own).string();
    }
  }
  // The scenario at this rank count (a cluster.gpus axis removed), so the calibration times the
  // GEMMs and collective sizes of every other sweep axis.
  json doc = base.doc;
  if (doc.contains("sweep")) {
    doc["sweep"].erase("cluster.gpus");
    if (doc["sweep"].empty()) doc.erase("sweep");
  }
  doc["cluster"]["gpus"] = ranks;
  absolutize_profile(doc, base.file);
  const fs::path scen = tmp / ("calibrate-" + std::to_string(ranks) + ".json");
  {
    std::ofstream f(scen);
    f << doc.dump(2) << "\n";
  }
  const fs::path calibrate = sibling("ddpsim-calibrate");
  const fs::path out = tmp / ("profile-" + std::to_string(ranks) + ".json");
  // --iters 15: 5 timed calls per size (quick's default) left the 8 MiB all-reduce median
  // 7.4 ms in one calibration and 10.1 ms in the next, minutes apart; 15 up to 16 MiB (fewer
  // above, sweep.hpp) cost ~1 s more.
  std::cerr << "calibrating (ddpsim-calibrate --quick --iters 15, " << ranks << " ranks"
            << (launcher(o, ranks).empty() ? "" : ", in the namespace lab") << ")...\n";
  std::vector<std::string> argv = launcher(o, ranks);
  for (const std::string& a :
       {calibrate.string(), std::string("--backend"), std::string("cpu"), std::string("--nproc"),
        std::to_string(ranks), std::string("--scenario"), scen.string(), std::string("--quick"),
        std::string("--out"), out.string(), std::string("--max-bytes"), std::to_string(max_bytes),
        std::string("--iters"), std::string("15")}) {
    argv.push_back(a);
  }
  run_child(argv, tmp / ("calibrate-" + std::to_string(ranks) + ".log"));
  how = std::string("calibrated (ddpsim-calibrate --backend cpu --quick --iters 15") +
        (launcher(o, ranks).empty() ? ")" : ", netns lab)");
  return out.string();
}

// One sweep point: the plain scenario the executor runs, its rank count, the predictions.
struct Point {
  json label;  ///< the sweep values ({} for an unswept scenario)
  json doc;    ///< plain scenario (no sweep)
  int ranks = 1;
  double cap_mb = 0;
  bool overlap = true;
  sim::Prediction analytic, event;
  json analytic_json, event_json;
  // Measured rows (rank 0's non-warm-up steps of every repetition), per mode.
  std::vector<json> ddp_steps, indep_steps;
  std::vector<double> rep_ddp_median, rep_indep_median;
  json measured_buckets_last = json::array();
};

json pooled(const std::vector<json>& steps, const char* key) {
  std::vector<double> v;
  for (const json& s : steps) v.push_back(s.at(key).get<double>());
  return validate::median(v);
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

// Runs ddpsim-exec on point `i` once; appends its non-warm-up step rows.
void measure(const Options& o, Point& p, std::size_t i, int rep, bool independent, int steps,
             const fs::path& exec, const fs::path& tmp) {
  const std::string tag = std::to_string(i) + (independent ? "-ind" : "-ddp");
  const fs::path point_file = tmp / ("point-" + std::to_string(i) + ".json");
  const fs::path exec_out = tmp / ("exec-" + tag + ".json");
  if (!fs::exists(point_file)) {
    std::ofstream f(point_file);
    f << p.doc.dump(2) << "\n";
  }
  std::vector<std::string> argv = launcher(o, p.ranks);
  for (const std::string& a :
       {exec.string(), point_file.string(), std::string("--nproc"), std::to_string(p.ranks),
        std::string("--steps"), std::to_string(steps), std::string("--noise-scale"),
        std::string("false"), std::string("--out"), exec_out.string()}) {
    argv.push_back(a);
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
  if (!independent) p.measured_buckets_last = m.at("buckets");
  (void)rep;
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

// Points that differ only in the bucket cap, grouped: per cap the measured median step and its
// CI, the measured best set, the predicted best (analytic and event) and whether it is in it.
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

int run(const Options& o) {
  const model::Scenario base = model::load_scenario(o.scenario);
  const std::vector<model::Scenario> expanded = model::expand_sweep(base);
  const int steps = o.steps > 0 ? o.steps : base.simulation.steps;
  const int repeat = o.repeat;
  if (!o.netns_launch.empty() && access(o.netns_launch.c_str(), R_OK) != 0) {
    throw InputError(o.netns_launch, "", "a readable netns-launch.sh", "missing");
  }
  const fs::path exec = sibling("ddpsim-exec");
  TempDir tmp;

  // Profiles, one per rank count.
  // The collective sweep of a calibration must reach the largest bucket (--quick alone stops at
  // 4 MiB and the fit would extrapolate 16-64 MiB buckets from small sizes): up to the power of
  // two at or above the largest model's gradient bytes, at least 4 MiB.
  std::set<int> rank_counts;
  std::map<int, std::int64_t> max_bytes;
  for (const model::Scenario& p : expanded) {
    const int r = o.nproc > 0 ? o.nproc : p.cluster.gpus;
    rank_counts.insert(r);
    std::int64_t need = std::int64_t{4} << 20;
    while (need < 4 * p.workload->param_count()) need *= 2;
    max_bytes[r] = std::max(max_bytes[r], need);
  }
  const std::string out =
      !o.out.empty() ? o.out : "results/validation-" + host_name() + "-" + utc("%Y%m%d") + ".json";
  struct ProfileChoice {
    std::string path, kept;
    json how;
  };
  std::map<int, ProfileChoice> profiles;
  for (int ranks : rank_counts) {
    ProfileChoice c;
    c.path = choose_profile(o, base, ranks, max_bytes[ranks], tmp.path, c.how);
    c.kept = c.path;
    if (c.how.get<std::string>().rfind("calibrated", 0) == 0) {
      // Keep the profile the prediction used beside the output.
      fs::path keep = fs::path(out);
      keep.replace_extension();
      c.kept = keep.string() + (rank_counts.size() == 1
                                    ? std::string("-profile.json")
                                    : "-profile-" + std::to_string(ranks) + "ranks.json");
    }
    profiles[ranks] = c;
  }

  // Predictions.
  std::vector<Point> points;
  for (const model::Scenario& s : expanded) {
    Point pt;
    pt.label = s.point;
    pt.ranks = o.nproc > 0 ? o.nproc : s.cluster.gpus;
    pt.cap_mb = s.parallelism.bucket_cap_mb;
    pt.overlap = s.parallelism.overlap;
    // The point as a plain scenario: the sweep applied, the rank count, and (for the
    // prediction) the profile as its hardware.
    pt.doc = s.doc;
    pt.doc.erase("sweep");
    pt.doc["cluster"]["gpus"] = pt.ranks;
    absolutize_profile(pt.doc, base.file);
    json pdoc = pt.doc;
    pdoc["hardware"] = {{"profile", profiles[pt.ranks].path}};
    if (model::Profile::load(profiles[pt.ranks].path).ranks() < 2) {
      // A one-rank profile measured no collective, so it has no links; a one-rank point runs
      // none either. Placeholders complete the hardware and are never used.
      pdoc["hardware"]["intra_node"] = {{"name", "none (one-rank profile)"},
                                        {"kind", "intra_node"},
                                        {"bandwidth_gbytes_per_s", 1.0},
                                        {"latency_us", 1.0}};
      pdoc["hardware"]["inter_node"] = {{"name", "none (one-rank profile)"},
                                        {"kind", "nic"},
                                        {"bandwidth_gbps", 8.0},
                                        {"latency_us", 1.0}};
    }
    const model::Scenario ps = model::parse_scenario(pdoc, base.file);
    sim::PredictorCache cache;
    sim::RunOptions run;
    run.engine = model::Engine::kAnalytic;
    pt.analytic = sim::predict_point(ps, run, cache);
    // The event engine with every knob of the scenario (the profile's measured interference
    // among them, as `ddpsim predict --engine event` applies it), over the measured steps.
    run.engine = model::Engine::kEvent;
    run.steps = std::max(steps, 2);
    pt.event = sim::predict_point(ps, run, cache);
    pt.analytic_json = sim::prediction_json(ps, pt.analytic);
    pt.event_json = sim::prediction_json(ps, pt.event);
    points.push_back(std::move(pt));
  }

  // Measurements: repetitions round-robin over the points; with --efficiency each repetition
  // runs DDP and independent back to back, the order flipped every repetition.
  const std::string load_before = load_average();
  for (int rep = 0; rep < repeat; ++rep) {
    for (std::size_t i = 0; i < points.size(); ++i) {
      std::cerr << "repetition " << rep + 1 << "/" << repeat << ", point " << i + 1 << "/"
                << points.size() << " " << label_text(points[i].label, points[i].ranks)
                << ": ddpsim-exec (" << steps << " steps)" << (o.efficiency ? " x2" : "")
                << "...\n";
      const bool indep_first = o.efficiency && rep % 2 == 1;
      if (indep_first) measure(o, points[i], i, rep, true, steps, exec, tmp.path);
      measure(o, points[i], i, rep, false, steps, exec, tmp.path);
      if (o.efficiency && !indep_first) measure(o, points[i], i, rep, true, steps, exec, tmp.path);
    }
  }
  const std::string load_after = load_average();

  json out_points = json::array();
  std::string table;
  for (Point& pt : points) {
    json rows = json::array();
    for (const char* q : kQuantities) {
      rows.push_back(row(q, pt.analytic_json.at(q).get<double>(), pt.event_json.at(q).get<double>(),
                         pooled(pt.ddp_steps, q).get<double>()));
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
    const ProfileChoice& prof = profiles[pt.ranks];
    json pj = {{"point", pt.label},
               {"gpus", pt.ranks},
               {"bucket_count",
                {{"predicted", pt.analytic.buckets.size()},
                 {"measured", pt.measured_buckets_last.size()}}},
               {"rows", rows},
               {"measured_step_time", ci_json(validate::median_ci(step_times(pt.ddp_steps)))},
               {"predicted_step_time_interval_s",
                pt.analytic_json.value("step_time_interval_s", json(nullptr))},
               {"measured_sources", pt.analytic_json.value("measured", json(nullptr))},
               {"profile", prof.kept},
               {"warnings", pt.analytic.warnings}};
    if (pj["measured_sources"].is_object()) pj["measured_sources"]["profile"] = prof.kept;
    if (o.efficiency) pj["efficiency"] = efficiency_json(pt, repeat, steps);
    out_points.push_back(pj);

    table += "point " + label_text(pt.label, pt.ranks) + "\n";
    char line[256];
    std::snprintf(line, sizeof line, "  %-18s %11s %11s %11s %9s %9s\n", "quantity", "analytic_ms",
                  "event_ms", "measured_ms", "err_an", "err_ev");
    table += line;
    for (const json& r : rows) {
      std::snprintf(line, sizeof line, "  %-18s %11.3f %11.3f %11.3f %9s %9s\n",
                    r.at("quantity").get<std::string>().c_str(),
                    1e3 * r.at("analytic").get<double>(), 1e3 * r.at("event").get<double>(),
                    1e3 * r.at("measured").get<double>(), pct(r.at("error_analytic")).c_str(),
                    pct(r.at("error_event")).c_str());
      table += line;
    }
    if (o.efficiency) {
      const json& e = pj["efficiency"];
      std::snprintf(line, sizeof line,
                    "  efficiency: DDP %.3f ms vs independent %.3f ms: overhead %.3f ms/step (%s), "
                    "%s ms/bucket, paired ratio %.3f\n",
                    1e3 * e["ddp"]["median_s"].get<double>(),
                    1e3 * e["independent"]["median_s"].get<double>(),
                    1e3 * e["overhead_per_step_s"].get<double>(),
                    pct(e["overhead_fraction"]).c_str(),
                    e["overhead_per_bucket_s"].is_null()
                        ? "-"
                        : ms(e["overhead_per_bucket_s"].get<double>()).c_str(),
                    e["paired_ratio"]["median"].get<double>());
      table += line;
    }
  }
  const json choice = bucket_choice_json(points);
  for (const json& g : choice) {
    table += "bucket choice " + g["group"].dump() + ": measured best " +
             g["measured_best_mb"].dump() + " MB, set " + g["measured_best_set_mb"].dump() +
             ", predicted best " + g["predicted_best_mb_analytic"].dump() + " -> " +
             (g["predicted_best_in_set_analytic"].get<bool>() ? "in the set" : "NOT in the set") +
             "\n";
  }

  json doc;
  doc["context"] = sim::context_json("analytic+event vs ddpsim-exec");
  doc["context"]["device"] = "this machine's CPUs (ddpsim-exec, Gloo, OpenBLAS)";
  doc["context"]["load_average"] = load_before;
  doc["context"]["load_average_after"] = load_after;
  doc["context"]["nproc"] = o.nproc > 0 ? json(o.nproc) : json("per point (cluster.gpus)");
  doc["context"]["steps"] = steps;
  doc["context"]["repeat"] = repeat;
  doc["context"]["network"] = o.netns_launch.empty()
                                  ? "loopback TCP (local ranks)"
                                  : "network namespaces (scripts/netns-lab.sh; see its tbf rate)";
  doc["scenario"] = sim::scenario_json(base);
  json prof = json::array();
  for (const auto& [ranks, c] : profiles) {
    prof.push_back({{"ranks", ranks},
                    {"file", c.kept},
                    {"source", c.how},
                    {"context", model::Profile::load(c.path).document().value("context", json())}});
  }
  // One rank count keeps the former single-object layout.
  doc["profile"] = prof.size() == 1 ? prof[0] : prof;
  doc["errors_are"] = "(predicted - measured) / measured; null where nothing was measured";
  doc["points"] = out_points;
  doc["bucket_choice"] = choice;
  sim::check_finite(doc);
  for (const auto& [ranks, c] : profiles) {
    if (c.kept == c.path) continue;
    std::ifstream f(c.path);
    std::stringstream ss;
    ss << f.rdbuf();
    sim::write_file_atomic(c.kept, ss.str());
  }
  sim::write_file_atomic(out, doc.dump(2) + "\n");
  if (!o.markdown.empty()) sim::write_file_atomic(o.markdown, markdown(doc));
  std::cout << table;
  for (const auto& [ranks, c] : profiles) {
    std::cout << "profile (" << ranks << " ranks): " << c.kept << " (" << c.how.get<std::string>()
              << ")\n";
  }
  std::cout << "wrote " << out << (o.markdown.empty() ? "" : " and " + o.markdown) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "ddpsim validate: predict (analytic + event, on a calibration profile), run "
      "ddpsim-exec, compare"};
  Options o;
  app.add_option("scenario", o.scenario, "scenario JSON (an MLP; sweeps give one row set each)")
      ->required();
  app.add_option("--nproc", o.nproc, "ranks for every point (default: each point's cluster.gpus)")
      ->check(CLI::Range(1, 64));
  app.add_option("--profile", o.profiles,
                 "calibration profile(s); repeat for several rank counts (default: "
                 "results/profile-<host>.json or a fresh --quick calibration per rank count)");
  app.add_flag("--calibrate", o.calibrate, "always calibrate (ddpsim-calibrate --quick)");
  app.add_option("--steps", o.steps, "measured steps per run (default: simulation.steps)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--repeat", o.repeat,
                 "runs per point, round-robin over the points; medians pool every run's steps "
                 "(default 1)")
      ->check(CLI::Range(1, 1000));
  app.add_flag("--efficiency", o.efficiency,
               "also run every point as N independent processes (ddpsim-exec --independent), "
               "interleaved, and report the DDP overhead per step and per bucket");
  app.add_option("--netns-launch", o.netns_launch,
                 "run multi-rank children under this calibrate/netns/netns-launch.sh (the lab "
                 "must be up: scripts/netns-lab.sh up N RATE)");
  app.add_option("--out", o.out, "validation JSON (default results/validation-<host>-<date>.json)");
  app.add_option("--markdown", o.markdown, "also write the tables as markdown to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "ddpsim-validate: %s\n", e.what());
    return 2;
  }
  try {
    return run(o);
  } catch (const InputError& e) {
    std::cerr << "ddpsim-validate: " << e.what() << "\n";
    return 2;
  } catch (const ChildError& e) {
    std::cerr << "ddpsim-validate: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "ddpsim-validate: " << e.what() << "\n";
    return 1;
  }
}
