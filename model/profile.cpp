#include "model/profile.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "model/error.hpp"
#include "model/profile_keys.hpp"
#include "model/scenario.hpp"

namespace ddpsim::model {

using nlohmann::json;

namespace {

// ---- helpers ---------------------------------------------------------------------------------

template <typename T>
T get(const json& o, const char* k, T def) {
  auto it = o.find(k);
  return it == o.end() ? def : it->template get<T>();
}

std::optional<BatchDim> parse_batch_dim(const std::string& s) {
  if (s == "m") return BatchDim::kM;
  if (s == "n") return BatchDim::kN;
  if (s == "k") return BatchDim::kK;
  if (s == "count") return BatchDim::kCount;
  return std::nullopt;
}

std::int64_t& extent(GemmShape& s, BatchDim d) {
  switch (d) {
    case BatchDim::kM:
      return s.m;
    case BatchDim::kN:
      return s.n;
    case BatchDim::kK:
      return s.k;
    case BatchDim::kCount:
      break;
  }
  return s.count;
}

// The per-sample shape of a row (its batch extent divided by the batch); nullopt when the row
// is a grid shape or the extent is not a multiple of the batch.
std::optional<GemmShape> per_sample_of(const ProfileGemm& g) {
  if (!g.batch_dim) return std::nullopt;
  GemmShape s = g.shape;
  std::int64_t& e = extent(s, *g.batch_dim);
  if (e % g.batch != 0) return std::nullopt;
  e /= g.batch;
  return s;
}

// Linear interpolation of y at x between (x0, y0) and (x1, y1).
double lerp(double x, double x0, double y0, double x1, double y1) {
  return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g %s", std::round(b * 100) / 100, units[u]);
  return buf;
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

const char* collective_op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return "all_reduce";
    case CollectiveOp::kReduceScatter:
      return "reduce_scatter";
    case CollectiveOp::kAllGather:
      return "all_gather";
    case CollectiveOp::kBroadcast:
      return "broadcast";
  }
  DDPSIM_ASSERT(false, "unknown collective op");
}

std::optional<CollectiveOp> parse_collective_op(const std::string& name) {
  for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter,
                          CollectiveOp::kAllGather, CollectiveOp::kBroadcast}) {
    if (name == collective_op_name(op)) return op;
  }
  return std::nullopt;
}

double busbw_factor(CollectiveOp op, int n) {
  const double nd = n;
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2.0 * (nd - 1) / nd;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
      return (nd - 1) / nd;
    case CollectiveOp::kBroadcast:
      return 1.0;
  }
  return 1.0;
}

double ring_steps(CollectiveOp op, int n) {
  return op == CollectiveOp::kAllReduce ? 2.0 * (n - 1) : static_cast<double>(n - 1);
}

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

