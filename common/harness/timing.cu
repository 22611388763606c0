#include "harness/timing.hpp"

#include <algorithm>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "gemm/launch.hpp"

namespace mm {
namespace {

// Why a read, not a write, flushes the L2.
//
// The L2 is a write-back cache: a line that a kernel (or cudaMemset) writes stays in the L2,
// dirty, and reaches device memory only when something else evicts it. A flush that writes (a
// cudaMemsetAsync over 2x the L2, as this harness first did) evicts everything the previous run
// left behind, but leaves the L2 full of its own dirty lines. The timed kernel then evicts those
// with its own traffic, and each eviction is a write to device memory inside the timed window:
// up to an L2's worth of extra DRAM writes, which made DRAM-bound kernels 11-17% slower than
// under ncu (whose cache control leaves a clean L2), e.g. copy_vec128 at 4096^2: 37.0 against
// 31.7 us.
//
// Reading 2x the L2 instead evicts the same lines (and writes back the dirty ones, the last
// run's outputs, now, before the start event) and leaves only clean lines behind: dropping a
// clean line costs the next kernel nothing. The loads are plain ld.global (cached in the L2
// with the normal eviction priority: a streaming or evict-first hint would let these lines
// go first and keep the old ones). The buffer is zeros, so the XOR of everything read is 0;
// the kernel writes `sink` only if that XOR equals `sentinel`, which is never 0. The compiler
// cannot know the buffer's contents, so it must issue every load.
__global__ void read_to_flush_kernel(const int4* data, std::size_t count, unsigned sentinel, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const int4 v = data[i];
    acc ^= unsigned(v.x) ^ unsigned(v.y) ^ unsigned(v.z) ^ unsigned(v.w);
  }
  if (acc == sentinel) *sink = acc;  // never: acc is 0, sentinel is not
}

// 2x the L2 of zeros (at least 1 MB), and the word the flush kernel would write if it could.
struct FlushBuffer {
  DeviceBuffer<int4> data;
  DeviceBuffer<unsigned> sink;
  FlushBuffer()
      : data((std::max<std::size_t>(2 * device_info().l2_bytes, 1 << 20) + sizeof(int4) - 1) / sizeof(int4)),
        sink(1) {
    // Written once, here, and finished before any flush reads it (the timing streams do not
    // wait for the legacy default stream): zeros make the kernel's condition false.
    MM_CUDA_CHECK(cudaMemset(data.data(), 0, data.bytes()));
    MM_CUDA_CHECK(cudaMemset(sink.data(), 0, sink.bytes()));
    MM_CUDA_CHECK(cudaDeviceSynchronize());
  }
};

}  // namespace

void flush_l2(cudaStream_t stream) {
  static FlushBuffer buffer;
  constexpr unsigned block = 256;
  const auto grid = unsigned(launch::capped_blocks(std::int64_t(buffer.data.size()), block, launch::max_grid_x));
  read_to_flush_kernel<<<grid, block, 0, stream>>>(buffer.data.data(), buffer.data.size(), 1u, buffer.sink.data());
  MM_CHECK_LAUNCH();
}

double median(std::vector<float> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (double(v[h - 1]) + v[h]);
}

std::vector<Timing> time_interleaved(const std::vector<std::function<void(cudaStream_t)>>& launches,
                                     const TimingOptions& opt) {
  std::vector<Timing> out(launches.size());
  if (launches.empty()) return out;
  cudaStream_t stream;
  MM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t start, stop;
  MM_CUDA_CHECK(cudaEventCreate(&start));
  MM_CUDA_CHECK(cudaEventCreate(&stop));

  for (const auto& launch : launches)
    for (int i = 0; i < opt.warmup; ++i) launch(stream);
  MM_CHECK_LAUNCH();
  MM_CUDA_CHECK(cudaStreamSynchronize(stream));

  const std::size_t n = launches.size();
  for (Timing& t : out) t.samples_ms.reserve(opt.reps);
  for (int r = 0; r < opt.reps; ++r) {
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t which = (std::size_t(r) + j) % n;
      // Before the start event: every timed run reads its inputs from device memory, as a first
      // call would, and finds no dirty line of anyone else's to write back (see flush_l2).
      if (opt.flush_l2) flush_l2(stream);
      MM_CUDA_CHECK(cudaEventRecord(start, stream));
      launches[which](stream);
      MM_CUDA_CHECK(cudaEventRecord(stop, stream));
      MM_CUDA_CHECK(cudaEventSynchronize(stop));
      MM_CHECK_LAUNCH();
      float ms = 0;
      MM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      out[which].samples_ms.push_back(ms);
    }
  }
  for (Timing& t : out) {
    t.median_ms = median(t.samples_ms);
    t.min_ms = *std::min_element(t.samples_ms.begin(), t.samples_ms.end());
  }
  MM_CUDA_CHECK(cudaEventDestroy(start));
  MM_CUDA_CHECK(cudaEventDestroy(stop));
  MM_CUDA_CHECK(cudaStreamDestroy(stream));
  return out;
}

// One launch in turns with itself: the same runs, in the same order, as before time_interleaved existed.
Timing time_on_gpu(const std::function<void(cudaStream_t)>& launch, const TimingOptions& opt) {
  return time_interleaved({launch}, opt).front();
}

}  // namespace mm
