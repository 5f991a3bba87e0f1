// ddpsim_reliability_cases: the determinism and numeric-safety catalogues of issue 8
// (tests/reliability/determinism.json, tests/reliability/extremes.json), run against the built
// ddpsim binary, one case per invocation (one ctest each).
//
//   ddpsim_reliability_cases --ddpsim BIN --catalogue FILE --work-dir DIR --data-dir DIR
//                            --scenario-dir DIR [--memory-limit-mb N] [--case NAME] [--list]
//
// A case is {"name", "description", "check": "determinism" | "extreme", "args": [...],
// "scenario": {...} (written to @FILE; "layers_repeat"/"widths_repeat" generate huge models), ...}.
// Tokens in args and scenario strings: @FILE,
// @WORK (the case's folder), @OUT (a per-run output file), @DATA, @SCENARIOS.
//
// "determinism": the command runs twice, as two processes, with different environments (TZ,
// LC_ALL, working directory, a padded environment so that the heap and stack start elsewhere).
// stdout and the @OUT file (when args name it) must be byte-identical once the top-level
// "context" block (date, host, versions) is cut out of each document. With "differs" (a JSON
// merge patch of the scenario, e.g. another seed), a third run on the patched scenario must give
// a different document: the seed or knob does reach the result.
//
// "extreme": the command runs once under a memory limit (RLIMIT_AS, --memory-limit-mb) and a wall
// limit ("timeout_s", default 15 s). Expected either "exit_code": 0 with no NaN or inf token in
// stdout (JSON, CSV or table; 1 for a plan with nothing feasible, which still prints its
// answer), or "exit_code": 2 with exactly one stderr line containing every
// "stderr_contains" string (the key). Wall time and peak RSS are printed for the record.
//
// Exit: 0 passed, 1 failed, 2 bad usage or catalogue.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/subprocess.hpp"

namespace {

namespace fs = std::filesystem;
using ddpsim::testing::Outcome;
using ddpsim::testing::read_text;
using ddpsim::testing::replace_all;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Paths {
  std::string ddpsim, catalogue, data_dir, scenario_dir, work_dir;
  long memory_limit_mb = 4096;
  double timeout_scale = 1;  ///< sanitizer builds run 2-5x slower: their wall limits are scaled
};

// The document without its top-level "context" member (and the comma that joined it). The text
// around it is kept byte for byte. Non-JSON text (a table, CSV) comes back unchanged.
std::string without_context(const std::string& text) {
  // Walk the top-level object: depth counts braces/brackets outside strings.
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    if (c != '"') continue;
    if (depth == 1 && i + 9 < text.size() && text.compare(i, 9, "\"context\"") == 0 &&
        text[i + 9] == ':') {
      // The key starts here: find the end of its value (an object) and of the comma after it.
      std::size_t j = text.find('{', i + 10);
      if (j == std::string::npos) return text;
      int d = 0;
      bool s = false;
      for (; j < text.size(); ++j) {
        const char x = text[j];
        if (s) {
          if (x == '\\') {
            ++j;
          } else if (x == '"') {
            s = false;
          }
          continue;
        }
        if (x == '"') s = true;
        if (x == '{') ++d;
        if (x == '}' && --d == 0) break;
      }
      std::size_t end = j + 1;
      std::size_t k = end;
      while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
      if (k < text.size() && text[k] == ',') end = k + 1;
      // Also the whitespace before the next key, so that "{ ctx, a }" becomes "{ a }".
      std::size_t start = i;
      while (start > 0 && std::isspace(static_cast<unsigned char>(text[start - 1]))) --start;
      return text.substr(0, start) + text.substr(end);
    }
    in_string = true;
  }
  return text;
}

// The first place two texts differ, with a little context, for the failure message.
std::string first_difference(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const std::size_t from = i > 80 ? i - 80 : 0;
  return "at byte " + std::to_string(i) + ":\n  run 1: ..." + a.substr(from, 160) +
         "\n  run 2: ..." + b.substr(from, 160);
}

std::vector<std::string> nonfinite_tokens(const std::string& text) {
  static const std::regex token(R"((^|[^A-Za-z_])([-+]?(nan|inf|infinity))($|[^A-Za-z_]))",
                                std::regex::icase);
  std::vector<std::string> found;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), token);
       it != std::sregex_iterator() && found.size() < 5; ++it) {
    found.push_back((*it)[2].str());
  }
  return found;
}

