// profiles.hpp: the calibration profile ddpsim-validate predicts each rank count with. Per rank
// count of the sweep's points: a --profile measured on that many ranks (else the first given;
// a warning line when it was measured on another machine), results/profile-<host>.json when it
// was measured on that many ranks and on this machine (its fingerprint matches:
// model/profile/machine_match.hpp; otherwise it is never used and says so), else a fresh
// `ddpsim-calibrate --backend cpu --quick --iters 15` of the scenario at that rank count, whose
// collective sweep reaches the largest model's gradient bytes; a calibrated profile is kept
// beside the output (OUT-profile.json, or OUT-profile-<N>ranks.json for several rank counts).
//
//   std::map<int, ProfileChoice> p = choose_profiles(options, base, points, out, tmp.path);
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/scenario/scenario.hpp"
#include "simulator/cli/validate/options.hpp"

namespace ddpsim::validate {

struct ProfileChoice {
  std::string path;    ///< the profile the prediction uses
  std::string kept;    ///< where it is kept (the given file, or beside the output)
  nlohmann::json how;  ///< how it was chosen ("given (--profile)", "calibrated (...)", ...)
};

/// One profile per rank count of `points` (o.nproc, else each point's cluster.gpus); children's
/// logs and fresh profiles go to `tmp`.
std::map<int, ProfileChoice> choose_profiles(const Options& o, const model::Scenario& base,
                                             const std::vector<model::Scenario>& points,
                                             const std::string& out,
                                             const std::filesystem::path& tmp);

/// How the profile at `profile_path` stands against this machine (model/profile/machine_match.hpp):
/// {"same_machine", "mismatches": [...], "warnings": [...]}, each difference described.
nlohmann::json machine_json(const std::string& profile_path);

/// The scenario `doc` with a relative hardware.profile, model.hf_config and model.file made
/// absolute (points are written to a temporary folder; the loader resolves them relative to the
/// scenario file).
void absolutize_paths(nlohmann::json& doc, const std::string& scenario_file);

}  // namespace ddpsim::validate
