// Zeroing a kernel's workspace before its first launch, ordered for every stream (workspace.hpp).
#include "gemm/workspace.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace mm {

namespace {

[[noreturn]] void fail(const char* call, cudaError_t e) {
  throw std::runtime_error(std::string("cannot zero the kernel's workspace: ") + call + ": " + cudaGetErrorString(e));
}

}  // namespace

void zero_workspace(void* ptr, std::size_t bytes) {
  if (bytes == 0) return;
  cudaStream_t stream = nullptr;
  if (cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); e != cudaSuccess)
    fail("cudaStreamCreateWithFlags", e);
  cudaError_t e = cudaMemsetAsync(ptr, 0, bytes, stream);
  const char* call = "cudaMemsetAsync";
  if (e == cudaSuccess) {
    e = cudaStreamSynchronize(stream);
    call = "cudaStreamSynchronize";
  }
  (void)cudaStreamDestroy(stream);
  if (e != cudaSuccess) fail(call, e);
}

}  // namespace mm