class Case {
 public:
  Case(const json& c, const Paths& paths) : c_(c), paths_(paths) {
    static const std::set<std::string> known = {
        "name",      "description",     "check",         "args",
        "differs",   "scenario",        "exit_code",     "stderr_contains",
        "timeout_s", "memory_limit_mb", "layers_repeat", "widths_repeat"};
    if (!c.is_object() || !c.contains("name") || !c.at("name").is_string()) {
      throw std::runtime_error("every case must be an object with a string \"name\"");
    }
    name_ = c.at("name").get<std::string>();
    for (const auto& [key, value] : c.items()) {
      if (!known.count(key)) throw std::runtime_error(name_ + ": unknown key \"" + key + "\"");
    }
    check_ = c.value("check", std::string());
    if (check_ != "determinism" && check_ != "extreme") {
      throw std::runtime_error(name_ + ": \"check\" must be \"determinism\" or \"extreme\"");
    }
    if (!c.contains("args") || !c.at("args").is_array()) {
      throw std::runtime_error(name_ + ": \"args\" must be an array of strings");
    }
    if (check_ == "extreme" && (!c.contains("exit_code") || !c.at("exit_code").is_number())) {
      throw std::runtime_error(name_ + ": an extreme case needs \"exit_code\" (0 or 2)");
    }
    work_ = fs::path(paths_.work_dir) / name_;
    file_ = work_ / (name_ + ".json");
  }

  const std::string& name() const { return name_; }

  std::vector<std::string> run_and_check() const {
    fs::remove_all(work_);
    fs::create_directories(work_);
    if (c_.contains("scenario")) {
      json doc = expand_strings(c_.at("scenario"));
      // Huge models are generated, not stored: "layers_repeat": {"count": N, ...one layer's
      // keys} fills model.layers with N such layers; "widths_repeat": {"count": N, "width": W}
      // makes model.mlp.widths N copies of W.
      if (c_.contains("layers_repeat")) {
        json layer = c_.at("layers_repeat");
        const int n = layer.at("count").get<int>();
        layer.erase("count");
        json layers = json::array();
        for (int i = 0; i < n; ++i) {
          layer["name"] = "layer" + std::to_string(i);
          layers.push_back(layer);
        }
        doc["model"] = {{"layers", std::move(layers)}};
      }
      if (c_.contains("widths_repeat")) {
        const auto& w = c_.at("widths_repeat");
        doc["model"] = {{"mlp",
                         {{"widths", json(std::vector<int>(w.at("count").get<std::size_t>(),
                                                           w.at("width").get<int>()))}}}};
      }
      std::ofstream(file_, std::ios::binary) << doc.dump() << "\n";
    }
    return check_ == "determinism" ? determinism() : extreme();
  }

 private:
  std::string expand(std::string s, const std::string& out = "",
                     const std::string& file = "") const {
    replace_all(s, "@FILE", file.empty() ? file_.string() : file);
    replace_all(s, "@WORK", work_.string());
    replace_all(s, "@OUT", out);
    replace_all(s, "@DATA", paths_.data_dir);
    replace_all(s, "@SCENARIOS", paths_.scenario_dir);
    return s;
  }
  json expand_strings(const json& j) const {
    if (j.is_string()) return expand(j.get<std::string>());
    json r = j;
    if (j.is_object() || j.is_array()) {
      for (auto& v : r) v = expand_strings(v);
    }
    return r;
  }
  std::vector<std::string> argv(const json& args, const std::string& out,
                                const std::string& file = "") const {
    std::vector<std::string> v = {paths_.ddpsim};
    for (const auto& a : args) v.push_back(expand(a.get<std::string>(), out, file));
    return v;
  }
  static std::string command_line(const std::vector<std::string>& argv) {
    std::string s;
    for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
    return s;
  }
  double timeout_s() const { return c_.value("timeout_s", 15.0) * paths_.timeout_scale; }
  long memory_mb() const {
    return paths_.memory_limit_mb > 0 ? c_.value("memory_limit_mb", paths_.memory_limit_mb) : 0;
  }

