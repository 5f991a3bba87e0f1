// torch_costs.hpp: a profile's "torch" section (ddpsim-calibrate --backend torch,
// calibrate/torch/torch_calibrate.py) as the measured costs of a prediction for a PyTorch user:
// the scenario's layers, optimizer and gloo all-reduces timed through PyTorch itself.
//
// The section holds, per calibrated workload (name, untied parameter count, per-GPU batch,
// optimizer), every layer's forward and backward and the optimizer step (opt.step() +
// zero_grad(set_to_none=True), page faults included), and torch's gloo all-reduce per size, one
// at a time ("sync") and two in flight ("pair", per all-reduce). ProcessGroupGloo runs its
// collectives on `threads` worker threads (2 by default: torch/csrc/distributed/c10d/
// ProcessGroupGloo.cpp, ProcessGroupGloo::ProcessGroupGloo starts options->threads workers, each
// running runLoop over the work queue), so DDP's buckets launched while another is in flight
// proceed at once at the measured two-in-flight rate. Each workload may also carry a pass over
// the real DDP job at DistributedDataParallel's defaults ("job", and "job_overlap_off" with the
// all-reduces launched after the backward: the optimizer as it runs there, the buckets'
// communication occupancy and the backward's compute), which says how much slower gloo runs
// inside the job than in the table (torch_job_comm_factor, from the overlap-off pass: nothing
// computed beside it) and how long the job's backward computes (torch_job_backward_factor).
//
//   std::string why;
//   auto m = torch_compute_costs(profile_doc.at("torch"), scenario, "profile.json", &why);
//   // predict once with *m, then per planned bucket (bytes, ready_s):
//   auto rows = torch_all_reduce_rows(profile_doc.at("torch"));
//   m->bucket_collective_s = gloo_bucket_costs(ready, sync, pair);  // sync/pair from rows
//   if (auto job = torch_job_comm_pass(profile_doc.at("torch"), scenario))  // x in-job rate
//     if (auto f = torch_job_comm_factor(*job, rows))
//       for (double& c : m->bucket_collective_s) c *= *f;
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/scenario/scenario.hpp"
#include "simulator/analytic/step_plan.hpp"

