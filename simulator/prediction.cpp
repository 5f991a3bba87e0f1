#include "simulator/prediction.hpp"

namespace ddpsim::sim {

const char* comm_kind_name(CommKind k) {
  switch (k) {
    case CommKind::kAllReduce:
      return "all_reduce";
    case CommKind::kReduceScatter:
      return "reduce_scatter";
    case CommKind::kAllGather:
      return "all_gather";
    case CommKind::kReduce:
      return "reduce";
  }
  return "?";
}

const char* comm_phase_name(CommPhase p) {
  switch (p) {
    case CommPhase::kForward:
      return "forward";
    case CommPhase::kBackward:
      return "backward";
    case CommPhase::kOptimizer:
      return "optimizer";
  }
  return "?";
}

}  // namespace ddpsim::sim
