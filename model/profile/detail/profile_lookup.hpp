// detail/profile_lookup.hpp: the lookups behind Profile::gemm_time_s and
// Profile::collective_time_s (profile.hpp states the rules), as functions of the rows Profile
// has already read and checked. Not part of the public API.
//
// Times are seconds, sizes bytes; an Estimate carries the interval and, when it was
// extrapolated, a note saying from what.
//
//   std::optional<Estimate> t = gemm_family_time(p.gemms(), gemm, DType::kFp32, 32);
//   Estimate c = collective_table_time(*p.collective(CollectiveOp::kAllReduce), 25 << 20, 8);
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/profile/profile.hpp"
#include "model/workload/workload.hpp"

namespace ddpsim::model::detail {

/// The per-sample shape of a row (its batch extent divided by the batch); nullopt when the row
/// is a grid shape (no batch_dim) or the extent is not a multiple of the batch.
std::optional<GemmShape> per_sample_of(const ProfileGemm& g);

/// The row of exactly `shape` in `dtype` (its median and spread); nullopt when there is none.
std::optional<Estimate> exact_gemm_time(const std::vector<ProfileGemm>& gemms,
                                        const GemmShape& shape, DType dtype);

/// `g` at micro-batch `batch` in `dtype` from the rows of its family (same per-sample shape,
/// transposes, dtype and batch dimension), else from a row of exactly that shape; nullopt when
/// neither exists. Precondition: batch >= 1.
std::optional<Estimate> gemm_family_time(const std::vector<ProfileGemm>& gemms, const Gemm& g,
                                         DType dtype, std::int64_t batch);

/// An all-reduce (or t.op) of `bytes` over `ranks` ranks from the table `t`: log-log
/// interpolation inside its sizes at its rank count, else its fit (rescaled to `ranks`),
/// flagged. Preconditions: bytes >= 0, ranks >= 2, t has rows and a fit.
Estimate collective_table_time(const CollectiveTable& t, double bytes, int ranks);

}  // namespace ddpsim::model::detail
