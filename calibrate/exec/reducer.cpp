#include "calibrate/exec/reducer.hpp"

#include <algorithm>

#include "model/error.hpp"

namespace ddpsim::exec {

Reducer::Reducer(comm::Communicator& comm, Network& net, Hook hook, bool overlap)
    : comm_(comm), net_(net), hook_(hook), overlap_(overlap) {
  thread_ = std::thread([this] { comm_loop(); });
}

Reducer::~Reducer() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Reducer::set_plan(const model::BucketPlan& plan) {
  buckets_.clear();
  bucket_of_tensor_.assign(static_cast<std::size_t>(net_.tensor_count()), -1);
  for (const auto& b : plan.buckets) {
    BucketState s;
    std::int64_t off = 0;
    for (int t : b.tensors) {
      DDPSIM_ASSERT(t >= 0 && t < net_.tensor_count(), "bucket tensor outside the network");
      bucket_of_tensor_[static_cast<std::size_t>(t)] = static_cast<int>(buckets_.size());
      s.tensors.push_back(t);
      s.offsets.push_back(off);
      off += net_.numel(t);
    }
    DDPSIM_ASSERT(off == b.elements, "bucket plan and network disagree on tensor sizes");
    s.buffer.assign(static_cast<std::size_t>(off), 0.0f);
    if (hook_ != Hook::kNone) s.half.assign(static_cast<std::size_t>(off), 0);
    buckets_.push_back(std::move(s));
  }
  for (int t = 0; t < net_.tensor_count(); ++t) {
    DDPSIM_ASSERT(net_.tied(t) || bucket_of_tensor_[static_cast<std::size_t>(t)] >= 0,
                  "a gradient in no bucket");
  }
  times_.assign(buckets_.size(), {});
}

void Reducer::prepare() {
  std::lock_guard lk(mu_);
  DDPSIM_ASSERT(queue_.empty(), "prepare() while buckets are in flight");
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    buckets_[b].pending = static_cast<int>(buckets_[b].tensors.size());
    buckets_[b].reduced = false;
    const std::int64_t elem_bytes = hook_ == Hook::kNone ? 4 : 2;
    times_[b] = {static_cast<std::int64_t>(buckets_[b].buffer.size()) * elem_bytes, {}, {}, {}};
  }
  next_launch_ = 0;
  done_ = 0;
}

void Reducer::layer_ready(int layer) {
  const float scale = 1.0f / static_cast<float>(comm_.size());
  const auto& g = net_.grads();
  bool any_complete = false;
  for (int t : net_.grads_final_after(layer)) {
    const int b = bucket_of_tensor_[static_cast<std::size_t>(t)];
    BucketState& s = buckets_[static_cast<std::size_t>(b)];
    const auto pos = std::find(s.tensors.begin(), s.tensors.end(), t) - s.tensors.begin();
    const float* src = g.data() + net_.offset(t);
    float* dst = s.buffer.data() + s.offsets[static_cast<std::size_t>(pos)];
    for (std::int64_t i = 0; i < net_.numel(t); ++i) dst[i] = src[i] * scale;
    DDPSIM_ASSERT(s.pending > 0, "a gradient marked ready twice");
    if (--s.pending == 0) {
      times_[static_cast<std::size_t>(b)].ready = Clock::now();
      any_complete = true;
    }
  }
  if (any_complete && overlap_) launch_ready_in_order();
}

void Reducer::launch_ready_in_order() {
  while (next_launch_ < bucket_count() &&
         buckets_[static_cast<std::size_t>(next_launch_)].pending == 0) {
    enqueue(next_launch_++);
  }
}

void Reducer::enqueue(int b) {
  {
    std::lock_guard lk(mu_);
    queue_.push_back(b);
  }
  cv_.notify_all();
}

Finalized Reducer::finalize() {
  Finalized f;
  auto t0 = Clock::now();
  launch_ready_in_order();
  DDPSIM_ASSERT(next_launch_ == bucket_count(), "backward ended with gradients missing");
  auto& g = net_.grads();
  for (BucketState& s : buckets_) {
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return s.reduced || error_ != nullptr; });
      if (error_) std::rethrow_exception(error_);
    }
    const auto t1 = Clock::now();
    f.wait += t1 - t0;
    // The reduced bucket becomes the gradients (PyTorch's copy_bucket_to_grad).
    for (std::size_t i = 0; i < s.tensors.size(); ++i) {
      const int t = s.tensors[i];
      std::copy_n(s.buffer.data() + s.offsets[i], net_.numel(t), g.data() + net_.offset(t));
    }
    t0 = Clock::now();
    f.copy += t0 - t1;
  }
  return f;
}

void Reducer::comm_loop() {
  for (;;) {
    int b = -1;
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      b = queue_.front();
      queue_.pop_front();
      if (error_) continue;  // the communicator is unusable after a failure
    }
    try {
      reduce(b);
      std::lock_guard lk(mu_);
      buckets_[static_cast<std::size_t>(b)].reduced = true;
      ++done_;
    } catch (...) {
      std::lock_guard lk(mu_);
      error_ = std::current_exception();
    }
    cv_.notify_all();
  }
}

void Reducer::reduce(int b) {
  BucketState& s = buckets_[static_cast<std::size_t>(b)];
  BucketTimes& tm = times_[static_cast<std::size_t>(b)];
  tm.start = Clock::now();
  const std::size_t n = s.buffer.size();
  if (hook_ == Hook::kNone) {
    comm_.all_reduce(s.buffer.data(), s.buffer.data(), n);
  } else {
    // fp16/bf16_compress_hook: cast the (already divided) bucket, sum in half, cast back.
    const auto t = hook_ == Hook::kBf16 ? comm::HalfType::kBFloat16 : comm::HalfType::kFloat16;
    for (std::size_t i = 0; i < n; ++i) s.half[i] = comm::float_to_half(s.buffer[i], t);
    comm_.all_reduce_half(s.half.data(), n, t);
    for (std::size_t i = 0; i < n; ++i) s.buffer[i] = comm::half_to_float(s.half[i], t);
  }
  tm.end = Clock::now();  // finalize() copies the bucket back into the gradients
}

}  // namespace ddpsim::exec
