// torch_costs: the torch calibration's all-reduce table, gloo's two worker threads and the
// workload match, with hand-computed values.
#include "simulator/measured/torch_costs.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/scenario/scenario.hpp"

namespace ddpsim::sim {
namespace {

using nlohmann::json;

constexpr double kMiB = 1024.0 * 1024.0;

std::vector<TorchAllReduceRow> rows() {
  // Out of order on purpose: torch_all_reduce_rows sorts; here the test builds them sorted.
  return {{1 * kMiB, 3e-3, 2e-3}, {2 * kMiB, 5e-3, 3e-3}, {4 * kMiB, 9e-3, 6e-3}};
}

TEST(TorchCosts, AllReduceInterpolatesLinearlyInSize) {
  // 1.5 MiB: halfway between 3 and 5 ms; pair: halfway between 2 and 3 ms.
  EXPECT_DOUBLE_EQ(torch_all_reduce_s(rows(), 1.5 * kMiB, false), 4e-3);
  EXPECT_DOUBLE_EQ(torch_all_reduce_s(rows(), 1.5 * kMiB, true), 2.5e-3);
  // 3 MiB: halfway between 5 and 9 ms.
  EXPECT_DOUBLE_EQ(torch_all_reduce_s(rows(), 3 * kMiB, false), 7e-3);
  // Below the smallest size: the smallest's time.
  EXPECT_DOUBLE_EQ(torch_all_reduce_s(rows(), 64 * 1024.0, false), 3e-3);
  // Above the largest: the line through the two largest, 9 + (9 - 5) / 2 MiB * 4 MiB = 17 ms.
  EXPECT_DOUBLE_EQ(torch_all_reduce_s(rows(), 8 * kMiB, false), 17e-3);
}

TEST(TorchCosts, AllReduceNeverExtrapolatesBelowTheLargestMeasured) {
  // A falling last segment (noise): 4 MiB -> 10 ms, 8 MiB -> 8 ms; 16 MiB would be 4 ms on the
  // line, but is at least the 8 MiB time.
  std::vector<TorchAllReduceRow> r = {{4 * kMiB, 10e-3, 10e-3}, {8 * kMiB, 8e-3, 8e-3}};
  EXPECT_DOUBLE_EQ(torch_all_reduce_s(r, 16 * kMiB, false), 8e-3);
}

TEST(TorchCosts, RowsAreSortedBySize) {
  const json t = {{"all_reduce",
                   {{{"size_bytes", 2048}, {"sync_s", 2.0}, {"pair_s", 1.5}},
                    {{"size_bytes", 1024}, {"sync_s", 1.0}, {"pair_s", 0.5}}}}};
  const std::vector<TorchAllReduceRow> r = torch_all_reduce_rows(t);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].bytes, 1024);
  EXPECT_EQ(r[1].pair_s, 1.5);
}

TEST(TorchCosts, GlooThreadsRunOverlappingBucketsAtThePairRate) {
  // Two buckets ready together (overlap off): both at the pair rate, 7 + 7 = 14 ms on one
  // stream, the measured time of two in flight.
  EXPECT_EQ(gloo_bucket_costs({0, 0}, {10, 10}, {7, 7}), (std::vector<double>{7, 7}));
  // The second is ready at 20, after the first's 10 ms: each alone.
  EXPECT_EQ(gloo_bucket_costs({0, 20}, {10, 10}, {7, 7}), (std::vector<double>{10, 10}));
  // Three buckets: 0 [0, 10) overlaps 1 [5, 8); 2 [30, 31) overlaps none.
  EXPECT_EQ(gloo_bucket_costs({0, 5, 30}, {10, 3, 1}, {6, 2, 0.5}), (std::vector<double>{6, 2, 1}));
  // Touching intervals do not overlap: [0, 10) and [10, 20).
  EXPECT_EQ(gloo_bucket_costs({0, 10}, {10, 10}, {7, 7}), (std::vector<double>{10, 10}));
}

json mlp_scenario() {
  return json::parse(R"({
    "model": {"mlp": {"widths": [64, 128, 32]}},
    "hardware": {"preset": "dgx-a100"},
    "cluster": {"gpus": 2},
    "training": {"per_gpu_batch": 8, "precision": "fp32", "optimizer": "adam"}
  })");
}

