// reducer.hpp: PyTorch DDP's gradient reducer for the executor's flat-parameter networks
// (network.hpp: the MLP and the GPT-2 block stack).
//
// Buckets come from model::assign_buckets (the project's one copy of PyTorch's rules: reverse
// order, bucket_cap_mb, the 1 MiB first bucket when the cap is defaulted, one bucket in the first
// iteration). As autograd finishes a layer, its gradients are copied into their buckets'
// buffers already divided by the world size (PyTorch divides before the sum); a bucket whose
// last gradient arrived is handed to the communication thread when every earlier bucket has
// been (buckets are launched in order). The communication thread all-reduces it (fp32, or cast
// to fp16/bf16, reduced in half and cast back, like the fp16/bf16_compress_hook) and records
// ready/start/end times. With overlap=false the buckets are all launched after backward.
// finalize() is PyTorch's Reducer::finalize_backward: on the calling (compute) thread, bucket by
// bucket in launch order, it waits for the bucket's all-reduce and copies the result back into
// the gradients (copy_bucket_to_grad); it rethrows a communication error (a dead peer, a
// timeout) on the calling thread.
//
//   Reducer red(comm, net, plan, Hook::kNone, /*overlap=*/true);
//   red.prepare(step_t0);
//   net.backward(false, [&](int l) { red.layer_ready(l); });
//   red.finalize();   // gradients now hold the average over ranks
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "calibrate/comm/communicator.hpp"
#include "calibrate/exec/network.hpp"
#include "model/workload/bucketing.hpp"

namespace ddpsim::exec {

using Clock = std::chrono::steady_clock;

enum class Hook { kNone, kFp16, kBf16 };

/// What finalize() spent: waiting for all-reduces, and copying buckets back into the gradients.
struct Finalized {
  Clock::duration wait{0};
  Clock::duration copy{0};
};

struct BucketTimes {
  std::int64_t bytes = 0;  ///< bytes on the wire (halved by a 16-bit hook)
  Clock::time_point ready, start, end;
};

class Reducer {
 public:
  Reducer(comm::Communicator& comm, Network& net, Hook hook, bool overlap);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  /// Installs a bucket assignment (tensor indices are the network's, tied tensors in no
  /// bucket). Not during backward.
  void set_plan(const model::BucketPlan& plan);
  int bucket_count() const { return static_cast<int>(buckets_.size()); }

  /// Starts a synchronising backward: every gradient is expected once.
  void prepare();
  /// Layer `layer`'s gradients are final (called from the backward callback).
  void layer_ready(int layer);
  /// Launches what is left (all buckets when overlap is off); then per bucket in launch order
  /// waits for its all-reduce and copies it back into the gradients. Returns the time spent
  /// waiting and copying. Rethrows the communication thread's error.
  Finalized finalize();
  /// Per-bucket times of the last synchronised backward, in launch order.
  const std::vector<BucketTimes>& times() const { return times_; }

 private:
  struct BucketState {
    std::vector<int> tensors;
    std::vector<std::int64_t> offsets;  // of each tensor inside the bucket buffer
    std::vector<float> buffer;
    std::vector<std::uint16_t> half;
    int pending = 0;
    bool reduced = false;  // under mu_: the communication thread has all-reduced it
  };
  void launch_ready_in_order();
  void enqueue(int b);
  void comm_loop();
  void reduce(int b);

  comm::Communicator& comm_;
  Network& net_;
  Hook hook_;
  bool overlap_;
  std::vector<BucketState> buckets_;
  std::vector<int> bucket_of_tensor_;
  std::vector<BucketTimes> times_;
  int next_launch_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<int> queue_;
  int done_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace ddpsim::exec
