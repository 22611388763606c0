/// @file prepared_gemm.hpp
/// @brief What a step's one-time preparation returns: the launch, and the name of the path that runs.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <type_traits>
#include <utility>

namespace mm {

/// @brief What a step's preparation returns: what runs the prepared kernel on a stream, and the name of the
/// path that runs ("split_k 128x128 x3": the blocks and the choices of a dispatcher). An empty path
/// means the step's own name. Converts from any callable of a stream, so a step that has no path to
/// name returns its lambda as before.
struct PreparedGemm {
  std::function<void(cudaStream_t)> run;  ///< launches the kernel(s) on a stream
  std::string path;                       ///< the path that runs; empty: the step's name

  PreparedGemm() = default;
  /// A launch and the name of its path.
  template <class F>
    requires std::is_invocable_v<F&, cudaStream_t> && (!std::is_same_v<std::remove_cvref_t<F>, PreparedGemm>)
  PreparedGemm(F&& f, std::string name = {}) : run(std::forward<F>(f)), path(std::move(name)) {}
  /// Launches on `stream`.
  void operator()(cudaStream_t stream) const { run(stream); }
};

}  // namespace mm