Profile Profile::from_json(json doc, const std::string& file) {
  validate(doc, profile_keys(), file);
  Profile p;
  p.file_ = file;
  p.ranks_ = get<int>(doc, "ranks", 1);

  if (doc.contains("gemms")) {
    const json& gs = doc.at("gemms");
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
      if (r.batch_dim && extent(r.shape, *r.batch_dim) % r.batch != 0) {
        throw InputError(file, ptr + "/batch",
                         "a batch that divides the batch_dim extent (it is batch x per-sample)",
                         std::to_string(r.batch));
      }
      p.gemms_.push_back(std::move(r));
    }
  }

  if (doc.contains("collectives")) {
    json& c = doc["collectives"];
    const int ranks = c.at("ranks").get<int>();
    for (auto& [name, table] : c.at("ops").items()) {
      const std::string ptr = "/collectives/ops/" + escape_pointer_token(name);
      const auto op = parse_collective_op(name);
      if (!op) {
        throw InputError(file, ptr,
                         "an op name (all_reduce, reduce_scatter, all_gather, broadcast)",
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
        throw InputError(file, ptr + "/rows",
                         "one row per size and placement (in_place false/true)", "a repeated size");
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
          throw InputError(file, ptr + "/fit/breakpoints_bytes",
                           "one breakpoint fewer than segments",
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
      p.collectives_.push_back(std::move(t));
    }
  }

  if (doc.contains("interference")) {
    const json& in = doc.at("interference");
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
    p.interference_ = factor;
  }

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
  DDPSIM_ASSERT(batch >= 1, "gemm_time_s: batch must be >= 1");
  // The family: rows of the same per-sample shape, transposes, dtype and batch dimension.
  std::map<std::int64_t, const ProfileGemm*> by_batch;
  for (const ProfileGemm& r : gemms_) {
    if (r.dtype != dtype || r.batch_dim != g.batch_dim) continue;
    const auto ps = per_sample_of(r);
    if (ps && *ps == g.per_sample) by_batch.emplace(r.batch, &r);
  }
  if (by_batch.empty()) {
    // A grid row of exactly this shape still answers.
    return gemm_time_s(g.at_batch(batch), dtype);
  }
  const double flops = g.at_batch(batch).flops();
  auto fl = [&](const ProfileGemm* r) { return r->shape.flops(); };
  Estimate e;
  auto exact = by_batch.find(batch);
  if (exact != by_batch.end()) {
    e.time_s = exact->second->time_s;
    e.low_s = exact->second->low_s;
    e.high_s = exact->second->high_s;
    return e;
  }
  auto hi = by_batch.upper_bound(batch);
  if (hi != by_batch.begin() && hi != by_batch.end()) {
    const ProfileGemm* b = hi->second;
    const ProfileGemm* a = std::prev(hi)->second;
    e.time_s = lerp(flops, fl(a), a->time_s, fl(b), b->time_s);
    e.low_s = lerp(flops, fl(a), a->low_s, fl(b), b->low_s);
    e.high_s = lerp(flops, fl(a), a->high_s, fl(b), b->high_s);
    return e;
  }
  e.extrapolated = true;
  if (hi == by_batch.end()) {
    // Above the largest batch: a large GEMM keeps its throughput.
    const ProfileGemm* l = by_batch.rbegin()->second;
    const double s = flops / fl(l);
    e.time_s = l->time_s * s;
    e.low_s = l->low_s * s;
    e.high_s = l->high_s * s;
    e.note = "batch " + std::to_string(batch) + " above the largest measured (" +
             std::to_string(l->batch) + "): scaled at that batch's throughput";
    return e;
  }
  // Below the smallest batch: small GEMMs have a fixed cost, so follow the line through the two
  // smallest batches, but never claim more throughput than the smallest batch reached.
  const ProfileGemm* a = by_batch.begin()->second;
  const double s = flops / fl(a);
  e.time_s = a->time_s * s;
  e.low_s = a->low_s * s;
  e.high_s = a->high_s * s;
  if (by_batch.size() >= 2) {
    const ProfileGemm* b = std::next(by_batch.begin())->second;
    e.time_s = std::max(e.time_s, lerp(flops, fl(a), a->time_s, fl(b), b->time_s));
    e.low_s = std::max(e.low_s, lerp(flops, fl(a), a->low_s, fl(b), b->low_s));
    e.high_s = std::max(e.high_s, lerp(flops, fl(a), a->high_s, fl(b), b->high_s));
  }
  e.note = "batch " + std::to_string(batch) + " below the smallest measured (" +
           std::to_string(a->batch) + ")";
  return e;
}

std::optional<Estimate> Profile::gemm_time_s(const GemmShape& shape, DType dtype) const {
  for (const ProfileGemm& r : gemms_) {
    if (r.dtype == dtype && r.shape == shape)
      return Estimate{r.time_s, r.low_s, r.high_s, false, {}};
  }
  return std::nullopt;
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
  Estimate e;
  if (bytes == 0) return e;
  const auto& rows = t->rows;
  const std::size_t seg_i = t->fit.segment_for(bytes);
  const FitSegment& seg = t->fit.segments[seg_i];

  if (ranks == t->ranks && bytes >= rows.front().size_bytes && bytes <= rows.back().size_bytes) {
    // Inside the table: straight lines on log-log axes between neighbouring sizes (collective
    // time is a power law between protocol switches far better than it is linear).
    std::size_t i = 0;
    while (i + 1 < rows.size() && rows[i + 1].size_bytes < bytes) ++i;
    const CollectiveRow& a = rows[i];
    const CollectiveRow& b = rows[std::min(i + 1, rows.size() - 1)];
    auto loglog = [&](double ya, double yb) {
      if (a.size_bytes == b.size_bytes) return ya;
      const double u = (std::log(bytes) - std::log(a.size_bytes)) /
                       (std::log(b.size_bytes) - std::log(a.size_bytes));
      return std::exp(std::log(ya) + u * (std::log(yb) - std::log(ya)));
    };
    e.time_s = loglog(a.time_s, b.time_s);
    e.low_s = loglog(a.min_s, b.min_s);
    e.high_s = loglog(a.max_s, b.max_s);
    return e;
  }

  // Outside: the segment's line, rescaled to another rank count by the ring's step count
  // (latency) and the nccl-tests volume factor (bytes each rank sends), which is how the
  // alpha-beta model of DESIGN.md scales.
  double a = seg.fit.a, b = seg.fit.b;
  e.extrapolated = true;
  if (ranks != t->ranks) {
    if (t->ranks >= 2) {
      a *= ring_steps(op, ranks) / ring_steps(op, t->ranks);
      b *= busbw_factor(op, ranks) / busbw_factor(op, t->ranks);
    }
    e.note = std::string(collective_op_name(op)) + " measured at " + std::to_string(t->ranks) +
             " ranks, asked for " + std::to_string(ranks) +
             ": fit rescaled by ring steps and bus-bandwidth factor";
  } else {
    e.note = std::string(collective_op_name(op)) + " of " + human_bytes(bytes) +
             " outside the measured " + human_bytes(rows.front().size_bytes) + " .. " +
             human_bytes(rows.back().size_bytes) + ": from the fit";
  }
  e.time_s = a + b * bytes;
  const double rms = seg.fit.rms_relative_error();
  const CollectiveRow& near = bytes < rows.front().size_bytes ? rows.front() : rows.back();
  e.low_s = std::max(0.0, e.time_s * (1 - 2 * rms) * (near.min_s / near.time_s));
  e.high_s = e.time_s * (1 + 2 * rms) * (near.max_s / near.time_s);
  return e;
}

std::optional<double> Profile::memory_bandwidth_bytes_per_s(const std::string& kernel) const {
  for (const json& m : doc_.value("memory_bandwidth", json::array())) {
    if (m.at("kernel").get<std::string>() == kernel) {
      return m.at("gbytes_per_s").get<double>() * 1e9;
    }
  }
  return std::nullopt;
}

json hardware_json_from_profile(const Profile& p, const std::string& file,
                                const std::string& pointer) {
  const std::string where = pointer + "/profile";
  if (p.gemms().empty()) {
    throw InputError(file, where,
                     "a profile with GEMM measurements (\"gemms\") to describe a device",
                     p.file() + " has none");
  }
  const json ctx = p.document().value("context", json::object());
  const bool gpu = p.backend() == "cuda";
  json hw;
  const std::string host = p.host().empty() ? "unknown host" : p.host();
  hw["name"] = "profile " + host;
  hw["source"] =
      "calibration profile " + p.file() + " (" + host + ", " +
      (ctx.contains("date") && ctx.at("date").is_string() ? ctx.at("date").get<std::string>()
                                                          : std::string("undated")) +
      "); inter_node is the measured intra-host link unless overridden";
  json g;
  double mem_bytes = 0;
  if (gpu) {
    const json gi = ctx.value("gpu", json::object());
    g["name"] = gi.value("name", std::string("cuda device"));
    mem_bytes = gi.value("memory_bytes", 0.0);
  } else {
    g["name"] = ctx.value("cpu_model", std::string("cpu")) + " (one rank)";
    mem_bytes = ctx.value("host_memory_bytes", 0.0) / std::max(1, p.ranks());
  }
  if (mem_bytes <= 0) {
    throw InputError(file, where, "a profile whose context gives the device memory",
                     p.file() + " has none");
  }
  g["memory_gib"] = mem_bytes / (1024.0 * 1024.0 * 1024.0);
  const auto bw =
      gpu ? p.memory_bandwidth_bytes_per_s("d2d_copy") : p.memory_bandwidth_bytes_per_s("triad");
  if (!bw) {
    throw InputError(
        file, where,
        std::string("a profile with a \"") + (gpu ? "d2d_copy" : "triad") + "\" memory bandwidth",
        p.file() + " has none");
  }
  g["memory_bandwidth_gbytes_per_s"] = *bw / 1e9;
  g["memory_efficiency"] = 1.0;
  json peak = json::object(), eff = json::object();
  for (DType d : {DType::kFp32, DType::kFp16, DType::kBf16}) {
    const double f = p.best_gemm_flops(d);
    if (f > 0) {
      // The best measured throughput is the peak the model scales from; efficiency 1 because
      // it was reached, not quoted.
      peak[dtype_name(d)] = f / 1e12;
      eff[dtype_name(d)] = 1.0;
    }
  }
  g["peak_tflops"] = peak;
  g["efficiency"] = eff;
  g["source"] = "best measured GEMM throughput per dtype in " + p.file();
  hw["gpu"] = g;
  hw["gpus_per_node"] = std::max(1, p.ranks());

  if (const CollectiveTable* ar = p.collective(CollectiveOp::kAllReduce); ar && ar->ranks >= 2) {
    // Ring all-reduce: t = 2(n-1) alpha + 2(n-1)/n S / B. The largest-size segment gives the
    // bus bandwidth, the smallest-size segment the per-step latency.
    const int n = ar->ranks;
    // A segment fitted to noisy latency-bound rows can come out with beta = 0; then the
    // largest segment with a per-byte cost gives the bandwidth, else the largest row itself
    // (its bus bandwidth, nccl-tests' definition).
    const FitSegment& small = ar->fit.segments.front();
    double busbw_gbytes = 0;
    for (auto it = ar->fit.segments.rbegin(); it != ar->fit.segments.rend(); ++it) {
      if (it->fit.b > 0) {
        busbw_gbytes = busbw_factor(CollectiveOp::kAllReduce, n) / it->fit.b / 1e9;
        break;
      }
    }
    if (!(busbw_gbytes > 0) && !ar->rows.empty() && ar->rows.back().time_s > 0) {
      const CollectiveRow& r = ar->rows.back();
      busbw_gbytes = busbw_factor(CollectiveOp::kAllReduce, n) * r.size_bytes / r.time_s / 1e9;
    }
    if (!(busbw_gbytes > 0) || !std::isfinite(busbw_gbytes)) {
      throw InputError(file, where, "an all_reduce fit or row with a per-byte cost > 0",
                       "no bandwidth in " + p.file());
    }
    const double step_us = small.fit.a / ring_steps(CollectiveOp::kAllReduce, n) * 1e6;
    const json& coll = p.document().at("collectives");
    const std::string lname = "measured " + coll.value("backend", std::string("collectives")) +
                              "/" + coll.value("transport", std::string("unknown transport"));
    hw["intra_node"] = {{"name", lname},
                        {"kind", "intra_node"},
                        {"bandwidth_gbytes_per_s", busbw_gbytes},
                        {"latency_us", step_us}};
    hw["inter_node"] = {{"name", lname},
                        {"kind", "nic"},
                        {"bandwidth_gbps", busbw_gbytes * 8},
                        {"latency_us", step_us}};
    const json tune = {{"ring_efficiency", 1.0}, {"tree_efficiency", 1.0}, {"latency_us", step_us}};
    hw["collectives"] = {{"intra_node", tune}, {"inter_node", tune}};
  }
  return hw;
}

}  // namespace ddpsim::model
