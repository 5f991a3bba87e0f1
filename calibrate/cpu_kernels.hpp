// cpu_kernels.hpp: what one CPU rank of the executor runs, timed: OpenBLAS sgemm with the exact
// transposes, STREAM-style copy and triad, and the fp32 Adam update.
//
// Every kernel is single-threaded: each executor rank is one process with OPENBLAS_NUM_THREADS=1
// (two ranks on two cores would otherwise oversubscribe), and the calibration measures the
// same. Several ranks timing at once share the memory bus as executor ranks do.
//
//   blas_single_thread();
//   Stats s = time_sgemm({32, 4096, 1024, 1, false, true}, TimingOptions{});
//   double gflops = 2.0 * 32 * 4096 * 1024 / s.median_s / 1e9;
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "calibrate/timing.hpp"
#include "model/workload/workload.hpp"

namespace ddpsim::calib {

/// openblas_set_num_threads(1) (and OPENBLAS_NUM_THREADS=1 for anything started later).
void blas_single_thread();
/// openblas_get_config(), e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64".
std::string blas_config();

/// Where a timed GEMM finds its operands.
///  - kCold (the default): as in a training step. Between two uses of one weight a step streams
///    the rest of the model, its gradients and optimizer state through the caches, so every GEMM
///    of a model larger than the last-level cache reads its operands from memory. The call
///    rotates through copies of its operands totalling at least kColdRotationBytes, so no call
///    finds its own operands in cache. Measured here (AMD EPYC VM, OpenBLAS 0.3.21, one core):
///    32x4096x1024 forward 3.4 ms warm vs 3.95 ms cold, and the executor's forward matches the
///    cold figure (results/VALIDATION.md); a cache-warm loop predicted it 18-27% short.
///  - kWarm: one set of operands reused call after call (a microbenchmark's number).
enum class Operands { kCold, kWarm };
/// Total operand bytes a cold GEMM rotates through: the speed of the 4096-wide forward above
/// stops changing at 48-64 MiB of rotation on this VM (32 MiB L3 per CCD); twice that.
inline constexpr std::size_t kColdRotationBytes = std::size_t{128} << 20;
const char* operands_name(Operands o);

/// C[m,n] = op(A) op(B) in fp32, row-major as PyTorch holds tensors (A is [m,k], or [k,m] when
/// trans_a; B is [k,n], or [n,k] when trans_b), `count` independent instances on separate
/// operands. Operands are allocated and filled once, outside the timing.
Stats time_sgemm(const model::GemmShape& shape, const TimingOptions& o,
                 Operands where = Operands::kCold);
/// The same GEMM as a callable that owns its operands (allocated and filled here), for callers
/// that time it themselves (the interference measurement). Cold: each call uses the next copy.
std::function<void()> make_sgemm_call(const model::GemmShape& shape,
                                      Operands where = Operands::kCold);

enum class StreamKernel { kCopy, kTriad };
/// STREAM's copy (c = a) or triad (a = b + s*c) over `elements` floats per array. Bytes per call
/// as STREAM counts them: copy 2*4*elements, triad 3*4*elements (write-allocate not counted).
Stats time_stream(StreamKernel k, std::size_t elements, const TimingOptions& o);
double stream_bytes(StreamKernel k, std::size_t elements);

/// torch.optim.Adam's fp32 update of `elements` parameters (p, grad, m, v): reads 4 arrays and
/// writes 3, so 28 bytes per element.
Stats time_adam(std::size_t elements, const TimingOptions& o);
inline double adam_bytes(std::size_t elements) { return 28.0 * static_cast<double>(elements); }

}  // namespace ddpsim::calib
