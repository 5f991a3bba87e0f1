// consumer SCENARIO.json: predicts the scenario with the installed library's run API (the one
// every ddpsim front-end calls) and prints the first point's step time as `ddpsim predict
// --format json` writes it (tests/install compares the two).
#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>

#include "model/scenario/scenario.hpp"
#include "simulator/run.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer SCENARIO.json\n");
    return 2;
  }
  try {
    const ddpsim::model::Scenario s = ddpsim::model::load_scenario(argv[1]);
    const ddpsim::sim::Run r = ddpsim::sim::predict(s);
    const nlohmann::json doc = ddpsim::sim::run_json(s, r);
    std::printf("step_time_s %s\n", doc.at("results").at(0).at("step_time_s").dump().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
  return 0;
}
