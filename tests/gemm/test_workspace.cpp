// mm::zero_workspace (gemm/workspace.hpp): the zeros are in memory when it returns, whatever the
// legacy default stream is doing, so a prepared GEMM's first launch on any stream (a non-blocking one,
// as PyTorch's are) finds its counters at zero.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "gemm/workspace.hpp"
#include "gpu_test.hpp"

namespace {

// A host function queued on a stream holds the stream until it returns: this one until the test lets
// it go (or 10 s pass, so that a failing test never hangs).
struct Gate {
  std::atomic<bool> open{false};
  std::atomic<bool> done{false};
};

void CUDART_CB hold_until_open(void* data) {
  auto* gate = static_cast<Gate*>(data);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!gate->open.load() && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  gate->done.store(true);
}

}  // namespace

TEST(gemm_Workspace, ZeroesBeforeItReturnsWhileTheLegacyStreamIsHeld) {
  MM_REQUIRE_GPU();
  constexpr std::size_t kBytes = 3 * 4096 + 5;  // odd: the last bytes of a partial word too
  mm::DeviceBuffer<unsigned char> w(kBytes + 64);
  MM_CUDA_CHECK(cudaMemset(w.data(), 0xAB, kBytes + 64));  // poison, then the guard past the end
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  cudaStream_t reader = nullptr;
  MM_CUDA_CHECK(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
  unsigned char* host = nullptr;
  MM_CUDA_CHECK(cudaMallocHost(&host, kBytes + 64));

  Gate gate;
  MM_CUDA_CHECK(cudaLaunchHostFunc(cudaStreamLegacy, hold_until_open, &gate));  // the legacy stream waits
  mm::zero_workspace(w.data(), kBytes);  // a cudaMemset would queue behind the gate
  MM_CUDA_CHECK(cudaMemcpyAsync(host, w.data(), kBytes + 64, cudaMemcpyDeviceToHost, reader));
  MM_CUDA_CHECK(cudaStreamSynchronize(reader));
  const bool held = !gate.done.load();  // the zeros were read while the legacy stream was still held
  gate.open.store(true);
  MM_CUDA_CHECK(cudaDeviceSynchronize());

  EXPECT_TRUE(held) << "the gate opened by itself (10 s): the test proves nothing";
  std::size_t nonzero = 0;
  for (std::size_t i = 0; i < kBytes; ++i) nonzero += host[i] != 0;
  EXPECT_EQ(nonzero, 0u) << "bytes not yet zero when zero_workspace returned";
  for (std::size_t i = kBytes; i < kBytes + 64; ++i) ASSERT_EQ(host[i], 0xAB) << "byte " << i << " past the end written";
  MM_CUDA_CHECK(cudaFreeHost(host));
  MM_CUDA_CHECK(cudaStreamDestroy(reader));
}

TEST(gemm_Workspace, NothingToDoForNoBytes) {
  // Before any CUDA call: 0 bytes is no work (a whole-tile scheduler's workspace), not an error.
  EXPECT_NO_THROW(mm::zero_workspace(nullptr, 0));
}
