// collective_op.hpp: the collectives ddpsim speaks of, one vocabulary for the whole project: the
// cost model (simulator/collectives/collective.hpp), the planned communications of a step
// (simulator/prediction/prediction.hpp's BucketTiming::kind), calibration profiles
// (model/profile/profile.hpp), nccl-tests imports and the calibration sweeps (calibrate/comm).
// Names and bus-bandwidth factors are nccl-tests' (its PERFORMANCE.md: busbw = algbw x factor, the
// bytes the busiest link moves per byte of the collective).
//
//   double bus = algbw * model::busbw_factor(CollectiveOp::kAllReduce, 8);   // x 1.75
//   std::optional<CollectiveOp> op = model::parse_collective_op("all_gather");
#pragma once

#include <optional>
#include <string>

namespace ddpsim::model {

/// kReduce is DeepSpeed ZeRO-1/2's per-owner dist.reduce of a bucket slice: planned and costed
/// (as the mirror image of a ring Broadcast), never measured by a profile or a sweep.
enum class CollectiveOp { kAllReduce, kReduceScatter, kAllGather, kBroadcast, kReduce };

/// How a reducing collective combines its inputs, as NCCL receives it (ncclRedOp_t and the
/// datatype): it decides which algorithms NCCL may run. NCCL runs ncclAvg on a floating-point
/// type as PreMulSum (src/enqueue.cc hostToDevRedOp, 2.30.7 :2479, its ncclAvg case :2526) and
/// ncclMax as MinMax;
/// NVLS and NVLS_TREE reduce only Sum, and MinMax on 16-bit and integer types (src/include/
/// device.h ncclNvlsSupported :587-601, checked at enqueue.cc:425-426 and 2004-2007), and PAT
/// does not run a reduce-scatter that scales (enqueue.cc:2009-2012). For an all-gather or a
/// broadcast the reduction is moot.
enum class Reduction {
  kSum,         ///< ncclSum: DDP's buckets (divided before), FSDP1, DeepSpeed
  kAverage,     ///< ncclAvg on fp32 / bf16: FSDP2's reduce-scatter and HSDP all-reduce
  kMaxFloat32,  ///< ncclMax on fp32: float8's amax all-reduce (torchao reduce_amax)
};

/// The ops a calibration profile measures, a sweep runs and an nccl-tests log imports.
inline constexpr CollectiveOp kMeasuredOps[] = {CollectiveOp::kAllReduce,
                                                CollectiveOp::kReduceScatter,
                                                CollectiveOp::kAllGather, CollectiveOp::kBroadcast};

/// "all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce" (nccl-tests' names
/// without "_perf"; the profile's op keys).
const char* collective_op_name(CollectiveOp op);

/// The measured op of that name (kMeasuredOps), or nullopt ("reduce" included: no profile
/// measures it).
std::optional<CollectiveOp> parse_collective_op(const std::string& name);

/// nccl-tests' bus-bandwidth factor for n ranks: all-reduce 2(n-1)/n, reduce-scatter and
/// all-gather (n-1)/n, broadcast and reduce 1.
double busbw_factor(CollectiveOp op, int n);

/// Latency steps of the ring algorithm over n ranks: 2(n-1) for all-reduce, n-1 otherwise.
double ring_steps(CollectiveOp op, int n);

}  // namespace ddpsim::model
