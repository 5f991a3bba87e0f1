// ddpsim-validate (`ddpsim validate`): predict a scenario on this machine's calibration profile
// with both engines, run it for real with ddpsim-exec, and tabulate predicted vs measured.
//
//   ddpsim-validate SCENARIO.json [--nproc N] [--profile P | --calibrate] [--steps S] [--out F]
//
// Per sweep point (bucket sizes, widths, batches, N...): step time, forward, backward, exposed
// communication, optimizer, summed communication and every bucket's end time, each as analytic
// and event prediction, measurement (ddpsim-exec's median step) and their relative errors
// (predicted - measured) / measured. The profile: --profile P, else results/profile-<host>.json
// when it was measured on the scenario's rank count, else `ddpsim-calibrate --backend cpu
// --quick` on the scenario (also with --calibrate); a calibrated profile is kept beside the
// output. The children (ddpsim-calibrate, ddpsim-exec) are the binaries beside this one; a
// missing one or a failing run is named on one line, exits 1 and writes no file. The output is
// written atomically (default results/validation-<host>-<YYYYMMDD>.json).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/error.hpp"
#include "model/profile.hpp"
#include "model/scenario.hpp"
#include "simulator/analytic.hpp"
#include "simulator/event_dp.hpp"
#include "simulator/report.hpp"

