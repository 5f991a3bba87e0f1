// Profile lookups (detail/profile_lookup.hpp): interpolation between the measured GEMM batches
// and collective sizes, extrapolation beyond them. profile.hpp states the rules; the reasons
// for them are here.
#include "model/profile/detail/profile_lookup.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <string>

#include "model/error.hpp"
#include "model/units.hpp"

namespace ddpsim::model::detail {
namespace {

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

// Linear interpolation of y at x between (x0, y0) and (x1, y1).
double lerp(double x, double x0, double y0, double x1, double y1) {
  return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

}  // namespace

std::optional<GemmShape> per_sample_of(const ProfileGemm& g) {
  if (!g.batch_dim) return std::nullopt;
  GemmShape s = g.shape;
  std::int64_t& e = extent(s, *g.batch_dim);
  if (e % g.batch != 0) return std::nullopt;
  e /= g.batch;
  return s;
}

std::optional<Estimate> exact_gemm_time(const std::vector<ProfileGemm>& gemms,
                                        const GemmShape& shape, DType dtype) {
  for (const ProfileGemm& r : gemms) {
    if (r.dtype == dtype && r.shape == shape)
      return Estimate{r.time_s, r.low_s, r.high_s, false, {}};
  }
  return std::nullopt;
}

std::optional<Estimate> gemm_family_time(const std::vector<ProfileGemm>& gemms, const Gemm& g,
                                         DType dtype, std::int64_t batch) {
  DDPSIM_ASSERT(batch >= 1, "gemm_time_s: batch must be >= 1");
  // The family: rows of the same per-sample shape, transposes, dtype and batch dimension.
  std::map<std::int64_t, const ProfileGemm*> by_batch;
  for (const ProfileGemm& r : gemms) {
    if (r.dtype != dtype || r.batch_dim != g.batch_dim) continue;
    const auto ps = per_sample_of(r);
    if (ps && *ps == g.per_sample) by_batch.emplace(r.batch, &r);
  }
  if (by_batch.empty()) {
    // A grid row of exactly this shape still answers.
    return exact_gemm_time(gemms, g.at_batch(batch), dtype);
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

Estimate collective_table_time(const CollectiveTable& t, double bytes, int ranks) {
  const CollectiveOp op = t.op;
  Estimate e;
  if (bytes == 0) return e;
  const auto& rows = t.rows;
  const std::size_t seg_i = t.fit.segment_for(bytes);
  const FitSegment& seg = t.fit.segments[seg_i];

  if (ranks == t.ranks && bytes >= rows.front().size_bytes && bytes <= rows.back().size_bytes) {
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
  if (ranks != t.ranks) {
    if (t.ranks >= 2) {
      a *= ring_steps(op, ranks) / ring_steps(op, t.ranks);
      b *= busbw_factor(op, ranks) / busbw_factor(op, t.ranks);
    }
    e.note = std::string(collective_op_name(op)) + " measured at " + std::to_string(t.ranks) +
             " ranks, asked for " + std::to_string(ranks) +
             ": fit rescaled by ring steps and bus-bandwidth factor";
  } else {
    e.note = std::string(collective_op_name(op)) + " of " + ddpsim::human_bytes(bytes) +
             " outside the measured " + ddpsim::human_bytes(rows.front().size_bytes) + " .. " +
             ddpsim::human_bytes(rows.back().size_bytes) + ": from the fit";
  }
  e.time_s = a + b * bytes;
  const double rms = seg.fit.rms_relative_error();
  const CollectiveRow& near = bytes < rows.front().size_bytes ? rows.front() : rows.back();
  e.low_s = std::max(0.0, e.time_s * (1 - 2 * rms) * (near.min_s / near.time_s));
  e.high_s = e.time_s * (1 + 2 * rms) * (near.max_s / near.time_s);
  return e;
}

}  // namespace ddpsim::model::detail