namespace ddpsim::sim {

/// One measured all-reduce size: seconds per all-reduce alone and with two in flight.
struct TorchAllReduceRow {
  double bytes = 0, sync_s = 0, pair_s = 0;
};

/// The section's "all_reduce" rows in increasing size.
std::vector<TorchAllReduceRow> torch_all_reduce_rows(const nlohmann::json& torch);

/// The all-reduce time of `bytes` (pair: the two-in-flight rate): linear in size between the two
/// measured sizes around it; below the smallest, the smallest's time; above the largest, the
/// line through the two largest (at least the largest's time). E.g. rows {1 MiB: 3 ms, 2 MiB:
/// 5 ms}: 1.5 MiB -> 4 ms, 4 MiB -> 9 ms, 64 KiB -> 3 ms. Precondition: rows not empty.
double torch_all_reduce_s(const std::vector<TorchAllReduceRow>& rows, double bytes, bool pair);

/// Each bucket's all-reduce time with gloo's worker threads: bucket i runs at its pair rate when
/// its all-reduce, started when it is ready and lasting sync_s[i], overlaps another bucket's
/// [ready_s[j], ready_s[j] + sync_s[j]); else at its sync rate. On one communication stream in
/// launch order the pair costs add up to what two in flight take together (each pair_s is half
/// of that). E.g. ready {0, 0}, sync {10, 10}, pair {7, 7}: {7, 7}; ready {0, 20}: {10, 10}.
std::vector<double> gloo_bucket_costs(const std::vector<double>& ready_s,
                                      const std::vector<double>& sync_s,
                                      const std::vector<double>& pair_s);

/// The section's "contention" (forward + backward beside gloo all-reduces, one in flight): how
/// much slower compute and an all-reduce run while the other runs, each at least 1 (a ratio
/// below 1 is measurement noise). The slowdowns depend on the all-reduce's size (issue 16: at
/// 128 MiB the MLP's backward ran 1.93x slower, which over-predicted its 8-32 MiB buckets'
/// runs): a calibration with "by_size" rows gives them per size, at(bytes) interpolates in
/// log2(size) between the rows around it and keeps the end rows' values beyond them; without
/// rows, the single pair at every size. nullopt without the section.
struct TorchContention {
  struct Row {
    double bytes = 0, compute_slowdown = 1, all_reduce_slowdown = 1;
  };
  double compute_slowdown = 1, all_reduce_slowdown = 1;
  std::vector<Row> by_size;  ///< ascending bytes; may be empty
  /// The two slowdowns at an all-reduce of `bytes`. E.g. rows {1 MiB: 1.2, 1.5; 4 MiB: 1.6, 2.5}:
  /// 2 MiB -> 1.4, 2.0; 512 KiB -> 1.2, 1.5; 64 MiB -> 1.6, 2.5.
  Row at(double bytes) const;
};
std::optional<TorchContention> torch_contention(const nlohmann::json& torch);

/// Each bucket's all-reduce, started at `start_s[i]` and taking `cost_s[i]` alone, when the
/// compute that runs until `compute_end_s` slows it `slowdown` times (processor sharing: while
/// the compute runs it progresses 1/slowdown per second). D = compute_end - start: the cost is
/// cost x slowdown when that fits in D, else D + (cost - D / slowdown); a bucket starting after
/// the compute keeps its cost. E.g. start 0, cost 10, slowdown 2: compute end 30 -> 20, compute
/// end 8 -> 8 + (10 - 4) = 14; start 40 -> 10.
std::vector<double> contended_bucket_costs(const std::vector<double>& start_s,
                                           const std::vector<double>& cost_s, double compute_end_s,
                                           double slowdown);
/// The same with each bucket's own slowdown (the contention at its size).
std::vector<double> contended_bucket_costs(const std::vector<double>& start_s,
                                           const std::vector<double>& cost_s, double compute_end_s,
                                           const std::vector<double>& slowdown);

/// Where a schedule of the buckets puts them: each bucket's start and when the compute ends (all
/// from the start of the step).
struct BucketSchedule {
  std::vector<double> start_s;
  double compute_end_s = 0;
};

/// contended_bucket_costs at its fixed point: the costs whose own schedule gives back the starts
/// they were computed from. `schedule(costs)` places the buckets with those costs (a prediction:
/// on one communication stream a bucket starts when it is ready and the previous one has ended);
/// contended_bucket_costs(schedule(c).start_s, cost_s, schedule(c).compute_end_s, slowdown) is
/// iterated from c = cost_s. Computed once from the uncontended schedule's starts, the costs let
/// a queue of buckets start earlier than the slowed costs would allow, so buckets queued until
/// after the compute keep a slowdown they no longer suffer (issue 16: a deep MLP's seven 4 MiB
/// buckets, predicted 8.8 ms apart after its backward ended, measured 4-5 ms). A bucket's start
/// depends only on the costs before it, so plain iteration settles one bucket per round; after
/// size + 1 rounds (the compute's end can move with the communication) each round moves halfway,
/// up to 4 (size + 1) rounds. E.g. ready {0, 0} on one stream, cost {10, 10}, slowdown 2, compute
/// end 15: once from the uncontended starts {0, 10} -> {17.5, 12.5}; settled (starts {0, 17.5},
/// the second after the compute) -> {17.5, 10}. *rounds (optional) counts the schedules made.
std::vector<double> settled_contended_costs(
    const std::vector<double>& cost_s, const std::vector<double>& slowdown,
    const std::function<BucketSchedule(const std::vector<double>&)>& schedule,
    int* rounds = nullptr);

/// The calibration's pass over the workload as the user's DDP job runs it (the entry's "job":
/// DistributedDataParallel's default bucket_cap_mb 25, overlap on, real gloo all-reduces timed by
/// the runner's comm hook): the buckets' communication occupancy per step (the union of their
/// launch-to-completion spans) and their sizes. (Its optimizer step, whose page faults follow the
/// job's allocation history, is torch_compute_costs's optimizer.)
struct TorchJob {
  double bucket_cap_mb = 25, comm_occupancy_s = 0;
  std::vector<double> bucket_bytes;
};
/// The job pass of scenario `s`'s workload entry that times gloo inside the job with nothing
/// computed beside it: "job_overlap_off" (the all-reduces launched after the backward), whatever
/// the scenario's overlap; "job" (overlap on: its occupancy includes the contention with the
/// backward) for a calibration from before that pass. nullopt when the entry or the pass is absent.
std::optional<TorchJob> torch_job_comm_pass(const nlohmann::json& torch, const model::Scenario& s);

/// The step the calibration's job pass measured, when scenario `s` is that job: the entry's pass
/// for s's overlap setting ("job_overlap_off" or "job"), s at the pass's bucket cap with one
/// micro-batch per step (the pass runs grad_accumulation 1). A sweep point that is the
/// calibration's own job, measured minutes after it: their ratio says how far the machine moved
/// between the calibration and the measurement (issue 16: one calibration ran 15-25% slower
/// than the sweep after it, another's sweep 5% slower everywhere). E.g. a pass with step_s
/// 0.059 at cap 25: a point at cap 25 with the same overlap -> 0.059; at cap 5 -> nullopt.
/// nullopt also without the entry, the pass or its "step_s".
std::optional<double> torch_job_step_s(const nlohmann::json& torch, const model::Scenario& s);

/// How many times slower gloo's all-reduces run inside the job than one at a time alone: the
/// job's occupancy over the sum of the table's one-at-a-time times of its buckets (at least 1:
/// less is the measurement's noise). Applied to every bucket's one-at-a-time time, serially, it
/// reproduces the job's occupancy at the calibrated buckets and carries the slowdown (the cores
/// shared with the backward, gloo's two workers on them, the job's memory state) to other bucket
/// sizes. E.g. buckets {8 MiB, 8 MiB}, rows {8 MiB: sync 6 ms}, occupancy 18 ms: 1.5. nullopt
/// when the job has no buckets or `rows` is empty.
std::optional<double> torch_job_comm_factor(const TorchJob& job,
                                            const std::vector<TorchAllReduceRow>& rows);

/// How many times longer the backward computes inside the workload's DDP job than the layers
/// timed one by one say: the overlap-off job pass's mean backward compute ("backward_s":
/// loss.backward() less the communication it waited for, the all-reduces launched only after
/// it, so nothing ran beside it) over the sum of the entry's layer backwards. Both include the
/// Reducer's copies; what differs is the job's allocation history (issue 16: the gradients,
/// freed by zero_grad(set_to_none=True) every step, are re-faulted in the job as its allocator
/// state decides: a 1024-8192-1024 MLP's backward timed at 59.5 ms beside the layers and 72.1 ms
/// in its job, and 74.6-76.6 ms in the sweep that followed). E.g. layers 10 + 20 ms, job 33 ms:
/// 1.1. nullopt without the pass or its "backward_s" (a calibration from before it), or with a
/// zero sum.
std::optional<double> torch_job_backward_factor(const nlohmann::json& entry);

/// The section's entry for scenario `s` (its workload's name, untied parameters, per-GPU batch
/// and optimizer) as per-layer forward/backward and optimizer costs (every backward times
/// torch_job_backward_factor when the entry has one; the optimizer of the job pass with the
/// scenario's overlap setting, "job_overlap_off" or "job", when the entry has it, else "job",
/// else the one timed beside the layers), `source` naming
/// the profile; nullopt, with the reason in *why, when the section has no such entry or its layers
/// are not the workload's.
std::optional<MeasuredCosts> torch_compute_costs(const nlohmann::json& torch,
                                                 const model::Scenario& s,
                                                 const std::string& source, std::string* why);

}  // namespace ddpsim::sim