  std::vector<std::string> determinism() const {
    std::vector<std::string> problems;
    const bool writes_out = c_.at("args").dump().find("@OUT") != std::string::npos;
    // Two runs that share nothing but the scenario: other folders, time zones, locales, and
    // environments of different sizes (the stack and heap then start at other addresses, on top
    // of ASLR), so pointer-keyed or time-seeded state would show.
    struct Variant {
      std::string dir;
      std::vector<std::string> env;
    };
    const std::vector<Variant> variants = {
        {"run1", {"TZ=UTC", "LC_ALL=C", "DDPSIM_RELIABILITY_PAD=x"}},
        {"run2",
         {"TZ=Pacific/Chatham", "LC_ALL=C.UTF-8",
          "DDPSIM_RELIABILITY_PAD=" + std::string(40000, 'y')}}};
    std::vector<std::string> outs, files;
    for (const Variant& v : variants) {
      const fs::path dir = work_ / v.dir;
      fs::create_directories(dir);
      const std::string out = (dir / "out.json").string();
      const auto a = argv(c_.at("args"), out);
      const Outcome o = ddpsim::testing::run(a, dir, timeout_s(), v.env, memory_mb());
      std::printf("%s: %s (%.2f s, %ld KiB peak RSS)\n", v.dir.c_str(), command_line(a).c_str(),
                  o.wall_s, o.max_rss_kb);
      if (o.timed_out || o.exit_code != 0) {
        problems.push_back(v.dir + " failed (exit " + std::to_string(o.exit_code) + ", signal " +
                           std::to_string(o.signal) + (o.timed_out ? ", timed out" : "") +
                           "): " + o.err.substr(0, 500));
        return problems;
      }
      outs.push_back(without_context(o.out));
      if (writes_out) files.push_back(without_context(read_text(out)));
    }
    if (outs[0].size() < 50) problems.push_back("stdout is (nearly) empty: " + outs[0]);
    if (outs[0] != outs[1])
      problems.push_back("stdout differs " + first_difference(outs[0], outs[1]));
    if (writes_out && files[0] != files[1]) {
      problems.push_back("the --out file differs " + first_difference(files[0], files[1]));
    }
    if (writes_out && files[0].find("\"context\"") != std::string::npos) {
      problems.push_back("the context block was not cut out of the --out file");
    }
    std::printf(
        "identical without the context block: stdout %zu bytes%s\n", outs[0].size(),
        writes_out ? (", --out file " + std::to_string(files[0].size()) + " bytes").c_str() : "");
    if (c_.contains("differs")) {
      // The scenario with the "differs" merge patch applied, e.g. another seed.
      const fs::path dir = work_ / "run3";
      fs::create_directories(dir);
      json patched = expand_strings(c_.at("scenario"));
      patched.merge_patch(c_.at("differs"));
      const fs::path file = dir / file_.filename();
      std::ofstream(file, std::ios::binary) << patched.dump(1) << "\n";
      const auto a = argv(c_.at("args"), (dir / "out.json").string(), file.string());
      const Outcome o = ddpsim::testing::run(a, dir, timeout_s(), variants[0].env, memory_mb());
      std::printf("run3: %s (%.2f s)\n", command_line(a).c_str(), o.wall_s);
      if (o.exit_code != 0) {
        problems.push_back("the \"differs\" run failed: " + o.err.substr(0, 500));
      } else if (without_context(o.out) == outs[0]) {
        problems.push_back("the \"differs\" run gave the same document: the knob has no effect");
      }
    }
    return problems;
  }

