#include "model/imports/measurement_import.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "model/error.hpp"
#include "model/imports/detail/nccl_tests_section.hpp"
#include "model/json_file.hpp"
#include "model/profile/profile.hpp"
#include "model/scenario/scenario.hpp"
#include "model/trace_file.hpp"

namespace ddpsim::model {

using nlohmann::json;
using namespace detail;  // the nccl-tests section both readers build

namespace {

std::vector<std::string> tokens(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string t;
  while (in >> t) out.push_back(t);
  return out;
}

std::string line_ptr(std::size_t n) { return "line " + std::to_string(n); }

// A small non-negative count from a header ("nThread 1 nGpus 8 ... iters: 20"): digits only,
// clamped to 1e6 (a count past that is no nccl-tests run; atoi would overflow), 0 when absent.
int header_count(const std::string& s) {
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return 0;
    v = std::min<long long>(v * 10 + (c - '0'), 1000000);
  }
  return static_cast<int>(v);
}

std::optional<double> parse_number(const std::string& s) {
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used != s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Launchers that tag each line: `mpirun --tag-output` ("[1,0]<stdout>:") and `srun --label`
// ("0: "). A table row never starts with a word ending in ':', so neither can eat a row.
// OpenMPI's --tag-output prefix "[J,R]<stdout>:", at the start of a line or inside a row that
// nccl-tests printed in several writes ("-1[1,0]<stdout>:    85.70"): each such tag becomes a
// space.
std::string strip_inner_tags(std::string line) {
  for (std::size_t at = line.find("]<"); at != std::string::npos; at = line.find("]<", at + 1)) {
    const std::size_t open = line.rfind('[', at);
    const std::size_t colon = line.find(">:", at);
    if (open == std::string::npos || colon == std::string::npos ||
        line.find_first_not_of("0123456789,", open + 1) != at) {
      continue;
    }
    line.replace(open, colon + 2 - open, " ");
    at = open;
  }
  return line;
}

std::string strip_launcher_tag(const std::string& whole) {
  std::string line = strip_inner_tags(whole);
  // SkyPilot's "(head, rank=0, pid=3808) " before the MPI tag.
  if (!line.empty() && line[0] == '(') {
    const auto close = line.find(") ");
    if (close != std::string::npos && line.compare(0, close, "(") != 0 &&
        line.substr(0, close).find("rank=") != std::string::npos) {
      line = line.substr(close + 2);
    }
  }
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos) return line;
  const std::size_t digits = line.find_first_not_of("0123456789", i);
  if (digits != i && digits != std::string::npos && line[digits] == ':' &&
      (digits + 1 == line.size() || line[digits + 1] == ' ' || line[digits + 1] == '\t')) {
    return line.substr(digits + 1);
  }
  return line;
}

// A row read before the op is known.
struct PendingRow {
  std::string dtype, redop, root;
  nlohmann::json row;
  std::size_t line = 0;
};

// The op of a log that does not name it, from busbw/algbw (nccl-tests' bus-bandwidth factors:
// 2(n-1)/n all_reduce, (n-1)/n all_gather and reduce_scatter, 1 broadcast and reduce), the
// redop column (all_gather and broadcast print "none") and the root column (-1 for
// all_reduce); anything ambiguous asks for --op.
std::string infer_op(const std::vector<PendingRow>& rows, int ranks, const std::string& file) {
  const std::string expected =
      "the op: a \"# Collective test starting: X_perf\" line, or pass --op (all_reduce, "
      "reduce_scatter, all_gather, broadcast)";
  const PendingRow* best = nullptr;
  for (const PendingRow& r : rows) {
    if (!best || r.row.at("algbw_gbytes_per_s").get<double>() >
                     best->row.at("algbw_gbytes_per_s").get<double>()) {
      best = &r;
    }
  }
  const double algbw = best ? best->row.at("algbw_gbytes_per_s").get<double>() : 0;
  if (!(algbw > 0) || ranks < 2) {
    throw InputError(file, "", expected,
                     "no line naming it, and no bandwidth to infer it from (" +
                         std::to_string(ranks) + " rank(s), largest algbw " +
                         std::to_string(algbw) + ")");
  }
  const double ratio = best->row.at("busbw_gbytes_per_s").get<double>() / algbw;
  const double n = ranks;
  // Printed with two decimals: 0.01 GB/s of rounding on each, relative to the bandwidth.
  const double tol = 0.02 + 0.02 / algbw;
  auto near = [&](double f) { return std::fabs(ratio - f) <= tol * f; };
  const bool none = best->redop == "none";
  const bool rooted = !best->root.empty() && best->root != "-1";
  std::vector<std::string> fits;
  if (near(2 * (n - 1) / n) && !none && !rooted) fits.push_back("all_reduce");
  if (near((n - 1) / n)) fits.push_back(none ? "all_gather" : "reduce_scatter");
  if (near(1.0) && (rooted || ranks > 2 || none)) fits.push_back(none ? "broadcast" : "reduce");
  char got[160];
  std::snprintf(got, sizeof got, "busbw/algbw = %.3f with %d ranks (redop %s, root %s)", ratio,
                ranks, best->redop.c_str(), best->root.empty() ? "-" : best->root.c_str());
  if (fits.size() != 1) {
    throw InputError(file, line_ptr(best->line), expected,
                     std::string(got) + (fits.empty() ? ": no known op" : ": ambiguous"));
  }
  if (!parse_collective_op(fits[0])) {
    throw InputError(file, line_ptr(best->line), expected,
                     std::string(got) + ": " + fits[0] + ", which ddpsim does not model");
  }
  return fits[0];
}

}  // namespace