namespace {

using namespace ddpsim;
using nlohmann::json;
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
    execv(args[0], args.data());
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

json relative_error(double predicted, double measured) {
  // Relative to the measurement; undefined (null) when nothing was measured (e.g. no exposed
  // communication), where abs_error_s still says how far off the prediction is.
  if (std::abs(measured) < 1e-9) return nullptr;
  return (predicted - measured) / measured;
}

json row(const std::string& quantity, double analytic, double event, double measured) {
  return {{"quantity", quantity},
          {"analytic", analytic},
          {"event", event},
          {"measured", measured},
          {"abs_error_analytic_s", analytic - measured},
          {"abs_error_event_s", event - measured},
          {"error_analytic", relative_error(analytic, measured)},
          {"error_event", relative_error(event, measured)}};
}

std::string pct(const json& e) {
  if (e.is_null()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * e.get<double>());
  return buf;
}

struct Options {
  std::string scenario;
  int nproc = 0;
  std::string profile;
  bool calibrate = false;
  int steps = 0;
  std::string out;
};

// The profile to predict with: given, the host's own when it has the right rank count, else a
// fresh quick calibration (into `tmp`).
std::string choose_profile(const Options& o, int ranks, const fs::path& tmp, json& how) {
  if (!o.profile.empty()) {
    how = "given (--profile)";
    return fs::absolute(o.profile).string();
  }
  const fs::path own = fs::path("results") / ("profile-" + host_name() + ".json");
  if (!o.calibrate && fs::exists(own)) {
    const model::Profile p = model::Profile::load(own.string());
    if (p.ranks() == ranks) {
      how = "results/profile-<host>.json";
      return fs::absolute(own).string();
    }
  }
  const fs::path calibrate = sibling("ddpsim-calibrate");
  const fs::path out = tmp / "profile.json";
  std::cerr << "calibrating (ddpsim-calibrate --quick, " << ranks << " ranks)...\n";
  run_child({calibrate.string(), "--backend", "cpu", "--nproc", std::to_string(ranks), "--scenario",
             o.scenario, "--quick", "--out", out.string()},
            tmp / "calibrate.log");
  how = "calibrated (ddpsim-calibrate --backend cpu --quick)";
  return out.string();
}

int run(const Options& o) {
  const model::Scenario base = model::load_scenario(o.scenario);
  std::vector<model::Scenario> points = model::expand_sweep(base);
  const int steps = o.steps > 0 ? o.steps : base.simulation.steps;
  int ranks = o.nproc > 0 ? o.nproc : base.cluster.gpus;
  for (const model::Scenario& p : points) {
    if (o.nproc == 0 && p.cluster.gpus != ranks) {
      throw InputError(o.scenario, "/sweep/cluster.gpus",
                       "one rank count per validation (one profile); run one --nproc at a time",
                       "several");
    }
  }
  const fs::path exec = sibling("ddpsim-exec");
  TempDir tmp;
  json profile_how;
  const std::string profile = choose_profile(o, ranks, tmp.path, profile_how);

  const std::string out =
      !o.out.empty() ? o.out : "results/validation-" + host_name() + "-" + utc("%Y%m%d") + ".json";
  std::string kept_profile = profile;
  if (profile_how.get<std::string>().rfind("calibrated", 0) == 0) {
    // Keep the profile the prediction used beside the output.
    fs::path keep = fs::path(out);
    keep.replace_extension();
    kept_profile = keep.string() + "-profile.json";
  }
  json out_points = json::array();
  std::string table;
  for (std::size_t i = 0; i < points.size(); ++i) {
    // The point as a plain scenario: the sweep applied, the rank count, and (for the
    // prediction) the profile as its hardware.
    json doc = points[i].doc;
    doc.erase("sweep");
    doc["cluster"]["gpus"] = ranks;
    // The point is written to a temporary folder: a relative hardware.profile would resolve
    // there, so make it absolute (relative to the scenario, as the loader reads it).
    if (json& hw = doc["hardware"]; hw.contains("profile") && hw["profile"].is_string() &&
                                    fs::path(hw["profile"].get<std::string>()).is_relative()) {
      hw["profile"] =
          fs::absolute(fs::path(base.file).parent_path() / hw["profile"].get<std::string>())
              .lexically_normal()
              .string();
    }
    json pdoc = doc;
    pdoc["hardware"] = {{"profile", profile}};
    const model::Scenario ps = model::parse_scenario(pdoc, base.file);
    sim::Predictor predictor(ps);
    const sim::Prediction analytic = predictor.predict(ps.cluster, ps.training, ps.parallelism);
    sim::Prediction event = analytic;
    const sim::StepPlan plan = predictor.plan(ps.cluster, ps.training, ps.parallelism);
    sim::EventOptions eo;
    eo.steps = std::max(steps, 2);
    eo.seed = ps.simulation.seed;
    sim::apply_event_result(event, sim::simulate_event(plan, eo), eo);

    // The measurement: ddpsim-exec on the same point.
    const fs::path point_file = tmp.path / ("point-" + std::to_string(i) + ".json");
    const fs::path exec_out = tmp.path / ("exec-" + std::to_string(i) + ".json");
    {
      std::ofstream f(point_file);
      f << doc.dump(2) << "\n";
    }
    std::cerr << "point " << i + 1 << "/" << points.size() << " " << points[i].point.dump()
              << ": running ddpsim-exec (" << ranks << " ranks, " << steps << " steps)...\n";
    run_child({exec.string(), point_file.string(), "--nproc", std::to_string(ranks), "--steps",
               std::to_string(steps), "--out", exec_out.string()},
              tmp.path / ("exec-" + std::to_string(i) + ".log"));
    const json measured_doc = model::read_json_file(exec_out.string());
    const json& m = measured_doc.at("results").at(0);

    const json a = sim::prediction_json(ps, analytic);
    const json e = sim::prediction_json(ps, event);
    json rows = json::array();
    for (const char* q : kQuantities) {
      rows.push_back(row(q, a.at(q).get<double>(), e.at(q).get<double>(), m.at(q).get<double>()));
    }
    const json& mb = m.at("buckets");
    const std::size_t nb = std::min({mb.size(), analytic.buckets.size(), event.buckets.size()});
    for (std::size_t b = 0; b < nb; ++b) {
      rows.push_back(row("bucket[" + std::to_string(b) + "].end_s", analytic.buckets[b].end_s,
                         event.buckets[b].end_s, mb[b].at("end_s").get<double>()));
    }
    json pj = {{"point", points[i].point},
               {"gpus", ranks},
               {"bucket_count", {{"predicted", analytic.buckets.size()}, {"measured", mb.size()}}},
               {"rows", rows},
               {"predicted_step_time_interval_s", a.value("step_time_interval_s", json(nullptr))},
               {"measured_sources", a.value("measured", json(nullptr))},
               {"warnings", analytic.warnings}};
    if (pj["measured_sources"].is_object()) pj["measured_sources"]["profile"] = kept_profile;
    out_points.push_back(pj);

    table += "point " +
             (points[i].point.empty() ? std::string("(single)") : points[i].point.dump()) + "\n";
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
  }

  json doc;
  doc["context"] = sim::context_json("analytic+event vs ddpsim-exec");
  doc["context"]["device"] = "this machine's CPUs (ddpsim-exec, Gloo, OpenBLAS)";
  doc["context"]["load_average"] = load_average();
  doc["context"]["nproc"] = ranks;
  doc["context"]["steps"] = steps;
  doc["scenario"] = sim::scenario_json(base);
  doc["profile"] = {{"file", kept_profile},
                    {"source", profile_how},
                    {"context", model::Profile::load(profile).document().value("context", json())}};
  doc["errors_are"] = "(predicted - measured) / measured; null where nothing was measured";
  doc["points"] = out_points;
  sim::check_finite(doc);
  if (kept_profile != profile) {
    std::ifstream f(profile);
    std::stringstream ss;
    ss << f.rdbuf();
    sim::write_file_atomic(kept_profile, ss.str());
  }
  sim::write_file_atomic(out, doc.dump(2) + "\n");
  std::cout << table << "profile: " << kept_profile << " (" << profile_how.get<std::string>()
            << ")\nwrote " << out << "\n";
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
  app.add_option("--nproc", o.nproc, "ranks (default: cluster.gpus)")->check(CLI::Range(1, 64));
  app.add_option("--profile", o.profile,
                 "calibration profile (default: results/profile-<host>.json "
                 "or a fresh --quick calibration)");
  app.add_flag("--calibrate", o.calibrate, "always calibrate (ddpsim-calibrate --quick)");
  app.add_option("--steps", o.steps, "measured steps per point (default: simulation.steps)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--out", o.out, "validation JSON (default results/validation-<host>-<date>.json)");
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
