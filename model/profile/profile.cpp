#include "model/profile/profile.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "model/error.hpp"
#include "model/json_file.hpp"
#include "model/profile/detail/profile_lookup.hpp"
#include "model/profile/profile_keys.hpp"

namespace ddpsim::model {

using nlohmann::json;

namespace {

// ---- helpers ---------------------------------------------------------------------------------

template <typename T>
T get(const json& o, const char* k, T def) {
  auto it = o.find(k);
  return it == o.end() ? def : it->template get<T>();
}

// The rows a table's lookups and fit use: out-of-place (nccl-tests' headline columns, and the
// only kind some logs have), in place when a table has only in-place rows; size 0 rows (no data
// moved) are left out. Sorted by size.
std::pair<std::vector<const json*>, bool> fitted_rows(const json& rows) {
  std::vector<const json*> out, in;
  for (const json& r : rows) {
    if (r.at("size_bytes").get<double>() <= 0) continue;
    (r.at("in_place").get<bool>() ? in : out).push_back(&r);
  }
  const bool use_in = out.empty();
  auto& v = use_in ? in : out;
  std::stable_sort(v.begin(), v.end(), [](const json* a, const json* b) {
    return a->at("size_bytes").get<double>() < b->at("size_bytes").get<double>();
  });
  return {v, use_in};
}

json fit_json(CollectiveOp op, int ranks, const PiecewiseFit& p,
              const std::vector<const json*>& rows, bool in_place) {
  json f;
  f["model"] =
      "piecewise t = alpha_s + beta_s_per_byte * size_bytes, least squares with weights 1/t^2; "
      "breakpoints and segment count (<= 3) by least residual and BIC";
  f["rows"] = in_place ? "in_place" : "out_of_place";
  f["r_squared"] = p.r_squared;
  f["rms_relative_error"] = p.rms_relative_error();
  f["breakpoints_bytes"] = p.breakpoints_bytes;
  json segs = json::array();
  for (const FitSegment& s : p.segments) {
    json j;
    j["min_bytes"] = s.min_bytes;
    j["max_bytes"] = s.max_bytes;
    j["points"] = s.point_count;
    j["alpha_s"] = s.fit.a;
    j["beta_s_per_byte"] = s.fit.b;
    if (s.fit.b > 0) {
      j["algbw_gbytes_per_s"] = 1.0 / s.fit.b / 1e9;
      j["busbw_gbytes_per_s"] = busbw_factor(op, ranks) / s.fit.b / 1e9;
    }
    if (ranks >= 2) j["latency_per_step_us"] = s.fit.a / ring_steps(op, ranks) * 1e6;
    j["r_squared"] = s.fit.r_squared;
    j["rms_relative_error"] = s.fit.rms_relative_error();
    segs.push_back(std::move(j));
  }
  f["segments"] = std::move(segs);
  json res = json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double t = rows[i]->at("time_us").get<double>();
    res.push_back({{"size_bytes", rows[i]->at("size_bytes").get<double>()},
                   {"time_us", t},
                   {"fit_us", t + p.residuals[i] * 1e6},
                   {"relative", p.relative_residuals[i]}});
  }
  f["residuals"] = std::move(res);
  return f;
}

PiecewiseFit fit_rows(const std::vector<const json*>& rows) {
  std::vector<double> x, t;
  for (const json* r : rows) {
    x.push_back(r->at("size_bytes").get<double>());
    t.push_back(r->at("time_us").get<double>() * 1e-6);
  }
  return fit_piecewise_alpha_beta(x, t);
}

}  // namespace

void add_collective_fits(json& collectives) {
  const int ranks = collectives.at("ranks").get<int>();
  for (auto& [name, table] : collectives.at("ops").items()) {
    const auto op = parse_collective_op(name);
    DDPSIM_ASSERT(op.has_value(), "add_collective_fits: unknown op " + name);
    const auto [rows, in_place] = fitted_rows(table.at("rows"));
    std::vector<const json*> rows_v = rows;
    const PiecewiseFit p = fit_rows(rows_v);
    table["fit"] = fit_json(*op, ranks, p, rows_v, in_place);
  }
}