namespace {

// A layout the fit can replay: nodes of equal GPU counts.
void check_layout(int ranks, int nodes, const std::string& file) {
  if (nodes > ranks || ranks % nodes != 0) {
    throw InputError(file, "", "a node count that divides the rank count (--nodes, --ranks)",
                     std::to_string(nodes) + " nodes for " + std::to_string(ranks) + " ranks");
  }
}

// A count the file states (> 0) and the command line gives (> 0, --ranks / --nodes) must
// agree: the one known, 0 when neither is.
int agreed_count(int in_file, int given, const char* option, const std::string& what,
                 const std::string& file) {
  if (in_file > 0 && given > 0 && in_file != given) {
    throw InputError(
        file, "",
        std::string(option) + " as the " + what + " state it (" + std::to_string(in_file) + ")",
        std::to_string(given));
  }
  return in_file > 0 ? in_file : given;
}

// One nccl-tests log read line by line: the header comments (threads, GPUs, iterations, ranks
// and hosts, the test, the NCCL version), the column header of each table, and its rows.
class NcclTestsLog {
 public:
  NcclTestsLog(const std::string& file, const std::string& op_override,
               const NcclTestsLayout& layout)
      : file_(file), op_override_(op_override), op_(op_override), layout_(layout) {}

  void read(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      ++n_;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      line = strip_launcher_tag(line);
      auto t = tokens(line);
      if (t.empty()) continue;
      if (t[0] == "#" || t[0][0] == '#') {
        // Strip the leading '#' (it may be glued to the first word).
        if (t[0] == "#") {
          t.erase(t.begin());
        } else {
          t[0] = t[0].substr(1);
        }
        if (!t.empty()) comment(t, line);
        continue;
      }
      // nccl-tests' own comment lines whose '#' a page renderer dropped (dstack's docs): the
      // column header and the run's header lines.
      static const std::set<std::string> kHeaderWords = {"size",  "(B)", "nThread", "Rank",
                                                         "Using", "Avg", "Out",     "Collective"};
      if (kHeaderWords.count(t[0]) && (t[0] != "size" || t.size() > 3)) {
        comment(t, line);
        continue;
      }
      // A NCCL INFO line or other chatter between rows.
      if (!parse_number(t[0])) {
        const auto pos = line.find("NCCL version ");
        if (pos != std::string::npos) {
          const auto v = tokens(line.substr(pos + 13));
          if (!v.empty()) version_ = v[0].substr(0, v[0].find('+'));
        }
        // "NCCL INFO NCCL_ALGO set by environment to Ring.": how the run was forced (algorithm,
        // protocol, buffer size, transports), kept as the log printed it.
        const auto env = line.find(" set by environment to ");
        const auto name = line.rfind(" NCCL_", env);
        if (env != std::string::npos && name != std::string::npos) {
          std::string value = line.substr(env + 23);
          while (!value.empty() && (value.back() == '.' || value.back() == ' ')) value.pop_back();
          env_[line.substr(name + 1, env - name - 1)] = value;
        }
        continue;
      }
      row(t, line);
    }
  }

