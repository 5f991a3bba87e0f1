// NCCL on one GPU per rank. The communicator is non-blocking (ncclConfig_t::blocking = 0) so
// that every call can be polled against a deadline and aborted instead of hanging on a dead
// peer; the unique id travels through the same FileStore directory as Gloo's rendezvous.
// Built in every configuration: without NCCL only the stub at the end is compiled.
#include "calibrate/comm/nccl_communicator.hpp"

#include "model/error.hpp"

#if DDPSIM_HAVE_NCCL
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <nccl.h>

#include <atomic>
#include <cstring>
#include <thread>

namespace ddpsim::comm {
namespace {

using Clock = std::chrono::steady_clock;

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(fmt::format("CUDA {}: {}", what, cudaGetErrorString(e)));
}

class DeviceBuffer : public Buffer {
 public:
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&p_), std::max<std::size_t>(n, 1) * 4),
               "cudaMalloc");
    check_cuda(cudaMemset(p_, 0, std::max<std::size_t>(n, 1) * 4), "cudaMemset");
  }
  ~DeviceBuffer() override { cudaFree(p_); }
  float* data() override { return p_; }
  std::size_t count() const override { return n_; }
  void upload(const float* host, std::size_t n, std::size_t offset) override {
    DDPSIM_ASSERT(offset + n <= n_, "upload past the end of the buffer");
    check_cuda(cudaMemcpy(p_ + offset, host, n * 4, cudaMemcpyHostToDevice), "upload");
  }
  void download(float* host, std::size_t n, std::size_t offset) const override {
    DDPSIM_ASSERT(offset + n <= n_, "download past the end of the buffer");
    check_cuda(cudaMemcpy(host, p_ + offset, n * 4, cudaMemcpyDeviceToHost), "download");
  }

 private:
  float* p_ = nullptr;
  std::size_t n_;
};

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(const RankInfo& info, std::chrono::milliseconds timeout)
      : Communicator(timeout), rank_(info.rank), size_(info.world_size) {
    int devices = 0;
    const cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices == 0) {
      throw UnsupportedError(fmt::format("NCCL needs a CUDA device and none is usable here ({})",
                                         e != cudaSuccess ? cudaGetErrorString(e) : "0 devices"));
    }
    device_ = info.local_rank % devices;
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");

    if (info.store_dir.empty()) {
      throw Error("nccl: no rendezvous directory (set DDPSIM_STORE_DIR or use launch_local)");
    }
    ensure_store_dir(info.store_dir);
    static std::atomic<int> instances{0};
    ncclUniqueId id;
    try {
      gloo::rendezvous::FileStore file_store(info.store_dir);
      gloo::rendezvous::PrefixStore store(fmt::format("nccl{}", instances++), file_store);
      if (rank_ == 0) {
        check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
        store.set("unique_id", std::vector<char>(id.internal, id.internal + sizeof id.internal));
      } else {
        store.wait({"unique_id"}, timeout);
        const auto bytes = store.get("unique_id");
        if (bytes.size() != sizeof id.internal) throw Error("nccl: malformed unique id in store");
        std::memcpy(id.internal, bytes.data(), bytes.size());
      }
    } catch (const Error&) {
      throw;
    } catch (const std::exception& ex) {
      throw Error(fmt::format("nccl rendezvous of rank {} in {} failed: {}", rank_, info.store_dir,
                              ex.what()));
    }
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t r = ncclCommInitRankConfig(&comm_, size_, id, rank_, &config);
    if (r != ncclSuccess && r != ncclInProgress) check_nccl(r, "ncclCommInitRankConfig");
    wait_comm("ncclCommInitRankConfig", Clock::now() + timeout_);
  }

  ~NcclCommunicator() override {
    if (comm_) {
      if (broken_) {
        ncclCommAbort(comm_);
      } else {
        ncclCommDestroy(comm_);
      }
    }
    if (stream_) cudaStreamDestroy(stream_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "nccl"; }
  std::string version() const override {
    int v = 0;
    ncclGetVersion(&v);
    return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
  }
  std::string transport() const override { return "nccl"; }

  void all_reduce(const float* in, float* out, std::size_t count) override {
    run("ncclAllReduce",
        [&] { return ncclAllReduce(in, out, count, ncclFloat, ncclSum, comm_, stream_); });
  }
  void all_reduce_half(std::uint16_t* buf, std::size_t count, HalfType type) override {
    const ncclDataType_t t = type == HalfType::kBFloat16 ? ncclBfloat16 : ncclFloat16;
    run("ncclAllReduce(half)",
        [&] { return ncclAllReduce(buf, buf, count, t, ncclSum, comm_, stream_); });
  }
  void reduce_scatter(const float* in, float* out, std::size_t count) override {
    run("ncclReduceScatter",
        [&] { return ncclReduceScatter(in, out, count, ncclFloat, ncclSum, comm_, stream_); });
  }
  void all_gather(const float* in, float* out, std::size_t count) override {
    run("ncclAllGather", [&] { return ncclAllGather(in, out, count, ncclFloat, comm_, stream_); });
  }
  void broadcast(const float* in, float* out, std::size_t count, int root) override {
    run("ncclBroadcast",
        [&] { return ncclBroadcast(in, out, count, ncclFloat, root, comm_, stream_); });
  }
  void barrier() override {
    if (!barrier_buf_) barrier_buf_ = std::make_unique<DeviceBuffer>(1);
    all_reduce(barrier_buf_->data(), barrier_buf_->data(), 1);
  }
  std::unique_ptr<Buffer> allocate(std::size_t count) override {
    return std::make_unique<DeviceBuffer>(count);
  }

 private:
  void check_nccl(ncclResult_t r, const char* what) {
    if (r != ncclSuccess && r != ncclInProgress) {
      broken_ = true;
      throw Error(fmt::format("nccl {} on rank {} of {} failed: {} ({})", what, rank_, size_,
                              ncclGetErrorString(r), ncclGetLastError(comm_)));
    }
  }

  void wait_comm(const char* what, Clock::time_point deadline) {
    for (;;) {
      ncclResult_t state = ncclSuccess;
      ncclCommGetAsyncError(comm_, &state);
      if (state == ncclSuccess) return;
      check_nccl(state, what);
      if (Clock::now() > deadline) timeout_abort(what);
      std::this_thread::yield();
    }
  }

  [[noreturn]] void timeout_abort(const char* what) {
    broken_ = true;
    throw Error(
        fmt::format("nccl {} on rank {} of {} timed out after {} ms (a peer is missing "
                    "or dead)",
                    what, rank_, size_, timeout_.count()));
  }

  template <typename F>
  void run(const char* what, F&& launch) {
    if (broken_) throw Error(fmt::format("nccl {}: the communicator failed earlier", what));
    const auto deadline = Clock::now() + timeout_;
    check_nccl(launch(), what);
    wait_comm(what, deadline);
    for (;;) {
      const cudaError_t q = cudaStreamQuery(stream_);
      if (q == cudaSuccess) return;
      if (q != cudaErrorNotReady) check_cuda(q, what);
      ncclResult_t state = ncclSuccess;
      ncclCommGetAsyncError(comm_, &state);
      if (state != ncclSuccess && state != ncclInProgress) check_nccl(state, what);
      if (Clock::now() > deadline) timeout_abort(what);
      std::this_thread::yield();
    }
  }

  int rank_;
  int size_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  bool broken_ = false;
  std::unique_ptr<DeviceBuffer> barrier_buf_;
};

}  // namespace

bool nccl_built() { return true; }

std::unique_ptr<Communicator> make_nccl(const RankInfo& info, std::chrono::milliseconds timeout) {
  return std::make_unique<NcclCommunicator>(info, timeout);
}

}  // namespace ddpsim::comm

#else  // !DDPSIM_HAVE_NCCL

namespace ddpsim::comm {

bool nccl_built() { return false; }

std::unique_ptr<Communicator> make_nccl(const RankInfo&, std::chrono::milliseconds) {
  throw UnsupportedError(
      "the NCCL communicator is not built; install CUDA and NCCL and configure with "
      "-DDDPSIM_WITH_NCCL=ON");
}

}  // namespace ddpsim::comm

#endif  // DDPSIM_HAVE_NCCL
