// communicator.hpp: float32 sum collectives behind one interface, on Gloo (CPU, TCP) or NCCL (GPU).
//
// Counts follow nccl-tests: `count` is the number of elements of each rank's input for
// all_reduce and broadcast, and of each rank's chunk for reduce_scatter (its output; the input
// holds size()*count elements) and all_gather (its input; the output holds size()*count).
// In place means out == in for all_reduce/broadcast, out == in + rank()*count for
// reduce_scatter and in == out + rank()*count for all_gather (nccl-tests' in-place offsets).
// Buffers live where the backend computes: host memory for Gloo, device memory for NCCL;
// allocate() returns the right kind.
//
// Every call is bounded by the communicator's timeout (Gloo: the context timeout, which also
// bounds each TCP wait; NCCL: a non-blocking communicator polled until the deadline, then
// aborted). A peer that dies or a timeout throws ddpsim::Error naming the op, the backend and
// the cause; the communicator is unusable afterwards. Calls must not overlap in time (one
// thread at a time; they may come from different threads one after another).
//
// The backends' factories are in gloo_communicator.hpp (make_gloo) and nccl_communicator.hpp
// (make_nccl).
//
//   auto info = ddpsim::comm::rank_from_env().value();
//   auto c = ddpsim::comm::make_gloo(info, std::chrono::seconds(30));
//   std::vector<float> g(n, 1.0f);
//   c->all_reduce(g.data(), g.data(), n);   // g[i] == c->size()
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "calibrate/comm/rank.hpp"
#include "model/collective_op.hpp"

namespace ddpsim::comm {

/// The collective a sweep runs (model::kMeasuredOps) named as model::collective_op_name names
/// it; throws ddpsim::Error listing the valid names.
model::CollectiveOp op_from_name(std::string_view name);

/// 16-bit float formats for compressed gradients (stored as uint16_t bit patterns).
enum class HalfType { kFloat16, kBFloat16 };
std::uint16_t float_to_half(float x, HalfType t);  ///< round to nearest even, IEEE/bfloat16.
float half_to_float(std::uint16_t h, HalfType t);

/// A buffer in the communicator's memory (host for Gloo, device for NCCL).
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual float* data() = 0;
  virtual std::size_t count() const = 0;
  virtual void upload(const float* host, std::size_t n, std::size_t offset = 0) = 0;
  virtual void download(float* host, std::size_t n, std::size_t offset = 0) const = 0;
};

class Communicator {
 public:
  virtual ~Communicator();
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend() const = 0;    ///< "gloo" | "nccl"
  virtual std::string version() const = 0;    ///< library version, e.g. "0.5.0"
  virtual std::string transport() const = 0;  ///< "tcp" (Gloo), "nccl" (NCCL picks its own)

  virtual void all_reduce(const float* in, float* out, std::size_t count) = 0;
  virtual void reduce_scatter(const float* in, float* out, std::size_t count) = 0;
  virtual void all_gather(const float* in, float* out, std::size_t count) = 0;
  virtual void broadcast(const float* in, float* out, std::size_t count, int root) = 0;
  /// Sum all-reduce of 16-bit floats, in place (the fp16/bf16 DDP compression hook's wire
  /// format). Each addition is done in float32 and rounded back, as PyTorch's reduction does.
  virtual void all_reduce_half(std::uint16_t* buf, std::size_t count, HalfType type) = 0;
  virtual void barrier() = 0;

  /// A zeroed buffer of `count` floats in this communicator's memory.
  virtual std::unique_ptr<Buffer> allocate(std::size_t count) = 0;
  std::chrono::milliseconds timeout() const { return timeout_; }

 protected:
  explicit Communicator(std::chrono::milliseconds timeout) : timeout_(timeout) {}
  std::chrono::milliseconds timeout_;
};

}  // namespace ddpsim::comm
