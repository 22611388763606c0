// gemm/smem.hpp: the shared-memory opt-in and its one-line reason. The message is checked on
// the CPU; the opt-in itself on a GPU (skipped without one).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpu_test.hpp"
#include "harness/cuda_check.hpp"
#include "gemm/smem.hpp"

namespace {

// Writes its block's dynamic shared memory and reads it back: a launch that needs the opt-in.
__global__ void smem_fill_kernel(int* out, int n) {
  extern __shared__ int buf[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = i;
  __syncthreads();
  if (threadIdx.x == 0) out[0] = buf[n - 1];
}

// A kernel with 16 KB of static shared memory: that counts against the same limit.
__global__ void smem_static_kernel(int* out, int n) {
  __shared__ int fixed[4096];
  extern __shared__ int buf[];
  fixed[threadIdx.x] = int(threadIdx.x);
  buf[threadIdx.x % n] = fixed[threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) out[0] = buf[0];
}

// Reports where its dynamic shared memory starts, as a shared-window address (cvta.to.shared).
__global__ void smem_start_kernel(unsigned* out) {
  extern __shared__ __align__(1024) std::uint8_t raw[];
  raw[threadIdx.x] = 1;
  if (threadIdx.x == 0) out[0] = unsigned(__cvta_generic_to_shared(raw));
}

}  // namespace

// gemm/smem.hpp's shared_storage() places a kernel's SharedStorage at the start of its dynamic shared
// memory, with no rounding: the Hopper kernels' 128-byte-swizzled tiles need that start 1024-byte
// aligned (wgmma's descriptors and TMA's swizzle are functions of the address). Checked here for
// the sizes those kernels use.
TEST(SharedStorage, DynamicSharedMemoryStartsAt1024ByteBoundary) {
  MM_REQUIRE_GPU();
  unsigned* out = nullptr;
  MM_CUDA_CHECK(cudaMalloc(&out, sizeof(unsigned)));
  for (std::size_t bytes : {std::size_t(1024), std::size_t(48 * 1024), std::size_t(200 * 1024)}) {
    if (!mm::try_opt_in_dynamic_smem(smem_start_kernel, bytes).empty()) continue;  // a GPU with less
    smem_start_kernel<<<2, 128, bytes>>>(out);
    MM_CUDA_CHECK(cudaGetLastError());
    MM_CUDA_CHECK(cudaDeviceSynchronize());
    unsigned start = 1;
    MM_CUDA_CHECK(cudaMemcpy(&start, out, sizeof(unsigned), cudaMemcpyDeviceToHost));
    EXPECT_EQ(start % 1024, 0u) << bytes << " bytes of dynamic shared memory start at " << start;
  }
  MM_CUDA_CHECK(cudaFree(out));
}

TEST(SmemOptIn, ReasonNamesNeedAndLimitInKB) {
  EXPECT_EQ(mm::smem_shortfall(100 * 1024, 99 * 1024), "needs 100 KB of shared memory per block, this GPU allows 99 KB");
  EXPECT_EQ(mm::smem_shortfall(99 * 1024, 99 * 1024), "");  // exactly the limit fits
  // One byte over: the need rounds up, the limit down, so they never print as equal.
  EXPECT_EQ(mm::smem_shortfall(232448 + 1, 232448), "needs 228 KB of shared memory per block, this GPU allows 227 KB");
  EXPECT_EQ(mm::smem_shortfall(1, 0), "needs 1 KB of shared memory per block, this GPU allows 0 KB");
  EXPECT_EQ(mm::smem_default_limit, 49152u);
}

TEST(SmemOptIn, LargeDynamicSharedMemoryLaunchesAfterTheOptIn) {
  MM_REQUIRE_GPU();
  int dev = 0, optin = 0;
  MM_CUDA_CHECK(cudaGetDevice(&dev));
  MM_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  if (std::size_t(optin) <= mm::smem_default_limit) GTEST_SKIP() << "this GPU allows no more than 48 KB per block";
  int* out = nullptr;
  MM_CUDA_CHECK(cudaMalloc(&out, sizeof(int)));
  // All the opt-in memory the GPU allows: the attribute is set, the launch succeeds.
  std::size_t bytes = std::size_t(optin);
  int n = int(bytes / sizeof(int));
  EXPECT_EQ(mm::try_opt_in_dynamic_smem(smem_fill_kernel, bytes), "");
  smem_fill_kernel<<<1, 256, bytes>>>(out, n);
  MM_CUDA_CHECK(cudaGetLastError());
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  int h = 0;
  MM_CUDA_CHECK(cudaMemcpy(&h, out, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(h, n - 1);
  cudaFuncAttributes attr{};
  MM_CUDA_CHECK(cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(smem_fill_kernel)));
  EXPECT_EQ(std::size_t(attr.maxDynamicSharedSizeBytes), bytes);
  // A smaller request after the larger one needs nothing more.
  EXPECT_EQ(mm::try_opt_in_dynamic_smem(smem_fill_kernel, 64 * 1024), "");
  // One KB past the limit: refused with the reason, and opt_in_dynamic_smem throws it.
  std::string expected = "needs " + std::to_string(optin / 1024 + 1) + " KB of shared memory per block, this GPU allows " +
                         std::to_string(optin / 1024) + " KB";
  EXPECT_EQ(mm::try_opt_in_dynamic_smem(smem_fill_kernel, bytes + 1024), expected);
  EXPECT_THROW(mm::opt_in_dynamic_smem(smem_fill_kernel, bytes + 1024), std::runtime_error);
  // Static shared memory counts: 16 KB static + all the opt-in memory as dynamic does not fit.
  EXPECT_NE(mm::try_opt_in_dynamic_smem(smem_static_kernel, bytes), "");
  EXPECT_EQ(mm::try_opt_in_dynamic_smem(smem_static_kernel, bytes - 16 * 1024), "");
  MM_CUDA_CHECK(cudaFree(out));
}
