// results.hpp: what `ddpsim exec` writes from the ranks' records (executor.hpp's RankRecord):
// the results document in `ddpsim predict`'s vocabulary, its "noise_scale" block, and a Chrome
// trace. Ranks send their record to rank 0 as rank_record_json text; rank 0 builds the rest.
//
// The results document holds one result: the run's configuration; step_time_s, forward_time_s,
// backward_time_s, optimizer_time_s, comm_time_s and exposed_comm_s as medians over the measured
// steps (warm-up steps left out); throughput; the buckets of the measured step whose time is
// closest to the median; the loss at the first and last step; every step's row with each rank's
// step time; and noise_scale (README.md).
//
//   std::vector<nlohmann::json> ranks = {rank_record_json(rec0), rank_record_json(rec1)};
//   nlohmann::json doc = results_json(cfg, ranks, context);
//   std::string trace = chrome_trace_text(ranks, {{"scenario", cfg.scenario_file}});
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibrate/exec/executor.hpp"

namespace ddpsim::exec {

/// One rank's record as JSON: {"rank", "steps": [...], "spans": [[stream, step, name, layer,
/// bytes, start_ns, end_ns], ...]}.
nlohmann::json rank_record_json(const RankRecord& r);
/// The results document from every rank's record (index = rank), `context` added as is.
nlohmann::json results_json(const ExecConfig& c, const std::vector<nlohmann::json>& ranks,
                            const nlohmann::json& context);
/// The results' "noise_scale" block (README.md) from rank 0's step records (rank_record_json's
/// "steps"): per step the squared norms, the raw estimates and their EMAs; B_simple in samples.
nlohmann::json noise_scale_json(const ExecConfig& c, const nlohmann::json& steps);
/// The measured spans as a Chrome trace (model/chrome_trace.hpp's layout, the simulator's),
/// time 0 = rank 0's first step.
std::string chrome_trace_text(const std::vector<nlohmann::json>& ranks,
                              const nlohmann::json& metadata);

/// The median of `v` (the mean of the middle two for an even count; 0 when empty).
double median(std::vector<double> v);

}  // namespace ddpsim::exec
