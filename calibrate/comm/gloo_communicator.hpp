// gloo_communicator.hpp: the Gloo backend of the Communicator interface (communicator.hpp):
// float32 collectives over TCP on the CPUs, the library PyTorch's ProcessGroupGloo uses.
//
//   auto info = ddpsim::comm::rank_from_env().value();
//   auto c = ddpsim::comm::make_gloo(info, std::chrono::seconds(30));
//   c->all_reduce(g.data(), g.data(), g.size());
#pragma once

#include <chrono>
#include <memory>

#include "calibrate/comm/communicator.hpp"
#include "calibrate/comm/rank.hpp"

namespace ddpsim::comm {

/// Gloo over TCP: rendezvous through a FileStore in info.store_dir (must be non-empty),
/// the TCP device bound to info.bind_addr, full mesh. `timeout` bounds the rendezvous and
/// every collective. Sets SIGPIPE to SIG_IGN for the process (as Python does), so that a write to
/// a dead peer is an error, not a fatal signal.
/// Throws ddpsim::Error when the rendezvous fails or times out.
std::unique_ptr<Communicator> make_gloo(const RankInfo& info, std::chrono::milliseconds timeout);

}  // namespace ddpsim::comm