Profile Profile::load(const std::string& path) { return from_json(read_json_file(path), path); }

namespace {

// The profile's "gemms" rows, each checked: a spread around its median, a batch that divides
// its batch extent.
std::vector<ProfileGemm> read_gemms(const json& gs, const std::string& file) {
  std::vector<ProfileGemm> out;
  for (std::size_t i = 0; i < gs.size(); ++i) {
    const json& g = gs[i];
    ProfileGemm r;
    for (const json& o : g.value("ops", json::array())) r.ops.push_back(o.get<std::string>());
    r.layer = get<std::string>(g, "layer", "");
    r.shape = {g.at("m").get<std::int64_t>(), g.at("n").get<std::int64_t>(),
               g.at("k").get<std::int64_t>(), get<std::int64_t>(g, "count", 1),
               g.at("transa").get<bool>(),    g.at("transb").get<bool>()};
    r.dtype = *parse_dtype(g.at("dtype").get<std::string>());
    r.batch = g.at("batch").get<std::int64_t>();
    r.batch_dim = parse_batch_dim(get<std::string>(g, "batch_dim", "none"));
    r.repeats = get<int>(g, "repeats", 1);
    r.time_s = g.at("time_s").get<double>();
    r.low_s = get<double>(g, "time_p10_s", get<double>(g, "time_min_s", r.time_s));
    r.high_s = get<double>(g, "time_p90_s", get<double>(g, "time_max_s", r.time_s));
    const std::string ptr = "/gemms/" + std::to_string(i);
    if (r.low_s > r.time_s * (1 + 1e-9) || r.high_s < r.time_s * (1 - 1e-9)) {
      throw InputError(file, ptr, "a spread around the median (low <= time_s <= high)",
                       std::to_string(r.low_s) + " .. " + std::to_string(r.high_s));
    }
    if (r.batch_dim && !detail::per_sample_of(r)) {
      throw InputError(file, ptr + "/batch",
                       "a batch that divides the batch_dim extent (it is batch x per-sample)",
                       std::to_string(r.batch));
    }
    out.push_back(std::move(r));
  }
  return out;
}

// One op's table of "collectives/ops": its rows checked (none wrong, two or more distinct sizes,
// times > 0) and its fit, the stored one after a check or a new one written into `table`.
CollectiveTable read_collective_table(const std::string& name, json& table, int ranks,
                                      const std::string& file) {
  const std::string ptr = "/collectives/ops/" + escape_pointer_token(name);
  const auto op = parse_collective_op(name);
  if (!op) {
    throw InputError(file, ptr, "an op name (all_reduce, reduce_scatter, all_gather, broadcast)",
                     "\"" + name + "\"");
  }
  // A row whose result was checked and found wrong timed a broken collective: such a
  // table is refused, never fitted around (calibration fails before writing one).
  const json& all_rows = table.at("rows");
  for (std::size_t i = 0; i < all_rows.size(); ++i) {
    const std::int64_t w = get<std::int64_t>(all_rows[i], "wrong", 0);
    if (w > 0) {
      throw InputError(file, ptr + "/rows/" + std::to_string(i) + "/wrong",
                       "0 (a collective that returned wrong elements is not a measurement)",
                       std::to_string(w));
    }
  }
  auto [rows, in_place] = fitted_rows(table.at("rows"));
  std::vector<double> sizes;
  for (const json* r : rows) sizes.push_back(r->at("size_bytes").get<double>());
  std::vector<double> distinct = sizes;
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  if (distinct.size() < 2) {
    throw InputError(file, ptr + "/rows", "rows at two or more distinct sizes > 0 to fit",
                     std::to_string(distinct.size()));
  }
  if (distinct.size() != sizes.size()) {
    throw InputError(file, ptr + "/rows", "one row per size and placement (in_place false/true)",
                     "a repeated size");
  }
  for (const json* r : rows) {
    if (r->at("time_us").get<double>() <= 0) {
      throw InputError(file, ptr + "/rows", "times > 0 for sizes > 0", "a time of 0");
    }
  }
  CollectiveTable t;
  t.op = *op;
  t.ranks = ranks;
  for (const json* r : rows) {
    CollectiveRow row;
    row.size_bytes = r->at("size_bytes").get<double>();
    row.in_place = r->at("in_place").get<bool>();
    row.time_s = r->at("time_us").get<double>() * 1e-6;
    row.min_s = get<double>(*r, "time_us_min", row.time_s * 1e6) * 1e-6;
    row.max_s = get<double>(*r, "time_us_max", row.time_s * 1e6) * 1e-6;
    t.rows.push_back(row);
  }
  if (table.contains("fit")) {
    // A stored fit is data like the rows: it is used as written (so that a profile can be
    // edited or produced elsewhere), after a check that its segments are usable.
    const json& f = table.at("fit");
    const json& segs = f.at("segments");
    if (segs.empty()) throw InputError(file, ptr + "/fit/segments", "at least one segment");
    if (f.value("breakpoints_bytes", json::array()).size() + 1 != segs.size()) {
      throw InputError(file, ptr + "/fit/breakpoints_bytes", "one breakpoint fewer than segments",
                       std::to_string(f.value("breakpoints_bytes", json::array()).size()));
    }
    for (const json& s : segs) {
      FitSegment seg;
      seg.min_bytes = s.at("min_bytes").get<double>();
      seg.max_bytes = s.at("max_bytes").get<double>();
      seg.point_count = get<std::size_t>(s, "points", 0);
      seg.fit.a = s.at("alpha_s").get<double>();
      seg.fit.b = s.at("beta_s_per_byte").get<double>();
      seg.fit.r_squared = get<double>(s, "r_squared", 0);
      t.fit.segments.push_back(seg);
    }
    for (const json& b : f.value("breakpoints_bytes", json::array())) {
      t.fit.breakpoints_bytes.push_back(b.get<double>());
    }
    t.fit.r_squared = get<double>(f, "r_squared", 0);
    for (const json& r : f.value("residuals", json::array())) {
      t.fit.relative_residuals.push_back(get<double>(r, "relative", 0));
    }
    // Per-segment rms for intervals when the stored residuals cannot be mapped: use the
    // stored value.
    for (std::size_t i = 0; i < segs.size(); ++i) {
      const double rms = get<double>(segs[i], "rms_relative_error", 0);
      t.fit.segments[i].fit.relative_residuals.assign(1, rms);
    }
  } else {
    t.fit = fit_rows(rows);
    table["fit"] = fit_json(*op, ranks, t.fit, rows, in_place);
  }
  return t;
}

// "interference": the measured factor, checked against the ratio and the spreads it came from.
double read_interference(const json& in, const std::string& file) {
  const double alone = in.at("alone").at("time_s").get<double>();
  const double conc = in.at("concurrent").at("time_s").get<double>();
  const double factor = in.at("factor").get<double>();
  // The factor is data (it may be edited), but it must agree with the measured ratio it came
  // from when that is given, and the ratio with the two means (the two medians in profiles
  // written before means were kept).
  const bool means =
      in.at("alone").contains("time_mean_s") && in.at("concurrent").contains("time_mean_s");
  const double alone_c = means ? in.at("alone").at("time_mean_s").get<double>() : alone;
  const double conc_c = means ? in.at("concurrent").at("time_mean_s").get<double>() : conc;
  if (in.contains("ratio")) {
    const double ratio = in.at("ratio").get<double>();
    if (std::abs(ratio - conc_c / alone_c) > 1e-3 * (conc_c / alone_c)) {
      const char* what = means ? "concurrent/time_mean_s / alone/time_mean_s = "
                               : "concurrent/time_s / alone/time_s = ";
      throw InputError(file, "/interference/ratio", what + std::to_string(conc_c / alone_c),
                       std::to_string(ratio));
    }
  }
  for (const char* part : {"alone", "concurrent"}) {
    const json& s = in.at(part);
    const double t = s.at("time_s").get<double>();
    const double lo = get<double>(s, "time_p10_s", get<double>(s, "time_min_s", t));
    const double hi = get<double>(s, "time_p90_s", get<double>(s, "time_max_s", t));
    if (lo > t * (1 + 1e-9) || hi < t * (1 - 1e-9)) {
      throw InputError(file, std::string("/interference/") + part,
                       "a spread around the median (low <= time_s <= high)",
                       std::to_string(lo) + " .. " + std::to_string(hi));
    }
  }
  return factor;
}

}  // namespace

