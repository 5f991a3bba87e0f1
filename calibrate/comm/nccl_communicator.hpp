// nccl_communicator.hpp: the NCCL backend of the Communicator interface (communicator.hpp):
// float32 collectives on one GPU per rank, device buffers.
//
// Both functions exist in every build: without NCCL (DDPSIM_HAVE_NCCL unset) nccl_built() is
// false and make_nccl throws UnsupportedError saying how to rebuild with it.
//
//   if (ddpsim::comm::nccl_built()) c = ddpsim::comm::make_nccl(info, std::chrono::seconds(30));
#pragma once

#include <chrono>
#include <memory>

#include "calibrate/comm/communicator.hpp"
#include "calibrate/comm/rank.hpp"

namespace ddpsim::comm {

/// NCCL on GPU local_rank % device_count; rank 0 shares the ncclUniqueId through the same
/// FileStore dir. Throws ddpsim::UnsupportedError when built without NCCL or when no CUDA device
/// is usable (the message says which), ddpsim::Error when NCCL fails.
std::unique_ptr<Communicator> make_nccl(const RankInfo& info, std::chrono::milliseconds timeout);

/// True when this build has the NCCL communicator.
bool nccl_built();

}  // namespace ddpsim::comm
