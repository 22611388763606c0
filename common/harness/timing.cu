#include "harness/timing.hpp"

#include <algorithm>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"

namespace mm {

double median(std::vector<float> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (double(v[h - 1]) + v[h]);
}

Timing time_on_gpu(const std::function<void(cudaStream_t)>& launch, const TimingOptions& opt) {
  // Writing 2x the L2 evicts whatever the previous run left there, so every
  // timed run reads its inputs from device memory, as a first call would.
  static DeviceBuffer<char> flush(std::max<std::size_t>(2 * device_info().l2_bytes, 1 << 20));
  cudaStream_t stream;
  MM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t start, stop;
  MM_CUDA_CHECK(cudaEventCreate(&start));
  MM_CUDA_CHECK(cudaEventCreate(&stop));

  for (int i = 0; i < opt.warmup; ++i) launch(stream);
  MM_CHECK_LAUNCH();
  MM_CUDA_CHECK(cudaStreamSynchronize(stream));

  Timing t;
  t.samples_ms.reserve(opt.reps);
  for (int i = 0; i < opt.reps; ++i) {
    if (opt.flush_l2) MM_CUDA_CHECK(cudaMemsetAsync(flush.data(), i & 0xFF, flush.bytes(), stream));
    MM_CUDA_CHECK(cudaEventRecord(start, stream));
    launch(stream);
    MM_CUDA_CHECK(cudaEventRecord(stop, stream));
    MM_CUDA_CHECK(cudaEventSynchronize(stop));
    MM_CHECK_LAUNCH();
    float ms = 0;
    MM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    t.samples_ms.push_back(ms);
  }
  t.median_ms = median(t.samples_ms);
  t.min_ms = *std::min_element(t.samples_ms.begin(), t.samples_ms.end());
  MM_CUDA_CHECK(cudaEventDestroy(start));
  MM_CUDA_CHECK(cudaEventDestroy(stop));
  MM_CUDA_CHECK(cudaStreamDestroy(stream));
  return t;
}

}  // namespace mm
