// ddpsim_comm_test_rank: the rank program the comm tests start through launch_local.
//
//   MODE=ok                 every rank exits 0
//   MODE=exit  FAIL_RANK=R  rank R exits 3, the others sleep (the launcher must stop them)
//   MODE=kill  FAIL_RANK=R  rank R kills itself with SIGKILL, the others sleep
//   MODE=hang               every rank sleeps (the launcher's timeout must fire)
//   MODE=print              every rank prints "hello from R" (output forwarding)
//   MODE=port               every rank prints "rank R port P" (P: its MASTER_PORT)
//   MODE=collectives OUT=F  quick Gloo sweep of the four ops 8 B..64 KiB, section written to F
//                           by rank 0; half-precision all-reduces checked; exit 1 on wrong values
//   MODE=wrong_result       all-reduce sweep 8 B..4 KiB where the checker's test hook changes
//                           three output elements of rank 1 at 512 B out of place: rank 0
//                           must get wrong = 3 at exactly that row and verify_sweep must throw
//                           naming it; exit 0 when both hold
//   MODE=peer_dies          rank 1 leaves after a barrier (exit 0); rank 0's next
//                           all-reduce must throw (not hang): exit 0 when it did, 1 otherwise
//   MODE=peer_hangs TIMEOUT_MS=T  rank 1 stays silent for 3T; rank 0's all-reduce must time out
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "calibrate/comm/communicator.hpp"
#include "calibrate/comm/gloo_communicator.hpp"
#include "calibrate/comm/rank.hpp"
#include "calibrate/comm/sweep.hpp"
#include "model/atomic_file.hpp"
#include "model/error.hpp"

namespace {

std::string env(const char* k) {
  const char* v = std::getenv(k);
  return v ? v : "";
}

[[noreturn]] void sleep_forever() {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

int check_half(ddpsim::comm::Communicator& c) {
  using ddpsim::comm::HalfType;
  int bad = 0;
  for (HalfType t : {HalfType::kFloat16, HalfType::kBFloat16}) {
    // (rank+1) * 0.5: sums n(n+1)/4 are exact in both formats for small n.
    std::vector<std::uint16_t> v(1000, ddpsim::comm::float_to_half(0.5f * (c.rank() + 1), t));
    c.all_reduce_half(v.data(), v.size(), t);
    const float want = 0.25f * c.size() * (c.size() + 1);
    for (auto h : v) bad += ddpsim::comm::half_to_float(h, t) != want;
  }
  return bad;
}

}  // namespace

int main() {
  const auto me = ddpsim::comm::rank_from_env();
  if (!me) {
    std::fprintf(stderr, "no launcher variables\n");
    return 2;
  }
  const std::string mode = env("MODE");
  const int fail_rank = env("FAIL_RANK").empty() ? -1 : std::atoi(env("FAIL_RANK").c_str());
  if (mode == "ok") return 0;
  if (mode == "print") {
    std::printf("hello from %d\n", me->rank);
    std::fprintf(stderr, "partial line from %d", me->rank);  // no newline: still forwarded
    return 0;
  }
  if (mode == "port") {
    std::printf("rank %d port %s\n", me->rank, env("MASTER_PORT").c_str());
    return 0;
  }
  if (mode == "exit") {
    if (me->rank == fail_rank) return 3;
    sleep_forever();
  }
  if (mode == "kill") {
    if (me->rank == fail_rank) ::kill(::getpid(), SIGKILL);
    sleep_forever();
  }
  if (mode == "hang") sleep_forever();
  try {
    const int timeout_ms = env("TIMEOUT_MS").empty() ? 10000 : std::atoi(env("TIMEOUT_MS").c_str());
    auto comm = ddpsim::comm::make_gloo(*me, std::chrono::milliseconds(timeout_ms));
    if (mode == "collectives") {
      ddpsim::comm::SweepOptions o;
      o.max_bytes = 64 << 10;
      o.step_factor = 8;
      o.warmup = 1;
      o.iters = 2;
      auto section = ddpsim::comm::run_sweep(*comm, o, {});
      const int bad_half = check_half(*comm);
      if (me->rank == 0) ddpsim::model::write_file_atomic(env("OUT"), section.dump(1));
      comm->barrier();
      return bad_half == 0 ? 0 : 1;
    }
    if (mode == "wrong_result") {
      ddpsim::comm::SweepOptions o;
      o.ops = {ddpsim::model::CollectiveOp::kAllReduce};
      o.max_bytes = 4 << 10;
      o.step_factor = 8;
      o.warmup = 1;
      o.iters = 2;
      const int r = me->rank;
      o.corrupt_output_for_test = [r](ddpsim::model::CollectiveOp, std::int64_t bytes,
                                      bool in_place, std::vector<float>& got) {
        if (r == 1 && bytes == 512 && !in_place) {
          for (int i = 0; i < 3; ++i) got[static_cast<std::size_t>(i)] += 1.0f;
        }
      };
      auto section = ddpsim::comm::run_sweep(*comm, o, {});
      if (me->rank != 0) return 0;
      for (const auto& row : section.at("ops").at("all_reduce").at("rows")) {
        const bool target = row.at("size_bytes") == 512 && row.at("in_place") == false;
        if (row.at("wrong").get<int>() != (target ? 3 : 0)) {
          std::fprintf(stderr, "unexpected row %s\n", row.dump().c_str());
          return 1;
        }
      }
      try {
        ddpsim::comm::verify_sweep(section);
      } catch (const ddpsim::Error& e) {
        std::fprintf(stderr, "caught: %s\n", e.what());
        return std::string(e.what()).find("all_reduce 512 B out of place: 3 wrong") !=
                       std::string::npos
                   ? 0
                   : 1;
      }
      std::fprintf(stderr, "verify_sweep accepted wrong results\n");
      return 1;
    }
    if (mode == "peer_hangs") {
      comm->barrier();
      if (me->rank == 1) {
        std::this_thread::sleep_for(std::chrono::milliseconds(3 * timeout_ms));
        return 0;
      }
      std::vector<float> v(1024, 1.0f);
      try {
        comm->all_reduce(v.data(), v.data(), v.size());
      } catch (const ddpsim::Error& e) {
        std::fprintf(stderr, "caught: %s\n", e.what());
        return std::string(e.what()).find("all_reduce") != std::string::npos ? 0 : 1;
      }
      std::fprintf(stderr, "all_reduce with a silent peer did not time out\n");
      return 1;
    }
    if (mode == "peer_dies") {
      comm->barrier();  // both rendezvous are complete
      if (me->rank == 1) return 0;
      std::vector<float> v(1 << 16, 1.0f);
      try {
        for (int i = 0; i < 100; ++i) comm->all_reduce(v.data(), v.data(), v.size());
      } catch (const ddpsim::Error& e) {
        std::fprintf(stderr, "caught: %s\n", e.what());
        return std::string(e.what()).find("all_reduce") != std::string::npos ? 0 : 1;
      }
      std::fprintf(stderr, "all_reduce with a dead peer did not fail\n");
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "unknown MODE '%s'\n", mode.c_str());
  return 2;
}