json section(std::int64_t params, std::int64_t batch, const std::string& opt) {
  return {{"workloads",
           {{{"workload", "mlp"},
             {"parameters", params},
             {"per_gpu_batch", batch},
             {"optimizer", opt},
             {"optimizer_s", 0.25},
             {"layers",
              {{{"name", "fc0"}, {"forward_s", 0.001}, {"backward_s", 0.002}},
               {{"name", "fc1"}, {"forward_s", 0.003}, {"backward_s", 0.004}}}}}}}};
}

TEST(TorchCosts, ComputeCostsMatchWorkloadBatchAndOptimizer) {
  const model::Scenario s = model::parse_scenario(mlp_scenario(), "s.json");
  // 64*128 + 128 + 128*32 + 32 = 12448 parameters.
  std::string why;
  const auto m = torch_compute_costs(section(12448, 8, "adam"), s, "p.json", &why);
  ASSERT_TRUE(m.has_value()) << why;
  EXPECT_EQ(m->layer_fwd_s, (std::vector<double>{0.001, 0.003}));
  EXPECT_EQ(m->layer_bwd_s, (std::vector<double>{0.002, 0.004}));
  EXPECT_EQ(*m->optimizer_s, 0.25);
  EXPECT_EQ(m->source, "torch calibration p.json");
  EXPECT_TRUE(m->bucket_collective_s.empty());
  // Another batch, optimizer or size is not this scenario's.
  for (const json& other :
       {section(12448, 16, "adam"), section(12448, 8, "sgd"), section(12449, 8, "adam")}) {
    EXPECT_FALSE(torch_compute_costs(other, s, "p.json", &why).has_value());
    EXPECT_NE(why.find("p.json: /torch has no entry for workload mlp (12448 parameters)"),
              std::string::npos)
        << why;
  }
}

TEST(TorchCosts, ComputeCostsRefuseOtherLayers) {
  const model::Scenario s = model::parse_scenario(mlp_scenario(), "s.json");
  json t = section(12448, 8, "adam");
  t["workloads"][0]["layers"][1]["name"] = "head";
  std::string why;
  EXPECT_FALSE(torch_compute_costs(t, s, "p.json", &why).has_value());
  EXPECT_EQ(why, "p.json: /torch: layer 1 is head, the workload's fc1");
}

