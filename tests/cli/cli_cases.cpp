// ddpsim_cli_cases: runs the command-line cases of a catalogue (tests/cli/*.json) against the
// ddpsim binary and checks exit code, stdout and stderr.
//
//   ddpsim_cli_cases --ddpsim BIN --catalogue FILE --data-dir DIR --scenario-dir DIR
//                    --work-dir DIR [--case NAME] [--list]
//
// A case (see tests/cli/README.md for every key):
//   {"name": "gpus-zero", "args": ["predict", "@FILE"], "scenario": {...}, "exit_code": 2,
//    "stderr_contains": ["@FILE", "/cluster/gpus"]}
// Tokens in args, expected substrings and scenario strings: @FILE (the scenario the case
// writes), @DATA (tests/data), @SCENARIOS (scenarios/), @WORK (the case's own empty folder,
// also its working directory).
//
// Every failing case (exit code != 0) must print exactly one line on stderr and nothing on
// stdout: that is the CLI's contract for bad input. A case with "known_bug" is not run as a
// test: it is run and reported, and counts as skipped (exit 77 with --case) until the mark is
// removed, so the catalogue documents open bugs without turning the suite red.
//
// Exit: 0 all passed, 1 a case failed, 2 bad usage or catalogue, 77 the one --case skipped.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/subprocess.hpp"

namespace {

namespace fs = std::filesystem;
using ddpsim::testing::Outcome;
using ddpsim::testing::read_text;
using ddpsim::testing::replace_all;
using ddpsim::testing::run;
using nlohmann::json;

constexpr int kSkipped = 77;  // ctest SKIP_RETURN_CODE
constexpr double kDefaultTimeoutS = 60;

struct Paths {
  std::string ddpsim, catalogue, data_dir, scenario_dir, work_dir;
};

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_./=:@,+") == std::string::npos) {
    return s;
  }
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string excerpt(const std::string& s) {
  if (s.size() <= 2000) return s;
  return s.substr(0, 2000) + "\n... (" + std::to_string(s.size()) + " bytes in all)";
}

class Case {
 public:
  Case(const json& c, const Paths& paths) : c_(c), paths_(paths) {
    static const std::set<std::string> known = {"name",
                                                "description",
                                                "args",
                                                "scenario",
                                                "scenario_text",
                                                "exit_code",
                                                "stderr_contains",
                                                "stdout_contains",
                                                "stdout_regex",
                                                "stdout_is_json",
                                                "files_json",
                                                "files_absent",
                                                "no_leftover_tmp",
                                                "timeout_s",
                                                "known_bug",
                                                "stdin_scenario",
                                                "answer_with_exit_code",
                                                "env"};
    if (!c.is_object() || !c.contains("name") || !c.at("name").is_string()) {
      throw std::runtime_error("every case must be an object with a string \"name\"");
    }
    name_ = c.at("name").get<std::string>();
    for (const auto& [key, value] : c.items()) {
      if (!known.count(key)) throw std::runtime_error(name_ + ": unknown key \"" + key + "\"");
    }
    if (!c.contains("args") || !c.at("args").is_array()) {
      throw std::runtime_error(name_ + ": \"args\" must be an array of strings");
    }
    if (!c.contains("exit_code") || !c.at("exit_code").is_number_integer()) {
      throw std::runtime_error(name_ + ": \"exit_code\" must be an integer");
    }
    if (c.contains("scenario") && c.contains("scenario_text")) {
      throw std::runtime_error(name_ + ": give \"scenario\" or \"scenario_text\", not both");
    }
    work_ = fs::path(paths_.work_dir) / name_;
    file_ = work_ / (name_ + ".json");
  }

  const std::string& name() const { return name_; }
  std::optional<std::string> known_bug() const {
    if (!c_.contains("known_bug")) return std::nullopt;
    return c_.at("known_bug").get<std::string>();
  }

