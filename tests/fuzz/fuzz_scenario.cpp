// Fuzz target: a scenario file as users write it -> validation, sweep expansion and the analytic
// prediction of the first points. Invariants checked beyond "no crash": every reported number of
// an accepted scenario is finite (the report seam's check), and a run stays bounded (libFuzzer's
// -timeout catches hangs; inputs are capped at -max_len).
#include <cstdint>

#include "model/scenario/scenario.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/report.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto doc = ddpsim::fuzz::parse_json(data, size);
  if (!doc) return 0;
  ddpsim::fuzz::expect_only_ddpsim_errors([&] {
    const auto scenario = ddpsim::model::parse_scenario(*doc, "fuzz/scenario.json");
    const auto points = ddpsim::model::expand_sweep(scenario);
    // Predicting is exercised only for small workloads: a zoo preset's 10^2-10^3 tensors under
    // ASan would hold the fuzzer to a few inputs per second, and the presets' predictions are
    // covered by the golden tests. Validation and sweep expansion above run for every input.
    if (scenario.workload->tensors.size() > 64) return;
    ddpsim::sim::Predictor predictor(scenario);
    int predicted = 0;
    for (const auto& p : points) {
      if (++predicted > 2) break;  // the first points exercise the code paths of a sweep
      const auto r = predictor.predict(p.cluster, p.training, p.parallelism);
      ddpsim::sim::check_finite(ddpsim::sim::prediction_json(p, r), "fuzz/scenario.json");
    }
  });
  return 0;
}