  json section_json() {
    if (rows_ == 0) {
      throw InputError(file_, "", "an nccl-tests log with a result table", "no table rows");
    }
    // Rank lines state the ranks and their hosts; without them, --ranks / --nodes, else one
    // process of nThread x nGpus on one node.
    const int ranks = stated(rank_lines_, layout_.ranks, "--ranks", "rank lines",
                             static_cast<int>(std::clamp<long long>(
                                 static_cast<long long>(threads_) * gpus_, 1, 1000000)));
    const int nodes = stated(static_cast<int>(hosts_.size()), layout_.nodes, "--nodes",
                             "hosts on its rank lines", 1);
    check_layout(ranks, nodes, file_);
    if (!pending_.empty()) {
      const std::string inferred = infer_op(pending_, ranks, file_);
      for (PendingRow& r : pending_) b_.add(inferred, r.dtype, r.redop, std::move(r.row));
    }
    json s = section(b_, ranks, nodes, version_, "nccl-tests log " + file_);
    // "# nThread T nGpus G": one thread launched G GPUs' kernels (-g G), which puts a host
    // floor under small calls that a process per GPU (DDP) does not have.
    if (gpus_ > 0) s["gpus_per_process"] = gpus_;
    if (!env_.empty()) s["nccl_env"] = env_;
    return s;
  }

 private:
  // Column positions of one result group (out-of-place, in-place) of the current table header.
  struct Group {
    int time = -1, algbw = -1, busbw = -1, wrong = -1, imin = -1, imax = -1;
  };

  // A header comment, its '#' stripped.
  void comment(const std::vector<std::string>& t, const std::string& line) {
    if (t[0] == "nThread" && t.size() >= 4) {
      threads_ = header_count(t[1]);
      gpus_ = header_count(t[3]);
      for (std::size_t i = 0; i + 1 < t.size(); ++i) {
        if (t[i] == "iters:" && (i == 0 || t[i - 1] != "agg") && (i == 0 || t[i - 1] != "warmup")) {
          iters_ = header_count(t[i + 1]);
        }
      }
    } else if (t[0] == "Rank" && t.size() >= 2) {
      ++rank_lines_;
      for (std::size_t i = 0; i + 1 < t.size(); ++i) {
        if (t[i] == "on") hosts_.insert(t[i + 1]);
      }
    } else if (t[0] == "Collective" && t.size() >= 4 && t[1] == "test" && t[2] == "starting:") {
      if (op_override_.empty()) {
        const auto o = op_from_program(t[3]);
        if (!o) {
          throw InputError(file_, line_ptr(n_),
                           "a collective test (all_reduce_perf, reduce_scatter_perf, "
                           "all_gather_perf, broadcast_perf)",
                           "\"" + t[3] + "\"");
        }
        op_ = *o;
      }
    } else if (t[0] == "nccl-tests" && t.size() >= 3) {
      for (const auto& w : t) {
        if (w.rfind("nccl-library=", 0) == 0)
          version_ = nccl_version_text(std::atol(w.c_str() + 13));
      }
    } else if (std::find(t.begin(), t.end(), "size") != t.end() &&
               std::find(t.begin(), t.end(), "busbw") != t.end()) {
      columns(t, line);
    }
  }

  // A table's column header: where each row's numbers are.
  void columns(const std::vector<std::string>& t, const std::string& line) {
    groups_.clear();
    c_size_ = c_count_ = c_type_ = c_redop_ = c_root_ =
        -1;  // a later header describes its own columns
    header_width_ = t.size();
    for (std::size_t i = 0; i < t.size(); ++i) {
      const std::string& w = t[i];
      const int c = static_cast<int>(i);
      if (w == "size") c_size_ = c;
      if (w == "count") c_count_ = c;
      if (w == "type") c_type_ = c;
      if (w == "redop") c_redop_ = c;
      if (w == "root") c_root_ = c;
      if (w == "time" || w == "cputime") groups_.push_back({c});
      if (groups_.empty()) continue;
      if (w == "algbw") groups_.back().algbw = c;
      if (w == "busbw") groups_.back().busbw = c;
      if (w == "#wrong") groups_.back().wrong = c;
      if (w == "i_min") groups_.back().imin = c;
      if (w == "i_max") groups_.back().imax = c;
    }
    // Every group has its bandwidth columns, and the row's own columns (size, count, type,
    // redop) stand before the first group: rows index them unshifted (found by
    // fuzz_nccl_tests).
    bool malformed = c_size_ < 0 || groups_.empty() || groups_.size() > 2;
    for (const Group& g : groups_) malformed = malformed || g.algbw < 0 || g.busbw < 0;
    for (int c : {c_size_, c_count_, c_type_, c_redop_}) {
      malformed = malformed || (!groups_.empty() && c >= groups_[0].time);
    }
    if (malformed) {
      throw InputError(file_, line_ptr(n_),
                       "an nccl-tests column header (size count type redop root, then time "
                       "algbw busbw #wrong for out-of-place and in-place)",
                       line);
    }
  }

