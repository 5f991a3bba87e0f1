#include "model/collective_op.hpp"

#include "model/error.hpp"

namespace ddpsim::model {

const char* collective_op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return "all_reduce";
    case CollectiveOp::kReduceScatter:
      return "reduce_scatter";
    case CollectiveOp::kAllGather:
      return "all_gather";
    case CollectiveOp::kBroadcast:
      return "broadcast";
    case CollectiveOp::kReduce:
      return "reduce";
  }
  DDPSIM_ASSERT(false, "unknown collective op");
}

std::optional<CollectiveOp> parse_collective_op(const std::string& name) {
  for (CollectiveOp op : kMeasuredOps) {
    if (name == collective_op_name(op)) return op;
  }
  return std::nullopt;
}

double busbw_factor(CollectiveOp op, int n) {
  const double nd = n;
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2.0 * (nd - 1) / nd;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
      return (nd - 1) / nd;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
      return 1.0;
  }
  DDPSIM_ASSERT(false, "unknown collective op");
}

double ring_steps(CollectiveOp op, int n) {
  return op == CollectiveOp::kAllReduce ? 2.0 * (n - 1) : static_cast<double>(n - 1);
}

}  // namespace ddpsim::model
