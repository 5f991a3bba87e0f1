// gemm_plan.hpp: which GEMMs a calibration times.
//
// For a scenario: every distinct GEMM its workload runs (forward, input-gradient and
// weight-gradient GEMMs of every layer, model::Workload) at every micro-batch its sweep points
// use (training.per_gpu_batch, swept or not); shapes that repeat across layers are timed once
// and list all their users in `ops`. Without a scenario: a standard grid of square and
// transformer-like skinny shapes.
//
//   auto plan = gemms_of_scenario(model::load_scenario("mlp.json"));
//   for (const PlannedGemm& g : plan) time_sgemm(g.shape, opts);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/scenario/scenario.hpp"
#include "model/workload/workload.hpp"

namespace ddpsim::calib {

struct PlannedGemm {
  model::GemmShape shape;                    ///< as run at `batch`
  std::optional<model::BatchDim> batch_dim;  ///< none for grid shapes
  std::int64_t batch = 1;
  std::vector<std::string> ops;  ///< workload GEMM names of this shape
  std::string layer;             ///< layer of the first one
  std::string role;              ///< "forward", "input_grad", "weight_grad" (first one)
};

/// Distinct GEMMs of all sweep points, in workload order, batches ascending.
std::vector<PlannedGemm> gemms_of_scenario(const model::Scenario& s);

/// The standard grid (quick: a smaller one; gpu: with 4096^3, and 8192^3 unless quick).
std::vector<PlannedGemm> standard_grid(bool quick, bool gpu = false);

/// "m", "n", "k", "count" or "none".
const char* batch_dim_name(std::optional<model::BatchDim> d);

}  // namespace ddpsim::calib
