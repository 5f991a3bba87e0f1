// The CUDA backend's entry points in a build without the CUDA toolkit (gpt2_cuda.hpp).
#include "calibrate/exec/gpt2_cuda.hpp"

namespace ddpsim::exec {

bool cuda_backend_built() { return false; }

CudaRunResult run_gpt2_cuda(const Gpt2Spec&, const CudaRunOptions&) {
  CudaRunResult r;
  r.why = "this ddpsim-exec was built without CUDA (configure with the CUDA toolkit present)";
  return r;
}

}  // namespace ddpsim::exec