  // One result row: a row of the section per group present.
  void row(const std::vector<std::string>& t, const std::string& line) {
    if (groups_.empty()) {
      throw InputError(file_, line_ptr(n_), "the column header before the first row", line);
    }
    // Rows of trace-replay runs leave the out-of-place group blank: fewer columns.
    const std::size_t group_width =
        groups_.size() == 2 ? static_cast<std::size_t>(groups_[1].time - groups_[0].time) : 0;
    std::size_t shift = 0;
    std::vector<std::size_t> present = {0, 1};
    if (groups_.size() == 2 && t.size() + group_width <= header_width_ &&
        t.size() >= 5 + group_width) {
      present = {1};
      shift = group_width;
    } else if (groups_.size() == 1) {
      present = {0};
    }
    int last_col = 0;  // every column a row's numbers are read from must be there
    for (const Group& g : groups_) {
      last_col = std::max({last_col, g.time, g.algbw, g.busbw, g.wrong, g.imin, g.imax});
    }
    if (t.size() + shift < static_cast<std::size_t>(last_col + 1) ||
        t.size() < static_cast<std::size_t>(groups_[0].time)) {
      throw InputError(file_, line_ptr(n_),
                       "a row with " + std::to_string(header_width_) + " columns like the header",
                       std::to_string(t.size()) + " columns");
    }
    // Columns of the groups after the first one move left by the blank group's width.
    auto at = [&](int col) -> const std::string& {
      const std::size_t c = static_cast<std::size_t>(col);
      return t[col >= groups_[0].time ? c - shift : c];
    };
    auto num = [&](int col, const char* what) {
      const auto v = parse_number(at(col));
      if (!v || *v < 0) {
        throw InputError(file_, line_ptr(n_), std::string("a number >= 0 in column ") + what,
                         "\"" + at(col) + "\"");
      }
      return *v;
    };
    // Counts are stored as int64: integers up to 2^53 (exact in a double), refused above.
    auto count = [&](int col, const char* what) {
      const double v = num(col, what);
      if (v != std::floor(v) || v > 9007199254740992.0) {
        throw InputError(file_, line_ptr(n_),
                         std::string("an integer up to 2^53 in column ") + what,
                         "\"" + at(col) + "\"");
      }
      return static_cast<std::int64_t>(v);
    };
    const std::int64_t size = count(c_size_, "size");
    for (std::size_t g : present) {
      const Group& gr = groups_[g];
      json r;
      r["size_bytes"] = size;
      if (c_count_ >= 0) r["count"] = count(c_count_, "count");
      r["in_place"] = g == 1;
      if (iters_ > 0) r["repeats"] = iters_;
      // nccl-tests' time is the mean of the timed iterations: the median is not known, and
      // time_us (what lookups use) takes the mean; time_us_mean says which it is.
      r["time_us"] = call_time_us(num(gr.time, "time"), file_, line_ptr(n_), at(gr.time));
      r["time_us_mean"] = r["time_us"];
      if (gr.imin >= 0) r["time_us_min"] = num(gr.imin, "i_min");
      if (gr.imax >= 0) r["time_us_max"] = num(gr.imax, "i_max");
      r["algbw_gbytes_per_s"] = num(gr.algbw, "algbw");
      r["busbw_gbytes_per_s"] = num(gr.busbw, "busbw");
      if (gr.wrong >= 0 && at(gr.wrong) != "N/A") {
        r["wrong"] = count(gr.wrong, "#wrong");
      }
      const std::string dtype = c_type_ >= 0 ? dtype_of(at(c_type_)) : "float32";
      const std::string redop = c_redop_ >= 0 ? at(c_redop_) : "sum";
      if (op_.empty()) {
        pending_.push_back({dtype, redop, c_root_ >= 0 ? at(c_root_) : "", std::move(r), n_});
      } else {
        b_.add(op_, dtype, redop, std::move(r));
      }
    }
    ++rows_;
  }