TEST(TorchCosts, JobPassGivesTheOptimizerAndTheCommFactor) {
  const model::Scenario s = model::parse_scenario(mlp_scenario(), "s.json");
  json t = section(12448, 8, "adam");
  t["workloads"][0]["job"] = {{"bucket_cap_mb", 25},
                              {"overlap", true},
                              {"optimizer_s", 0.4},
                              {"comm_occupancy_s", 0.018},
                              {"bucket_bytes", {2 * kMiB, 4 * kMiB}}};
  std::string why;
  // The optimizer as it ran inside the job replaces the one timed beside the layers (0.25 s).
  const auto m = torch_compute_costs(t, s, "p.json", &why);
  ASSERT_TRUE(m.has_value()) << why;
  EXPECT_EQ(*m->optimizer_s, 0.4);
  const std::optional<TorchJob> job = torch_job_comm_pass(t, s);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->bucket_cap_mb, 25);
  EXPECT_EQ(job->bucket_bytes, (std::vector<double>{2 * kMiB, 4 * kMiB}));
  // Alone the two buckets take 5 + 9 = 14 ms (rows()); the job's occupancy 18 ms: 18 / 14.
  EXPECT_DOUBLE_EQ(*torch_job_comm_factor(*job, rows()), 18.0 / 14.0);
  // Faster than alone is noise: at least 1 (7 ms of occupancy for 14 ms alone).
  TorchJob fast = *job;
  fast.comm_occupancy_s = 0.007;
  EXPECT_DOUBLE_EQ(*torch_job_comm_factor(fast, rows()), 1.0);
  // No buckets (one rank) or no table: no factor.
  TorchJob none = *job;
  none.bucket_bytes.clear();
  EXPECT_FALSE(torch_job_comm_factor(none, rows()).has_value());
  EXPECT_FALSE(torch_job_comm_factor(*job, {}).has_value());
  // The communication factor comes from the pass that launched the all-reduces after the
  // backward (gloo in the job with nothing beside it; the contention is added by the model) for
  // either overlap setting; a scenario with overlap off takes that pass's optimizer too. Without
  // that pass, the overlap-on one.
  json off = t;
  off["workloads"][0]["job_overlap_off"] = {{"bucket_cap_mb", 25},
                                            {"overlap", false},
                                            {"optimizer_s", 0.5},
                                            {"comm_occupancy_s", 0.012},
                                            {"bucket_bytes", {2 * kMiB, 4 * kMiB}}};
  json sdoc = mlp_scenario();
  sdoc["parallelism"]["overlap"] = false;
  const model::Scenario s_off = model::parse_scenario(sdoc, "s.json");
  EXPECT_EQ(torch_job_comm_pass(off, s_off)->comm_occupancy_s, 0.012);
  EXPECT_EQ(*torch_compute_costs(off, s_off, "p.json", &why)->optimizer_s, 0.5);
  EXPECT_EQ(torch_job_comm_pass(off, s)->comm_occupancy_s, 0.012);  // overlap on: the same pass
  EXPECT_EQ(*torch_compute_costs(off, s, "p.json", &why)->optimizer_s, 0.4);  // its own optimizer
  EXPECT_EQ(torch_job_comm_pass(t, s_off)->comm_occupancy_s, 0.018);
  EXPECT_EQ(torch_job_comm_pass(t, s)->comm_occupancy_s, 0.018);
  // An entry without the pass has no job (and keeps its own optimizer).
  EXPECT_FALSE(torch_job_comm_pass(section(12448, 8, "adam"), s).has_value());
  EXPECT_FALSE(torch_job_comm_pass(section(12448, 16, "adam"), s).has_value());
}

// The backward as the job computes it: the overlap-off job pass's backward over the layers' sum
// scales every layer's backward.
TEST(TorchCosts, JobPassScalesTheBackwardToTheJobs) {
  const model::Scenario s = model::parse_scenario(mlp_scenario(), "s.json");
  json t = section(12448, 8, "adam");
  json& e = t["workloads"][0];
  double layers = 0;
  std::vector<double> bwd;
  for (const json& l : e.at("layers")) {
    bwd.push_back(l.at("backward_s").get<double>());
    layers += bwd.back();
  }
  // Without the pass (or its backward_s) the layers stay as timed.
  EXPECT_FALSE(torch_job_backward_factor(e).has_value());
  e["job_overlap_off"] = {
      {"bucket_cap_mb", 25}, {"comm_occupancy_s", 0.01}, {"bucket_bytes", json::array({2 * kMiB})}};
  EXPECT_FALSE(torch_job_backward_factor(e).has_value());
  // The job's backward 1.1 times the layers' sum: every layer's backward 1.1 times its own.
  e["job_overlap_off"]["backward_s"] = 1.1 * layers;
  EXPECT_DOUBLE_EQ(*torch_job_backward_factor(e), 1.1);
  std::string why;
  const auto m = torch_compute_costs(t, s, "p.json", &why);
  ASSERT_TRUE(m.has_value()) << why;
  ASSERT_EQ(m->layer_bwd_s.size(), bwd.size());
  for (std::size_t i = 0; i < bwd.size(); ++i) EXPECT_DOUBLE_EQ(m->layer_bwd_s[i], 1.1 * bwd[i]);
  EXPECT_NE(m->source.find("backward x1.100"), std::string::npos) << m->source;
  // A faster job scales down too (0.9), and a zero sum gives no factor.
  e["job_overlap_off"]["backward_s"] = 0.9 * layers;
  EXPECT_DOUBLE_EQ(*torch_job_backward_factor(e), 0.9);
  for (json& l : e["layers"]) l["backward_s"] = 0.0;
  EXPECT_FALSE(torch_job_backward_factor(e).has_value());
}