  // Returns the list of problems (empty: passed).
  std::vector<std::string> run_and_check(std::string& command_line) const {
    fs::remove_all(work_);
    fs::create_directories(work_);
    if (c_.contains("scenario")) {
      std::ofstream(file_, std::ios::binary) << expand_strings(c_.at("scenario")).dump(2) << "\n";
    } else if (c_.contains("scenario_text")) {
      std::ofstream(file_, std::ios::binary) << expand(c_.at("scenario_text").get<std::string>());
    }
    std::vector<std::string> argv = {paths_.ddpsim};
    for (const auto& a : c_.at("args")) argv.push_back(expand(a.get<std::string>()));
    command_line.clear();
    for (const auto& a : argv) command_line += (command_line.empty() ? "" : " ") + shell_quote(a);

    const double timeout = c_.value("timeout_s", kDefaultTimeoutS);
    // "stdin_scenario": the scenario file is also the command's standard input ("-" reads it).
    // "env": variables added to the command's environment ({"NAME": "value"}), as a launcher
    // (srun, torchrun) sets them.
    std::vector<std::string> env;
    if (c_.contains("env")) {
      for (const auto& [k, v] : c_.at("env").items())
        env.push_back(k + "=" + expand(v.get<std::string>()));
    }
    const Outcome o = run(argv, work_, timeout, env, 0,
                          c_.value("stdin_scenario", false) ? file_ : fs::path("/dev/null"));
    std::vector<std::string> problems;
    const int want = c_.at("exit_code").get<int>();
    if (o.timed_out) {
      problems.push_back("hung: killed after " + std::to_string(timeout) + " s");
    } else if (o.signal != 0) {
      problems.push_back("crashed with signal " + std::to_string(o.signal) + " (" +
                         strsignal(o.signal) + ")");
    } else if (o.exit_code != want) {
      problems.push_back("exit code " + std::to_string(o.exit_code) + ", expected " +
                         std::to_string(want));
    }
    // "answer_with_exit_code": a command that prints its answer and still exits non-zero (a plan
    // with nothing feasible exits 1 after its table); otherwise a failure prints one line only.
    if (want != 0 && !c_.value("answer_with_exit_code", false)) {
      // The bad-input contract: one line on stderr, nothing on stdout.
      const auto newlines = std::count(o.err.begin(), o.err.end(), '\n');
      if (o.err.empty() || o.err.back() != '\n' || newlines != 1) {
        problems.push_back("stderr is not exactly one line (" + std::to_string(newlines) +
                           " newline(s))");
      }
      if (!o.out.empty()) {
        problems.push_back("stdout is not empty on failure (" + std::to_string(o.out.size()) +
                           " bytes)");
      }
    } else if (want == 0 && !o.err.empty()) {
      problems.push_back("stderr is not empty on success");
    }
    for (const auto& s : strings("stderr_contains")) {
      if (o.err.find(s) == std::string::npos) problems.push_back("stderr lacks \"" + s + "\"");
    }
    for (const auto& s : strings("stdout_contains")) {
      if (o.out.find(s) == std::string::npos) problems.push_back("stdout lacks \"" + s + "\"");
    }
    if (c_.contains("stdout_regex")) {
      const std::string re = c_.at("stdout_regex").get<std::string>();
      if (!std::regex_search(o.out, std::regex(re))) {
        problems.push_back("stdout does not match /" + re + "/");
      }
    }
    if (c_.value("stdout_is_json", false) && !json::accept(o.out)) {
      problems.push_back("stdout is not valid JSON");
    }
    for (const auto& f : strings("files_json")) {
      if (!fs::is_regular_file(f)) {
        problems.push_back(f + " was not written");
      } else if (!json::accept(read_text(f))) {
        problems.push_back(f + " is not valid JSON");
      }
    }
    for (const auto& f : strings("files_absent")) {
      if (fs::exists(f)) problems.push_back(f + " was left behind");
    }
    if (c_.value("no_leftover_tmp", false)) {
      for (const auto& e : fs::recursive_directory_iterator(work_)) {
        if (e.path().filename().string().find(".tmp") != std::string::npos) {
          problems.push_back("temporary file left behind: " + e.path().string());
        }
      }
    }
    if (!problems.empty()) {
      problems.push_back("stdout:\n" + excerpt(o.out));
      problems.push_back("stderr:\n" + excerpt(o.err));
    }
    return problems;
  }

 private:
  std::string expand(std::string s) const {
    replace_all(s, "@FILE", file_.string());
    replace_all(s, "@DATA", paths_.data_dir);
    replace_all(s, "@SCENARIOS", paths_.scenario_dir);
    replace_all(s, "@WORK", work_.string());
    return s;
  }