  const std::string& file_;
  const std::string& op_override_;
  std::string op_;
  std::size_t n_ = 0;  // the line being read
  int threads_ = 0, gpus_ = 0, iters_ = 0;
  std::map<std::string, std::string> env_;  // NCCL_* "set by environment" in the INFO lines
  int rank_lines_ = 0;
  std::set<std::string> hosts_;
  NcclTestsLayout layout_;

  // agreed_count with the log's own words, else `fallback`.
  int stated(int in_log, int given, const char* option, const char* what, int fallback) const {
    const int v = agreed_count(in_log, given, option, std::string("log's ") + what, file_);
    return v > 0 ? v : fallback;
  }
  std::string version_ = "unknown";
  std::vector<Group> groups_;
  int c_size_ = -1, c_count_ = -1, c_type_ = -1, c_redop_ = -1, c_root_ = -1;
  std::size_t header_width_ = 0;
  std::vector<PendingRow> pending_;  // rows read before the op is known
  SectionBuilder b_;
  std::size_t rows_ = 0;
};

}  // namespace

json import_nccl_tests_log(const std::string& text, const std::string& file,
                           const std::string& op_override, const NcclTestsLayout& layout) {
  if (!op_override.empty() && !parse_collective_op(op_override)) {
    throw InputError(file, "", "an op (all_reduce, reduce_scatter, all_gather, broadcast)",
                     "\"" + op_override + "\"");
  }
  NcclTestsLog log(file, op_override, layout);
  log.read(text);
  return log.section_json();
}

