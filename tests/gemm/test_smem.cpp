// gemm/smem.hpp: the shared-memory opt-in and its one-line reason. The message is checked on
// the CPU; the opt-in itself on a GPU (skipped without one), with smem_kernels.cu's kernels.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpu_test.hpp"
#include "harness/cuda_check.hpp"
#include "gemm/smem.hpp"
#include "smem_kernels.hpp"  // the kernels (nvcc)

// gemm/smem.hpp's shared_storage() places a kernel's SharedStorage at the start of its dynamic shared
// memory, with no rounding: the Hopper kernels' 128-byte-swizzled tiles need that start 1024-byte
// aligned (wgmma's descriptors and TMA's swizzle are functions of the address). Checked here for
// the sizes those kernels use.
TEST(SharedStorage, DynamicSharedMemoryStartsAt1024ByteBoundary) {
  MM_REQUIRE_GPU();
  unsigned* out = nullptr;
  MM_CUDA_CHECK(cudaMalloc(&out, sizeof(unsigned)));
  for (std::size_t bytes : {std::size_t(1024), std::size_t(48 * 1024), std::size_t(200 * 1024)}) {
    if (!mm::try_opt_in_dynamic_smem(mm::test::smem_start_kernel(), bytes).empty()) continue;  // a GPU with less
    mm::test::launch_smem_start(out, bytes);
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
  EXPECT_EQ(mm::try_opt_in_dynamic_smem(mm::test::smem_fill_kernel(), bytes), "");
  mm::test::launch_smem_fill(out, n, bytes);
  MM_CUDA_CHECK(cudaGetLastError());
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  int h = 0;
  MM_CUDA_CHECK(cudaMemcpy(&h, out, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(h, n - 1);
  cudaFuncAttributes attr{};
  MM_CUDA_CHECK(cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(mm::test::smem_fill_kernel())));
  EXPECT_EQ(std::size_t(attr.maxDynamicSharedSizeBytes), bytes);
  // A smaller request after the larger one needs nothing more.
  EXPECT_EQ(mm::try_opt_in_dynamic_smem(mm::test::smem_fill_kernel(), 64 * 1024), "");
  // One KB past the limit: refused with the reason, and opt_in_dynamic_smem throws it.
  std::string expected = "needs " + std::to_string(optin / 1024 + 1) + " KB of shared memory per block, this GPU allows " +
                         std::to_string(optin / 1024) + " KB";
  EXPECT_EQ(mm::try_opt_in_dynamic_smem(mm::test::smem_fill_kernel(), bytes + 1024), expected);
  EXPECT_THROW(mm::opt_in_dynamic_smem(mm::test::smem_fill_kernel(), bytes + 1024), std::runtime_error);
  // Static shared memory counts: 16 KB static + all the opt-in memory as dynamic does not fit.
  EXPECT_NE(mm::try_opt_in_dynamic_smem(mm::test::smem_static_kernel(), bytes), "");
  EXPECT_EQ(mm::try_opt_in_dynamic_smem(mm::test::smem_static_kernel(), bytes - 16 * 1024), "");
  MM_CUDA_CHECK(cudaFree(out));
}
