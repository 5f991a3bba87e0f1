#include "calibrate/gemm_plan.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace ddpsim::calib {

const char* batch_dim_name(std::optional<model::BatchDim> d) {
  if (!d) return "none";
  switch (*d) {
    case model::BatchDim::kM:
      return "m";
    case model::BatchDim::kN:
      return "n";
    case model::BatchDim::kK:
      return "k";
    case model::BatchDim::kCount:
      return "count";
  }
  return "none";
}

std::vector<PlannedGemm> gemms_of_scenario(const model::Scenario& s) {
  std::vector<model::Scenario> points = model::expand_sweep(s);
  std::vector<PlannedGemm> plan;
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool, bool, int,
                         std::int64_t>;
  std::map<Key, std::size_t> seen;
  // Batches ascending, so each family's rows come out in batch order.
  std::set<std::pair<std::int64_t, std::size_t>> order;
  for (std::size_t i = 0; i < points.size(); ++i)
    order.insert({points[i].training.per_gpu_batch, i});
  for (const auto& [batch, i] : order) {
    const model::Workload& w = *points[i].workload;
    for (const model::Layer& layer : w.layers) {
      for (const model::Gemm& g : layer.gemms) {
        const model::GemmShape sh = g.at_batch(batch);
        const Key key{
            sh.m, sh.n, sh.k, sh.count, sh.trans_a, sh.trans_b, static_cast<int>(g.batch_dim),
            batch};
        auto it = seen.find(key);
        if (it != seen.end()) {
          auto& ops = plan[it->second].ops;
          if (std::find(ops.begin(), ops.end(), g.name) == ops.end()) ops.push_back(g.name);
          continue;
        }
        seen.emplace(key, plan.size());
        plan.push_back(
            {sh, g.batch_dim, batch, {g.name}, layer.name, model::gemm_role_name(g.role)});
      }
    }
  }
  return plan;
}

std::vector<PlannedGemm> standard_grid(bool quick, bool gpu) {
  std::vector<model::GemmShape> shapes;
  std::vector<std::int64_t> squares = quick ? std::vector<std::int64_t>{128, 512}
                                            : std::vector<std::int64_t>{128, 256, 512, 1024, 2048};
  // A GPU needs large squares to reach its dense peak (8192^3 bf16: ~790 TFLOP/s on an H200,
  // 1.4 ms a call), the reference gpu-criteria judges a scenario's GEMMs against.
  if (gpu) squares.push_back(4096);
  if (gpu && !quick) squares.push_back(8192);
  for (std::int64_t n : squares) shapes.push_back({n, n, n, 1, false, false});
  // nn.Linear forward / dgrad / wgrad of a 1024 -> 4096 layer at 32 rows (transformer-like).
  shapes.push_back({32, 4096, 1024, 1, false, true});
  shapes.push_back({32, 1024, 4096, 1, false, false});
  shapes.push_back({4096, 1024, 32, 1, true, false});
  std::vector<PlannedGemm> plan;
  for (const auto& s : shapes) plan.push_back({s, std::nullopt, 1, {}, "", ""});
  return plan;
}

}  // namespace ddpsim::calib
