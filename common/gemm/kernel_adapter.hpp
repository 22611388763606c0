// The host's face of a composed kernel (CUTLASS's GemmUniversalAdapter): whether it takes a problem and
// why not, the workspace it needs, the one-time setup, the launch, and the name of the path that runs.
//
//   using Kernel = GemmKernelCooperative<Cfg, Mainloop, Epilogue, Scheduler>;   (gemm/kernel_sm90.hpp)
//   if (std::string why = GemmAdapter<Kernel>::can_implement(p); !why.empty()) ... refuse, with why
//   GemmAdapter<Kernel> gemm;
//   gemm.initialize({mainloop_params, epilogue_params, scheduler_params});  // once per problem
//   gemm.run(stream);                                                        // as often as needed
//
// initialize() opts the kernel into its shared memory, sizes the persistent grid (the blocks the GPU
// holds at once, at most one per unit of the scheduler, at most Arguments::max_blocks; with clusters,
// whole clusters, and a unit is a cluster's: gemm/tile_scheduler_sm90.hpp's block_work), puts the
// process's watchdog (gemm/watchdog.hpp) into the parameters, and sets up the scheduler's workspace:
// the caller's, or one the adapter allocates and owns (get_workspace_size says how much; its counters
// are zeroed here, before initialize() returns, so that a launch on any stream finds them zero
// (gemm/workspace.hpp), and each launch leaves them at zero). A launch reads the workspace, so two
// launches of one adapter on different streams must not overlap.
//
// prepared() wraps the adapter into a PreparedGemm: what the chapters' step lists hand the harness,
// which times it and writes its path into the CSV's `path` column.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "gemm/cluster_launch.hpp"  // max_resident_clusters
#include "gemm/kernel_sm90.hpp"
#include "gemm/launch.hpp"
#include "gemm/workspace.hpp"  // zero_workspace
#include "gemm/prepared_gemm.hpp"
#include "gemm/problem.hpp"
#include "gemm/smem.hpp"
#include "gemm/watchdog.hpp"

namespace mm {

/// Empty when a TMA store can write C (row-major, `elem_bytes` per element) of `p`; otherwise the rule.
inline std::string tma_store_c_rejects(const GemmProblem& p, int elem_bytes) {
  const std::int64_t per16 = 16 / elem_bytes;
  if (p.n % per16 != 0)
    return "needs N % " + std::to_string(per16) + " == 0: TMA stores rows whose pitch is a multiple of 16 bytes (C is M×N " +
           (elem_bytes == 2 ? "bf16" : "fp32") + ", row-major)";
  return {};
}

namespace detail {
template <class S, class = void>
struct has_workspace : std::false_type {};
template <class S>
struct has_workspace<S, std::void_t<decltype(S::workspace_bytes(std::declval<const typename S::Params&>(), 1))>>
    : std::true_type {};
}  // namespace detail

/// The adapter of a composed kernel (see the file comment).
template <class Kernel>
class GemmAdapter {
 public:
  using Params = typename Kernel::Params;        ///< the kernel's parameters
  using Scheduler = typename Kernel::Scheduler;  ///< its tile scheduler
  static constexpr std::size_t kSmemBytes = Kernel::kSharedStorageBytes;  ///< its dynamic shared memory
  static constexpr int kClusterSize = Kernel::kClusterSize;  ///< blocks per cluster (1: a plain launch)

  /// What initialize() takes: each block's parameters, built by the step from the problem.
  struct Arguments {
    typename Kernel::Mainloop::Params mainloop;  ///< the main loop's (its TMA copies, ...)
    typename Kernel::Epilogue::Params epilogue;  ///< the epilogue's (C's TMA store or layout, scales)
    typename Scheduler::Params scheduler;        ///< the scheduler's (the tiles, the split, ...)
    int max_blocks = 0;  ///< at most this many blocks when above 0 (tests: a few blocks looping over many tiles)
  };

  /// The kernel's entry point.
  static auto kernel() { return gemm_device_kernel<Kernel>; }

