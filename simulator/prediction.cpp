#include "simulator/prediction.hpp"

namespace ddpsim::sim {

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