  std::vector<std::string> extreme() const {
    std::vector<std::string> problems;
    const auto a = argv(c_.at("args"), (work_ / "out.json").string());
    const Outcome o = ddpsim::testing::run(a, work_, timeout_s(), {}, memory_mb());
    std::printf(
        "%s\nexit %d%s, %.2f s wall, %ld KiB peak RSS (limits: %.0f s, %ld MiB address "
        "space)\n",
        command_line(a).c_str(), o.exit_code,
        o.signal ? (", signal " + std::to_string(o.signal)).c_str() : "", o.wall_s, o.max_rss_kb,
        timeout_s(), memory_mb());
    if (!o.err.empty()) std::printf("stderr: %s", o.err.substr(0, 1000).c_str());
    if (o.timed_out) {
      problems.push_back("not finished after " + std::to_string(timeout_s()) +
                         " s: neither computed in bounded time nor refused");
      return problems;
    }
    const int want = c_.at("exit_code").get<int>();
    if (o.exit_code != want) {
      problems.push_back("exit code " + std::to_string(o.exit_code) + " (signal " +
                         std::to_string(o.signal) + "), expected " + std::to_string(want));
    }
    for (const auto& t : nonfinite_tokens(o.out)) {
      problems.push_back("non-finite number \"" + t + "\" in stdout");
    }
    // 0, or 1 for a plan with nothing feasible: an answer on stdout; 2: a refusal.
    if (want != 2 && o.out.size() < 20) problems.push_back("no output");
    if (want == 2) {
      const auto lines = std::count(o.err.begin(), o.err.end(), '\n');
      if (lines != 1) {
        problems.push_back("a refusal prints exactly one line on stderr, got " +
                           std::to_string(lines));
      }
      if (!o.out.empty()) problems.push_back("a refusal prints nothing on stdout");
    }
    for (const auto& s : c_.value("stderr_contains", json::array())) {
      const std::string want_s = expand(s.get<std::string>());
      if (o.err.find(want_s) == std::string::npos) {
        problems.push_back("stderr lacks \"" + want_s + "\"");
      }
    }
    const fs::path out = work_ / "out.json";
    if (fs::exists(out)) {
      const std::string text = read_text(out);
      if (!json::accept(text)) problems.push_back("the --out file is not valid JSON");
      for (const auto& t : nonfinite_tokens(text)) {
        problems.push_back("non-finite number \"" + t + "\" in the --out file");
      }
    }
    return problems;
  }

  json c_;
  const Paths& paths_;
  std::string name_, check_;
  fs::path work_, file_;
};

int usage(const std::string& why) {
  std::fprintf(stderr,
               "ddpsim_reliability_cases: %s\nusage: ddpsim_reliability_cases --ddpsim BIN "
               "--catalogue FILE --work-dir DIR --data-dir DIR --scenario-dir DIR "
               "[--memory-limit-mb N] [--case NAME] [--list]\n",
               why.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Paths paths;
  std::string only;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--ddpsim") {
        paths.ddpsim = value();
      } else if (a == "--catalogue") {
        paths.catalogue = value();
      } else if (a == "--work-dir") {
        paths.work_dir = value();
      } else if (a == "--data-dir") {
        paths.data_dir = value();
      } else if (a == "--scenario-dir") {
        paths.scenario_dir = value();
      } else if (a == "--memory-limit-mb") {
        paths.memory_limit_mb = std::stol(value());
      } else if (a == "--timeout-scale") {
        paths.timeout_scale = std::stod(value());
        if (!(paths.timeout_scale >= 1)) return usage("--timeout-scale must be >= 1");
      } else if (a == "--case") {
        only = value();
      } else if (a == "--list") {
        list = true;
      } else {
        return usage("unknown argument " + a);
      }
    } catch (const std::exception& e) {
      return usage(e.what());
    }
  }
  if (paths.catalogue.empty()) return usage("--catalogue is required");
  std::vector<Case> cases;
  try {
    std::ifstream f(paths.catalogue);
    const json doc = json::parse(f);
    for (const auto& c : doc) cases.emplace_back(c, paths);
  } catch (const std::exception& e) {
    return usage(paths.catalogue + ": " + e.what());
  }
  if (list) {
    for (const auto& c : cases) std::printf("%s\n", c.name().c_str());
    return 0;
  }
  if (paths.ddpsim.empty() || paths.work_dir.empty()) return usage("--ddpsim and --work-dir");
  int failed = 0, ran = 0;
  for (const auto& c : cases) {
    if (!only.empty() && c.name() != only) continue;
    ++ran;
    std::vector<std::string> problems;
    try {
      problems = c.run_and_check();
    } catch (const std::exception& e) {
      problems.push_back(std::string("runner error: ") + e.what());
    }
    for (const auto& p : problems) std::printf("FAIL %s: %s\n", c.name().c_str(), p.c_str());
    if (problems.empty()) std::printf("ok %s\n", c.name().c_str());
    failed += problems.empty() ? 0 : 1;
  }
  if (ran == 0) return usage("no case named " + only);
  return failed ? 1 : 0;
}