// The calibration's own job among the sweep's points (issue 16: the machine's drift between the
// calibration and the measurement): the pass for the point's overlap, only at the pass's cap and
// one micro-batch.
TEST(TorchCosts, TheCalibrationsJobStepIsKnownAtItsOwnSettings) {
  json doc = mlp_scenario();
  doc["parallelism"]["bucket_cap_mb"] = 25;
  doc["training"]["grad_accumulation"] = 1;
  const model::Scenario on = model::parse_scenario(doc, "s.json");
  json t = section(12448, 8, "adam");
  EXPECT_FALSE(torch_job_step_s(t, on).has_value());  // no pass
  t["workloads"][0]["job"] = {{"bucket_cap_mb", 25}, {"step_s", 0.059}};
  t["workloads"][0]["job_overlap_off"] = {{"bucket_cap_mb", 25}, {"step_s", 0.061}};
  EXPECT_EQ(torch_job_step_s(t, on), 0.059);
  doc["parallelism"]["overlap"] = false;
  EXPECT_EQ(torch_job_step_s(t, model::parse_scenario(doc, "s.json")), 0.061);
  doc["parallelism"]["bucket_cap_mb"] = 5;
  EXPECT_FALSE(torch_job_step_s(t, model::parse_scenario(doc, "s.json")).has_value());
  doc["parallelism"]["bucket_cap_mb"] = 25;
  doc["training"]["grad_accumulation"] = 2;
  EXPECT_FALSE(torch_job_step_s(t, model::parse_scenario(doc, "s.json")).has_value());
  t["workloads"][0]["job"].erase("step_s");  // a pass without its step
  EXPECT_FALSE(torch_job_step_s(t, on).has_value());
}

// Processor sharing while the backward runs (issue 16): an all-reduce of cost W started at s,
// slowed k times until the compute ends at E (D = E - s): W k when W k <= D, else D + (W - D / k).
TEST(TorchCosts, ContentionSlowsTheBucketsThatOverlapTheCompute) {
  // Starts at 0, W = 10, k = 2: E = 30 holds all of it (20); E = 8: 8 + (10 - 8 / 2) = 14;
  // a bucket starting at 40 is after the compute (10); one starting at 25: D = 5, W k = 20 > 5,
  // so 5 + (10 - 2.5) = 12.5.
  EXPECT_EQ(contended_bucket_costs({0, 40, 25}, {10, 10, 10}, 30, 2),
            (std::vector<double>{20, 10, 12.5}));
  EXPECT_EQ(contended_bucket_costs({0}, {10}, 8, 2), (std::vector<double>{14}));
  // No slowdown (k <= 1) changes nothing.
  EXPECT_EQ(contended_bucket_costs({0, 1}, {3, 4}, 30, 1), (std::vector<double>{3, 4}));
}

TEST(TorchCosts, ContentionIsReadFromTheSection) {
  EXPECT_FALSE(torch_contention(json::object()).has_value());
  const json t = {{"contention", {{"compute_slowdown", 1.8}, {"all_reduce_slowdown", 2.5}}}};
  const std::optional<TorchContention> c = torch_contention(t);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->compute_slowdown, 1.8);
  EXPECT_EQ(c->all_reduce_slowdown, 2.5);
  // A ratio below 1 (noise: sharing cores does not speed anything up) is no slowdown.
  const json fast = {{"contention", {{"compute_slowdown", 0.97}, {"all_reduce_slowdown", 0.9}}}};
  EXPECT_EQ(torch_contention(fast)->compute_slowdown, 1.0);
  EXPECT_EQ(torch_contention(fast)->all_reduce_slowdown, 1.0);
}

