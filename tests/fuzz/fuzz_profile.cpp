// Fuzz target: a calibration profile (results/profile-*.json) -> validation, the collective fits,
// the hardware description derived from it, and the lookups the simulator makes. Every estimate
// an accepted profile gives must be finite and non-negative.
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "model/profile/profile.hpp"
#include "model/profile/profile_hardware.hpp"
#include "tests/fuzz/fuzz_common.hpp"

namespace {
void check_estimate(double v) {
  if (!std::isfinite(v) || v < 0) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto doc = ddpsim::fuzz::parse_json(data, size);
  if (!doc) return 0;
  ddpsim::fuzz::expect_only_ddpsim_errors([&] {
    using ddpsim::model::CollectiveOp;
    const auto p = ddpsim::model::Profile::from_json(*doc, "fuzz/profile.json");
    for (auto op : {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter,
                    CollectiveOp::kAllGather, CollectiveOp::kBroadcast}) {
      if (p.collective(op) == nullptr) continue;
      for (double bytes : {0.0, 8.0, 1e6, 1e9}) {
        check_estimate(p.collective_time_s(op, bytes, 2).time_s);
        check_estimate(p.collective_time_s(op, bytes, 64).time_s);
      }
    }
    (void)ddpsim::model::hardware_json_from_profile(p, "fuzz/profile.json", "/hardware");
  });
  return 0;
}
