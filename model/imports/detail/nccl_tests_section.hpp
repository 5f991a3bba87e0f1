// detail/nccl_tests_section.hpp: what the two nccl-tests readers of measurement_import.cpp (the
// stdout log and the -J JSON) share: nccl-tests' names for dtypes, programs and NCCL versions,
// the bounds of a call's time, and the profile "collectives" section they build. Not part of
// the public API.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ddpsim::model::detail {

/// nccl-tests prints ncclDataType names ("float", "half", "bfloat16", ...); the profile says
/// "float32" like the sweeps of calibrate/comm. Unknown names are kept.
std::string dtype_of(const std::string& t);

/// "all_reduce_perf" / "./build/all_reduce_perf" / "all_reduce" -> "all_reduce" when known.
std::optional<std::string> op_from_program(std::string prog);

/// NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9, major*1000 + minor*100 + patch
/// before; "unknown" for 0 or less.
std::string nccl_version_text(long code);

/// One call's time as nccl-tests prints it (us): above 0 (a fit divides by it) and at most an
/// hour, 3.6e9 us (nccl-tests times calls of at most a few GiB; a 1e300 us row would print a
/// 300-digit step time downstream). Refused (InputError at `where` of `file`, naming `shown`).
double call_time_us(double us, const std::string& file, const std::string& where,
                    const std::string& shown);

/// The row objects of a section, grouped by op.
struct SectionBuilder {
  nlohmann::json ops = nlohmann::json::object();
  void add(const std::string& op, const std::string& dtype, const std::string& redop,
           nlohmann::json row);
};

/// The profile "collectives" section (backend nccl) of the rows in `b`.
nlohmann::json section(const SectionBuilder& b, int ranks, int nodes, const std::string& version,
                       const std::string& source);

/// What a fit needs, checked as input: two ranks or more (on one GPU a collective moves nothing:
/// nccl-tests prints busbw 0), two sizes or more per op (a line needs two points), times > 0.
void check_fittable(const nlohmann::json& c, const std::string& file);

}  // namespace ddpsim::model::detail