Profile Profile::from_json(json doc, const std::string& file) {
  validate(doc, profile_keys(), file);
  Profile p;
  p.file_ = file;
  p.ranks_ = get<int>(doc, "ranks", 1);
  if (doc.contains("gemms")) p.gemms_ = read_gemms(doc.at("gemms"), file);
  if (doc.contains("collectives")) {
    json& c = doc["collectives"];
    const int ranks = c.at("ranks").get<int>();
    // Nodes of equal GPU counts (a multi-node table fits the NIC: fabric_fit.hpp).
    if (c.contains("nodes") && ranks % c.at("nodes").get<int>() != 0) {
      throw InputError(
          file, "/collectives/nodes",
          "a node count that divides /collectives/ranks (" + std::to_string(ranks) + ")",
          std::to_string(c.at("nodes").get<int>()));
    }
    for (auto& [name, table] : c.at("ops").items()) {
      p.collectives_.push_back(read_collective_table(name, table, ranks, file));
    }
  }
  if (doc.contains("interference"))
    p.interference_ = read_interference(doc.at("interference"), file);
  if (doc.contains("layer_times")) {
    for (const json& l : doc.at("layer_times").at("layers")) {
      p.layer_times_.push_back({l.at("name").get<std::string>(), l.at("forward_s").get<double>(),
                                l.at("backward_s").get<double>()});
    }
  }
  p.doc_ = std::move(doc);
  return p;
}