json import_nccl_tests_json(const json& doc, const std::string& file,
                            const std::string& op_override, const NcclTestsLayout& layout) {
  if (!doc.is_object() || !doc.contains("results") || !doc.at("results").is_array()) {
    throw InputError(file, "/results", "nccl-tests -J output with a \"results\" array",
                     doc.is_object() ? "none" : "not an object");
  }
  std::string op = op_override;
  if (op.empty()) {
    if (doc.contains("args") && doc.at("args").is_array() && !doc.at("args").empty() &&
        doc.at("args")[0].is_string()) {
      if (auto o = op_from_program(doc.at("args")[0].get<std::string>())) op = *o;
    }
  }
  if (op.empty() || !parse_collective_op(op)) {
    throw InputError(file, "/args/0",
                     "the test program (all_reduce_perf, ...) or an explicit op (--op)",
                     op.empty() ? "none" : "\"" + op + "\"");
  }
  const json cfg = doc.value("config", json::object());
  // Counts as the log's header gives them, clamped to [1, 1e6] before they are multiplied.
  auto config_count = [&](const char* key) -> long long {
    if (!cfg.contains(key) || !cfg.at(key).is_number()) return 1;
    return static_cast<long long>(std::clamp(cfg.at(key).get<double>(), 1.0, 1e6));
  };
  const int one_process =
      static_cast<int>(std::min(config_count("nthreads") * config_count("ngpus"), 1000000LL));
  int ranks = 0;  // from the devices, when the file lists them
  std::set<std::string> hosts;
  if (cfg.contains("devices") && cfg.at("devices").is_array() && !cfg.at("devices").empty()) {
    ranks = static_cast<int>(cfg.at("devices").size());
    for (const json& d : cfg.at("devices")) {
      if (d.contains("hostname") && d.at("hostname").is_string()) {
        hosts.insert(d.at("hostname").get<std::string>());
      }
    }
  }
  const int iters = cfg.contains("iterations") && cfg.at("iterations").is_number()
                        ? static_cast<int>(std::clamp(cfg.at("iterations").get<double>(), 0.0, 1e6))
                        : 0;
  SectionBuilder b;
  const json& res = doc.at("results");
  for (std::size_t i = 0; i < res.size(); ++i) {
    const json& r = res[i];
    const std::string p = "/results/" + std::to_string(i);
    if (!r.is_object() || !r.contains("size") || !r.at("size").is_number_unsigned() ||
        r.at("size").get<std::uint64_t>() > (std::uint64_t{1} << 53)) {
      throw InputError(file, p + "/size", "a size in bytes (integer >= 0, up to 2^53)",
                       r.is_object() && r.contains("size") ? r.at("size").dump() : "none");
    }
    int placed = 0;
    for (const char* place : {"out_of_place", "in_place"}) {
      if (!r.contains(place) || r.at(place).is_null()) continue;
      const json& g = r.at(place);
      const std::string gp = p + "/" + place;
      auto need = [&](const char* k) {
        if (!g.contains(k) || !g.at(k).is_number() || g.at(k).get<double>() < 0) {
          throw InputError(file, gp + "/" + k, "a number >= 0",
                           g.contains(k) ? g.at(k).dump() : "none");
        }
        return g.at(k).get<double>();
      };
      json row;
      row["size_bytes"] = r.at("size").get<std::int64_t>();
      if (r.contains("count") && r.at("count").is_number_unsigned() &&
          r.at("count").get<std::uint64_t>() <= (std::uint64_t{1} << 53)) {
        row["count"] = r.at("count").get<std::int64_t>();
      }
      row["in_place"] = std::string(place) == "in_place";
      if (iters > 0) row["repeats"] = iters;
      const char* time_key = g.contains("time") ? "time" : "cpu_time";
      row["time_us"] =
          call_time_us(need(time_key), file, gp + "/" + time_key, g.at(time_key).dump());
      row["time_us_mean"] = row["time_us"];  // nccl-tests' time: the mean of the iterations
      const std::string per_iter = std::string(place) + "_per_iter";
      if (r.contains(per_iter) && r.at(per_iter).is_object()) {
        const json& pi = r.at(per_iter);
        if (pi.contains("min_us") && pi.at("min_us").is_number())
          row["time_us_min"] = pi.at("min_us");
        if (pi.contains("max_us") && pi.at("max_us").is_number())
          row["time_us_max"] = pi.at("max_us");
      }
      row["algbw_gbytes_per_s"] = need("alg_bw");
      row["busbw_gbytes_per_s"] = need("bus_bw");
      if (g.contains("nwrong") && g.at("nwrong").is_number()) {
        const double w = g.at("nwrong").get<double>();
        if (!(w >= 0 && w <= 9007199254740992.0) || w != std::floor(w)) {
          throw InputError(file, gp + "/nwrong", "an integer count >= 0 (up to 2^53)",
                           g.at("nwrong").dump());
        }
        row["wrong"] = static_cast<std::int64_t>(w);
      }
      b.add(op, dtype_of(r.value("type", std::string("float"))),
            r.value("redop", std::string("sum")), std::move(row));
      ++placed;
    }
    if (placed == 0) {
      throw InputError(file, p, "an out_of_place or in_place result", "neither");
    }
  }
  if (b.ops.empty()) throw InputError(file, "/results", "at least one result", "none");
  const long code = doc.contains("nccl_version") && doc.at("nccl_version").is_number_integer()
                        ? doc.at("nccl_version").get<long>()
                        : 0;
  // The devices and their hosts state the layout; without them, --ranks / --nodes.
  const auto stated = [&](int in_file, int given, const char* option, const char* what) {
    return agreed_count(in_file, given, option, std::string("file's ") + what, file);
  };
  const int listed = stated(ranks, layout.ranks, "--ranks", "devices");
  const int n = listed > 0 ? listed : std::max(1, one_process);
  const int nodes =
      std::max(1, stated(static_cast<int>(hosts.size()), layout.nodes, "--nodes", "hosts"));
  check_layout(n, nodes, file);
  return section(b, n, nodes, nccl_version_text(code), "nccl-tests json " + file);
}

json import_nccl_tests_file(const std::string& path, const std::string& op,
                            const NcclTestsLayout& layout) {
  const std::string text = read_measurement_text(path, "an nccl-tests log or -J JSON file");
  const auto first = text.find_first_not_of(" \t\r\n");
  json c = first != std::string::npos && text[first] == '{'
               ? import_nccl_tests_json(parse_json_text(text, path), path, op, layout)
               : import_nccl_tests_log(text, path, op, layout);
  check_fittable(c, path);
  return c;
}

json imported_profile(const json& collectives, const json& layer_times,
                      const std::string& command) {
  json p;
  p["format"] = "ddpsim-profile";
  p["format_version"] = 1;
  p["context"] = {{"tool", "ddpsim-calibrate import"}, {"command", command}};
  p["backend"] = "import";
  if (!collectives.is_null()) {
    json c = collectives;
    add_collective_fits(c);
    p["ranks"] = c.at("ranks");
    p["collectives"] = std::move(c);
  }
  if (!layer_times.is_null()) p["layer_times"] = layer_times;
  return p;
}

}  // namespace ddpsim::model
