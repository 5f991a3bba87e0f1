// consumer SCENARIO.json: predicts the scenario with the installed library and prints its step
// time as `ddpsim predict --format json` writes it (tests/install compares the two).
#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>

#include "model/scenario.hpp"
#include "simulator/analytic.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer SCENARIO.json\n");
    return 2;
  }
  try {
    const auto p = ddpsim::sim::predict_analytic(ddpsim::model::load_scenario(argv[1]));
    std::printf("step_time_s %s\n", nlohmann::json(p.step_time_s).dump().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
  return 0;
}