std::string Profile::host() const {
  const json& c = doc_.value("context", json::object());
  return c.contains("host") && c.at("host").is_string() ? c.at("host").get<std::string>() : "";
}

std::string Profile::backend() const { return get<std::string>(doc_, "backend", "import"); }

std::optional<Estimate> Profile::gemm_time_s(const Gemm& g, DType dtype, std::int64_t batch) const {
  return detail::gemm_family_time(gemms_, g, dtype, batch);
}

std::optional<Estimate> Profile::gemm_time_s(const GemmShape& shape, DType dtype) const {
  return detail::exact_gemm_time(gemms_, shape, dtype);
}

double Profile::best_gemm_flops(DType dtype) const {
  double best = 0;
  for (const ProfileGemm& r : gemms_) {
    if (r.dtype == dtype) best = std::max(best, r.shape.flops() / r.time_s);
  }
  return best;
}

const CollectiveTable* Profile::collective(CollectiveOp op) const {
  for (const CollectiveTable& t : collectives_) {
    if (t.op == op) return &t;
  }
  return nullptr;
}

Estimate Profile::collective_time_s(CollectiveOp op, double bytes, int ranks) const {
  DDPSIM_ASSERT(bytes >= 0 && ranks >= 2, "collective_time_s: bytes >= 0 and ranks >= 2");
  const CollectiveTable* t = collective(op);
  if (t == nullptr) {
    throw Error(file_ + ": the profile has no " + collective_op_name(op) + " measurements");
  }
  return detail::collective_table_time(*t, bytes, ranks);
}

std::optional<double> Profile::memory_bandwidth_bytes_per_s(const std::string& kernel) const {
  for (const json& m : doc_.value("memory_bandwidth", json::array())) {
    if (m.at("kernel").get<std::string>() == kernel) {
      return m.at("gbytes_per_s").get<double>() * 1e9;
    }
  }
  return std::nullopt;
}

}  // namespace ddpsim::model