TEST(TorchCosts, ContentionBySizeInterpolatesInLogSize) {
  // Rows at 1 MiB (1.2, 1.5) and 4 MiB (1.6, 2.5): 2 MiB is halfway in log2 size -> 1.4, 2.0;
  // below the first row and above the last the end rows hold; a row's ratio below 1 is 1.
  const json t = {
      {"contention",
       {{"compute_slowdown", 1.9},
        {"all_reduce_slowdown", 2.9},
        {"by_size",
         {{{"size_bytes", 4 << 20}, {"compute_slowdown", 1.6}, {"all_reduce_slowdown", 2.5}},
          {{"size_bytes", 1 << 20}, {"compute_slowdown", 1.2}, {"all_reduce_slowdown", 0.8}}}}}}};
  const std::optional<TorchContention> c = torch_contention(t);
  ASSERT_TRUE(c);
  ASSERT_EQ(c->by_size.size(), 2u);
  EXPECT_EQ(c->by_size[0].bytes, 1 << 20);  // sorted
  const TorchContention::Row mid = c->at(2 << 20);
  EXPECT_NEAR(mid.compute_slowdown, 1.4, 1e-12);
  EXPECT_NEAR(mid.all_reduce_slowdown, 1.75, 1e-12);  // 1.0 (clamped 0.8) to 2.5
  EXPECT_EQ(c->at(512 << 10).compute_slowdown, 1.2);
  EXPECT_EQ(c->at(64 << 20).all_reduce_slowdown, 2.5);
  // Without rows: the single pair everywhere.
  const TorchContention one = *torch_contention(
      {{"contention", {{"compute_slowdown", 1.9}, {"all_reduce_slowdown", 2.9}}}});
  EXPECT_EQ(one.at(1 << 10).compute_slowdown, 1.9);
  EXPECT_EQ(one.at(1 << 30).all_reduce_slowdown, 2.9);
}

TEST(TorchCosts, ContendedBucketCostsPerBucketSlowdown) {
  // Compute ends at 30; bucket 0 from 0 costs 10 at slowdown 2 -> 20 (fits); bucket 1 from 25
  // costs 10 at slowdown 3: 5 s of compute left move it 5/3, the rest runs alone: 5 + (10 - 5/3)
  // = 13.333; bucket 2 slowdown 1 keeps 10.
  const std::vector<double> out =
      contended_bucket_costs({0, 25, 0}, {10, 10, 10}, 30, std::vector<double>{2, 3, 1});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_DOUBLE_EQ(out[0], 20);
  EXPECT_NEAR(out[1], 5 + (10 - 5.0 / 3), 1e-12);
  EXPECT_DOUBLE_EQ(out[2], 10);
}

// The contended costs at their fixed point (issue 16): one stream, buckets ready at 0 and 0, each
// costing 10 alone, slowed 2x until the compute ends at 15. Once from the uncontended starts
// {0, 10}: bucket 0 fills D = 15 at half speed, 15 + (10 - 7.5) = 17.5; bucket 1 from 10 has D = 5:
// 5 + (10 - 2.5) = 12.5. But with bucket 0 at 17.5 bucket 1 starts at 17.5, after the compute:
// 10. The settled costs are {17.5, 10} (three schedules: {0, 10}, {0, 17.5}, {0, 17.5}).
TEST(TorchCosts, ContendedCostsSettleWhereTheirOwnScheduleStartsThem) {
  const auto one_stream = [](const std::vector<double>& c) {
    BucketSchedule s;
    s.compute_end_s = 15;
    double free = 0;
    for (double x : c) {
      s.start_s.push_back(free);
      free += x;
    }
    return s;
  };
  EXPECT_EQ(contended_bucket_costs(one_stream({10, 10}).start_s, {10, 10}, 15, 2),
            (std::vector<double>{17.5, 12.5}));
  int rounds = 0;
  EXPECT_EQ(settled_contended_costs({10, 10}, {2, 2}, one_stream, &rounds),
            (std::vector<double>{17.5, 10}));
  EXPECT_EQ(rounds, 3);
  // A schedule that never settles (the compute's end moving with the costs) stops after
  // 4 (size + 1) rounds, the last rounds moving halfway: compute end 15 + 10 x (first cost > 15).
  const auto moving = [](const std::vector<double>& c) {
    BucketSchedule s;
    s.start_s = {0};
    s.compute_end_s = c[0] > 15 ? 5 : 30;
    return s;
  };
  const std::vector<double> out = settled_contended_costs({10}, {2}, moving, &rounds);
  EXPECT_EQ(rounds, 8);
  EXPECT_GT(out[0], 10);
  EXPECT_LT(out[0], 20);
}

}  // namespace
}  // namespace ddpsim::sim