  /// Blocks of the kernel the current GPU holds at once (after opting it into its shared memory): with
  /// clusters, the clusters it holds (the driver's count: they must fit in one GPC each) times their
  /// blocks. Throws std::runtime_error when the GPU cannot hold one.
  static int max_active_blocks() {
    opt_in_dynamic_smem(kernel(), kSmemBytes);
    return max_resident_clusters(kernel(), kClusterSize, Kernel::kThreads, kSmemBytes) * kClusterSize;
  }

  /// Bytes of workspace the scheduler needs for these arguments (0 for whole tiles).
  static std::size_t get_workspace_size(const Arguments& args) {
    if constexpr (detail::has_workspace<Scheduler>::value) {
      return Scheduler::workspace_bytes(args.scheduler, Kernel::Cfg::kConsumers, kClusterSize);
    } else {
      (void)args;
      return 0;
    }
  }

  /// The one-time setup (see the file comment). `workspace`: get_workspace_size(args) bytes of device
  /// memory, or null for the adapter's own. Throws std::runtime_error when the GPU cannot hold a
  /// block or the workspace cannot be allocated or zeroed.
  void initialize(const Arguments& args, void* workspace = nullptr) {
    params_ = Params{args.mainloop, args.epilogue, args.scheduler, host_watchdog()};
    const int resident = max_active_blocks();
    // A unit of the scheduler is a cluster's (kClusterSize blocks); the grid, whole clusters.
    std::int64_t blocks = std::min<std::int64_t>(Scheduler::units(params_.scheduler) * kClusterSize, resident);
    if (args.max_blocks > 0) blocks = std::min<std::int64_t>(blocks, args.max_blocks);
    blocks = std::max<std::int64_t>(blocks / kClusterSize, 1) * kClusterSize;
    grid_ = dim3{unsigned(blocks)};
    if constexpr (detail::has_workspace<Scheduler>::value) {
      const std::size_t bytes = get_workspace_size(args);
      if (bytes == 0) return;
      if (workspace == nullptr) {
        if (cudaError_t e = cudaMalloc(&workspace, bytes); e != cudaSuccess)
          throw std::runtime_error(std::string("cannot allocate the kernel's workspace: ") + cudaGetErrorString(e));
        owned_ = std::shared_ptr<void>(workspace, [](void* w) { cudaFree(w); });
      }
      const std::size_t counters = Scheduler::counter_offset(params_.scheduler, Kernel::Cfg::kConsumers, kClusterSize);
      zero_workspace(static_cast<char*>(workspace) + counters, bytes - counters);  // done before any stream's launch
      Scheduler::initialize_workspace(params_.scheduler, workspace, Kernel::Cfg::kConsumers, kClusterSize);
    }
  }

  /// Launches the kernel on `stream`.
  /// With clusters, a launch error is the launch's return and the thread's last error alike
  /// (cudaGetLastError), as a plain launch's is.
  void run(cudaStream_t stream) const {
    if constexpr (kClusterSize > 1) {
      (void)launch_in_clusters(kernel(), grid_, dim3(Kernel::kThreads), kSmemBytes, stream, kClusterSize, params_);
    } else {
#if defined(__CUDACC__)
      kernel()<<<grid_, Kernel::kThreads, kSmemBytes, stream>>>(params_);
#else
      static_assert(sizeof(Kernel) == 0, "a kernel launched from a file a C++ compiler compiles: compile it with nvcc");
#endif
    }
  }

  /// The grid initialize() chose.
  dim3 grid() const { return grid_; }
  /// The kernel's parameters, as initialize() completed them.
  const Params& params() const { return params_; }

  /// The initialized adapter as a step's PreparedGemm, running under the name `path`; it keeps the
  /// workspace the adapter owns alive.
  PreparedGemm prepared(std::string path) const {
    GemmAdapter self = *this;
    return PreparedGemm([self](cudaStream_t stream) { self.run(stream); }, std::move(path));
  }

 private:
  Params params_{};
  dim3 grid_{1};
  std::shared_ptr<void> owned_;
};

}  // namespace mm