  json expand_strings(const json& j) const {
    if (j.is_string()) return expand(j.get<std::string>());
    if (j.is_object()) {
      json r = json::object();
      for (const auto& [k, v] : j.items()) r[k] = expand_strings(v);
      return r;
    }
    if (j.is_array()) {
      json r = json::array();
      for (const auto& v : j) r.push_back(expand_strings(v));
      return r;
    }
    return j;
  }

  std::vector<std::string> strings(const char* key) const {
    std::vector<std::string> r;
    if (!c_.contains(key)) return r;
    for (const auto& s : c_.at(key)) r.push_back(expand(s.get<std::string>()));
    return r;
  }

  json c_;
  const Paths& paths_;
  std::string name_;
  fs::path work_;
  fs::path file_;
};

int usage() {
  std::cerr << "usage: ddpsim_cli_cases --ddpsim BIN --catalogue FILE --data-dir DIR "
               "--scenario-dir DIR --work-dir DIR [--case NAME] [--list]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Paths paths;
  std::string only;
  bool list = false;
  const std::map<std::string, std::string*> options = {
      {"--ddpsim", &paths.ddpsim},     {"--catalogue", &paths.catalogue},
      {"--data-dir", &paths.data_dir}, {"--scenario-dir", &paths.scenario_dir},
      {"--work-dir", &paths.work_dir}, {"--case", &only}};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--list") {
      list = true;
    } else if (options.count(a) && i + 1 < argc) {
      *options.at(a) = argv[++i];
    } else {
      return usage();
    }
  }
  if (paths.catalogue.empty() || (!list && (paths.ddpsim.empty() || paths.work_dir.empty()))) {
    return usage();
  }

  // The cases run in their own folders, so every path given here must survive a chdir.
  for (std::string* p : {&paths.ddpsim, &paths.data_dir, &paths.scenario_dir, &paths.work_dir}) {
    if (!p->empty()) *p = fs::absolute(*p).lexically_normal().string();
  }

  std::vector<Case> cases;
  try {
    std::ifstream in(paths.catalogue);
    if (!in) throw std::runtime_error("cannot open");
    const json doc = json::parse(in);
    if (!doc.is_array()) throw std::runtime_error("expected an array of cases");
    std::set<std::string> names;
    for (const auto& c : doc) {
      cases.emplace_back(c, paths);
      if (!names.insert(cases.back().name()).second) {
        throw std::runtime_error("two cases are named \"" + cases.back().name() + "\"");
      }
    }
  } catch (const std::exception& e) {
    std::cerr << paths.catalogue << ": " << e.what() << "\n";
    return 2;
  }

  if (list) {
    for (const auto& c : cases) std::cout << c.name() << "\n";
    return 0;
  }

  int passed = 0, failed = 0, skipped = 0, ran = 0;
  for (const auto& c : cases) {
    if (!only.empty() && c.name() != only) continue;
    ++ran;
    std::string command;
    std::vector<std::string> problems;
    try {
      problems = c.run_and_check(command);
    } catch (const std::exception& e) {
      problems = {std::string("runner error: ") + e.what()};
    }
    if (const auto bug = c.known_bug()) {
      ++skipped;
      std::cout << "SKIP " << c.name() << " (known bug: " << *bug << ")\n  $ " << command << "\n"
                << (problems.empty() ? "  it passes now: remove the \"known_bug\" mark\n"
                                     : "  still failing: " + problems.front() + "\n");
      continue;
    }
    if (problems.empty()) {
      ++passed;
      std::cout << "ok   " << c.name() << "\n";
    } else {
      ++failed;
      std::cout << "FAIL " << c.name() << "\n  $ " << command << "\n";
      for (const auto& p : problems) std::cout << "  " << p << "\n";
    }
  }
  if (ran == 0) {
    std::cerr << "no case named \"" << only << "\" in " << paths.catalogue << "\n";
    return 2;
  }
  std::cout << passed << " passed, " << failed << " failed, " << skipped
            << " skipped (known bugs)\n";
  if (failed > 0) return 1;
  if (!only.empty() && skipped > 0) return kSkipped;
  return 0;
}
