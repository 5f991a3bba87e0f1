#include "simulator/cli/validate/profiles.hpp"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <set>

#include "model/atomic_file.hpp"
#include "model/profile/machine_match.hpp"
#include "model/profile/profile.hpp"
#include "model/run_context.hpp"
#include "simulator/cli/validate/children.hpp"

namespace ddpsim::validate {

namespace fs = std::filesystem;
using nlohmann::json;

void absolutize_paths(json& doc, const std::string& scenario_file) {
  const auto fix = [&](json& section, const char* key) {
    if (section.contains(key) && section[key].is_string() &&
        fs::path(section[key].get<std::string>()).is_relative()) {
      section[key] =
          fs::absolute(fs::path(scenario_file).parent_path() / section[key].get<std::string>())
              .lexically_normal()
              .string();
    }
  };
  fix(doc["hardware"], "profile");
  fix(doc["model"], "hf_config");
  fix(doc["model"], "file");
}

json machine_json(const std::string& profile_path) {
  const model::Profile p = model::Profile::load(profile_path);
  const model::MachineMatch r =
      model::compare_machines(model::machine_from_json(p.document()), model::probe_machine());
  json mism = json::array(), warn = json::array();
  for (const model::MachineDifference& d : r.mismatches) mism.push_back(model::describe(d));
  for (const model::MachineDifference& d : r.warnings) warn.push_back(model::describe(d));
  return {{"same_machine", r.same_machine()}, {"mismatches", mism}, {"warnings", warn}};
}

namespace {

// The profile to predict `ranks`-rank points with: a given one measured on that many ranks
// (else the first given), the host's own when it has the right rank count, else a fresh quick
// calibration of the scenario at that rank count (into `tmp`).
std::string choose_profile(const Options& o, const model::Scenario& base, int ranks,
                           std::int64_t max_bytes, const fs::path& tmp, json& how) {
  std::string how_prefix;
  if (!o.profiles.empty()) {
    // Given explicitly: used, with a warning line per difference from this machine.
    std::string chosen;
    for (const std::string& p : o.profiles) {
      if (model::Profile::load(p).ranks() == ranks) {
        how = "given (--profile)";
        chosen = p;
        break;
      }
    }
    if (chosen.empty()) {
      chosen = o.profiles.front();
      how = "given (--profile; measured on " +
            std::to_string(model::Profile::load(chosen).ranks()) + " ranks, used for " +
            std::to_string(ranks) + ")";
    }
    const json m = machine_json(chosen);
    for (const json& d : m.at("mismatches")) {
      std::cerr << "ddpsim-validate: warning: " << chosen
                << ": measured on another machine, used as given: " << d.get<std::string>() << "\n";
    }
    return fs::absolute(chosen).string();
  }
  const fs::path own = fs::path("results") / ("profile-" + model::host_name() + ".json");
  if (!o.calibrate && fs::exists(own)) {
    const model::Profile p = model::Profile::load(own.string());
    const json m = machine_json(own.string());
    if (!m.at("same_machine").get<bool>()) {
      // Another machine's profile under this host's name (every VM here is "vm"): never used
      // silently; a fresh calibration replaces it.
      const std::string why = m.at("mismatches").at(0).get<std::string>();
      std::cerr << "ddpsim-validate: " << own.string() << " was measured on another machine ("
                << why << "): calibrating this one instead\n";
      how_prefix = own.string() + " is another machine's (" + why + "); ";
    } else if (p.ranks() == ranks) {
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
  absolutize_paths(doc, base.file);
  const fs::path scen = tmp / ("calibrate-" + std::to_string(ranks) + ".json");
  model::write_file_atomic(scen.string(), doc.dump(2) + "\n");  // checked
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
  how = std::string("calibrated (") + how_prefix +
        "ddpsim-calibrate --backend cpu --quick --iters 15" +
        (launcher(o, ranks).empty() ? ")" : ", netns lab)");
  if (o.runner == "torch" && !o.no_torch_calibration && ranks >= 2) {
    // The user runs PyTorch: its layers, optimizer and gloo all-reduce timed through it
    // (calibrate/torch_calibration.hpp) complete the profile.
    std::cerr << "calibrating through PyTorch (ddpsim-calibrate --backend torch, " << ranks
              << " ranks)...\n";
    run_child({calibrate.string(), "--backend", "torch", "--nproc", std::to_string(ranks),
               "--scenario", scen.string(), "--out", out.string()},
              tmp / ("calibrate-torch-" + std::to_string(ranks) + ".log"));
    how = how.get<std::string>() + " + ddpsim-calibrate --backend torch";
  }
  return out.string();
}

}  // namespace

std::map<int, ProfileChoice> choose_profiles(const Options& o, const model::Scenario& base,
                                             const std::vector<model::Scenario>& points,
                                             const std::string& out, const fs::path& tmp) {
  // The collective sweep of a calibration must reach the largest bucket (--quick alone stops at
  // 4 MiB and the fit would extrapolate 16-64 MiB buckets from small sizes): up to the power of
  // two at or above the largest model's gradient bytes, at least 4 MiB.
  std::set<int> rank_counts;
  std::map<int, std::int64_t> max_bytes;
  for (const model::Scenario& p : points) {
    const int r = o.nproc > 0 ? o.nproc : p.cluster.gpus;
    rank_counts.insert(r);
    std::int64_t need = std::int64_t{4} << 20;
    while (need < 4 * p.workload->param_count()) need *= 2;
    max_bytes[r] = std::max(max_bytes[r], need);
  }
  std::map<int, ProfileChoice> profiles;
  for (int ranks : rank_counts) {
    ProfileChoice c;
    c.path = choose_profile(o, base, ranks, max_bytes[ranks], tmp, c.how);
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
  return profiles;
}

}  // namespace ddpsim::validate
