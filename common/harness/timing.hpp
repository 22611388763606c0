/// @file timing.hpp
/// @brief GPU timing with CUDA events: warm-up, then the median and minimum of many runs, L2 flushed before each.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <vector>

namespace mm {

/// @brief How to time.
struct TimingOptions {
  int warmup = 5;        ///< untimed runs first (module load, clocks ramping up, cuBLAS heuristics)
  int reps = 20;         ///< timed runs
  bool flush_l2 = true;  ///< run flush_l2 before each timed run (outside the timed events)
};

/// @brief What was measured, in milliseconds.
struct Timing {
  double median_ms = 0;           ///< median of the timed runs
  double min_ms = 0;              ///< fastest timed run
  std::vector<float> samples_ms;  ///< every timed run, in order
};

/// @brief Leaves the L2 holding nothing of earlier work and nothing dirty: enqueues on `stream` a
/// kernel that reads a zero-filled buffer twice the L2's size and writes nothing.
///
/// Reading evicts whatever earlier kernels left in the L2 and writes their dirty lines back now;
/// what it leaves behind are clean lines, which the next kernel drops for free. A write (such as a
/// cudaMemset) would leave dirty lines whose write-back lands inside the next timed kernel.
void flush_l2(cudaStream_t stream);

/// @brief Times `launch(stream)`: events are recorded around each run only, so the L2 flush is not counted.
Timing time_on_gpu(const std::function<void(cudaStream_t)>& launch, const TimingOptions& opt = {});

/// @brief Times several launches in turns: each warmed up (`opt.warmup` runs, in the list's order), then
/// `opt.reps` rounds in which each launch runs once (L2 flushed before each, as time_on_gpu), round r
/// starting at launch r mod n. A clock that rises or falls during the measurement then moves every
/// launch's samples alike, where time_on_gpu's runs of one launch all fall in one stretch of it.
/// Returns one Timing per launch, in the list's order.
std::vector<Timing> time_interleaved(const std::vector<std::function<void(cudaStream_t)>>& launches,
                                     const TimingOptions& opt = {});

/// @brief Median of a list (the mean of the two middle values for an even count); 0 for an empty list.
double median(std::vector<float> v);

}  // namespace mm
