// Chapter 09, step 5: wgmma_in_flight. big_tile (wgmma_tma.cuh at 128×256 tiles) with one change:
// each warpgroup leaves its last group of wgmma running while it waits for the next stage
// (warpgroup_wait<1> instead of <0>). In big_tile the tensor core idles from the moment a K step's
// wgmma complete until the warpgroup has waited on the next full barrier and issued the next group;
// here that wait overlaps the running group. The price: a stage is released one K step later (its
// group completes one step later), so the ring holds one stage fewer of loads in flight.
//
//   diff wgmma_tma.cuh wgmma_in_flight.cuh   shows the change: a `release` state one behind `read`,
//   warpgroup_wait<1>, and the refill of the stage of step kt-1.
//
// The shared memory, the parameters and the TMA copies are big_tile's (wgmma_tma.cuh).
//
// Build: cmake --build build --target ch09_hopper_wgmma_tma
// Run:   build/bin/ch09_hopper_wgmma_tma --kernel wgmma_in_flight
#pragma once

#include "09_hopper_wgmma_tma/wgmma_tma.cuh"

namespace mm::ch09 {

/// wgmma_in_flight: big_tile's tile (128×256, two warpgroups, 4 stages), one wgmma group in flight.
struct InFlightCfg : BigTileCfg {};

/// One block: C tile (blockIdx.x, blockIdx.y) = A·B. wgmma needs sm_90a: any other device pass
/// compiles a stub (layout/arch.hpp) which the harness never launches.
template <class Cfg, GmmaMajor MajorB>
__global__ void __launch_bounds__(Cfg::kThreads, 1) wgmma_in_flight_kernel(const __grid_constant__ TmaParams<Cfg, MajorB> params) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    using Storage = TmaSharedStorage<Cfg, MajorB>;
    using Pipeline = typename Storage::Pipeline;
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    using BK = typename Cfg::BK;
    using Atom = SM90_64xNx16_F32BF16BF16_SS<BN::value, GmmaMajor::K, MajorB>;  // B K-major (RCR) or MN-major (RRR)
    constexpr int S = Cfg::kStages;
    extern __shared__ __align__(1024) std::uint8_t smem_raw[];  // 1024-byte aligned: gemm/smem.hpp
    Storage& shared = shared_storage<Storage>(smem_raw);
    auto sA = make_tensor(make_smem_ptr(shared.a), typename Storage::RingA{});  // (BM,BK,S)
    auto sB = make_tensor(make_smem_ptr(shared.b), typename Storage::RingB{});  // (BN,BK,S)

    const int tid = int(threadIdx.x);
    const int wg = tid / 128;  // this thread's warpgroup: rows 64·wg .. 64·wg+63 of the block
    const int m0 = int(blockIdx.x) * BM::value, n0 = int(blockIdx.y) * BN::value;
    const int k_tiles = int(launch::ceil_div(params.k, BK::value));
    const bool producer = tid == 0;

    // The ring: each stage expects A's and B's bytes; every warpgroup releases it.
    typename Pipeline::Params pipe_params;
    pipe_params.transaction_bytes = params.tma_a.kTransactionBytes + params.tma_b.kTransactionBytes;
    pipe_params.consumer_warpgroups = Cfg::kWarpgroups;
    pipe_params.is_leader = producer;
    pipe_params.watchdog = params.watchdog;  // the waits' bound and record (gemm/watchdog.hpp)
    Pipeline pipeline(shared.pipeline, pipe_params, tid);
    if (producer) {
      params.tma_a.prefetch();
      params.tma_b.prefetch();
    }
    __syncthreads();  // the barriers are initialized before anyone uses them

    // K step kt into the stage at `write` (producer only; `write` was acquired).
    auto load = [&](typename Pipeline::State write, int kt) {
      std::uint64_t* bar = pipeline.producer_get_barrier(write);
      params.tma_a.copy(bar, sA(_, _, write.index()), m0, kt * BK::value);
      params.tma_b.copy(bar, sB(_, _, write.index()), n0, kt * BK::value);
    };

    auto write = make_producer_start_state<Pipeline>();
    if (producer)
      for (int kt = 0; kt < S && kt < k_tiles; ++kt) {  // the first S stages are free: no wait, only the arm
        pipeline.producer_acquire(write, /*skip_wait=*/true);
        load(write, kt);
        ++write;
      }

    float acc[BN::value / 2];  // this warpgroup's 64×BN tile (the atom's C layout); overwritten at kt = 0
    typename Pipeline::State read;     // the stage to multiply next
    typename Pipeline::State release;  // the oldest stage not yet released: one behind `read`
    for (int kt = 0; kt < k_tiles; ++kt) {
      pipeline.consumer_wait(read);  // step kt has landed
      auto a_tile = local_tile(sA(_, _, read.index()), make_shape(_64{}, BK{}), make_coord(wg, 0));  // (64,BK)
      gmma_k_block<Atom, GmmaMajor::K, MajorB>(a_tile, sB(_, _, read.index()), acc, kt > 0);         // B: (BN,BK)
      ++read;
      // The change of this step: wait until at most ONE group is still running, this step's. The
      // tensor core keeps multiplying stage kt while this warpgroup waits for step kt+1 to land;
      // what is released is the stage of step kt-1, whose group has now completed.
      warpgroup_wait<1>();
      warpgroup_fence_operand(acc);
      if (kt > 0) {
        pipeline.consumer_release(release);
        ++release;
        // The producer refills the stage of step kt-1 with step kt-1+S.
        if (producer && kt - 1 + S < k_tiles) {
          pipeline.producer_acquire(write);
          load(write, kt - 1 + S);
          ++write;
        }
      }
      __syncwarp();
    }
    warpgroup_wait<0>();  // the last step's group
    warpgroup_fence_operand(acc);
    watchdog_trap_if_gave_up(pipeline.watchdog(), params.watchdog.record);

    // Epilogue: each accumulator to its place in C, as the atom's C layout says.
    store_accumulators_bf16<Atom>(acc, params.c, params.n, m0 + 64 * wg, n0, params.m, params.n, params.c_pairs,
                                  tid % 128);
  }
}

/// Empty when the kernel takes `p`: big_tile's rule.
template <class Cfg>
std::string wgmma_in_flight_rejects(const GemmProblem& p) {
  return wgmma_tma_rejects<Cfg>(p);
}

/// The one-time preparation of a launch (outside any timed region): the TMA copies of A and B, the
/// shared-memory opt-in; returns what runs the kernel on a stream. Throws std::invalid_argument for
/// a problem the kernel rejects or operands TMA cannot describe (a misaligned pointer, say).
template <class Cfg>
std::function<void(cudaStream_t)> prepare_wgmma_in_flight(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C) {
  if (std::string why = wgmma_tma_rejects<Cfg>(p); !why.empty()) throw std::invalid_argument("wgmma_in_flight: " + why);
  const dim3 grid(unsigned(launch::ceil_div(p.m, Cfg::BM::value)), unsigned(launch::ceil_div(p.n, Cfg::BN::value)));
  auto prepare = [&](auto major_b) -> std::function<void(cudaStream_t)> {
    constexpr GmmaMajor MajorB = decltype(major_b)::value;
    TmaParams<Cfg, MajorB> params{};
    make_operand_copies(params, p, A, B);
    params.watchdog = host_watchdog();
    params.c = C;
    params.m = int(p.m);
    params.n = int(p.n);
    params.k = int(p.k);
    params.c_pairs = reinterpret_cast<std::uintptr_t>(C) % 4 == 0 && p.n % 2 == 0;
    auto kernel = wgmma_in_flight_kernel<Cfg, MajorB>;
    constexpr std::size_t smem = shared_storage_bytes<TmaSharedStorage<Cfg, MajorB>>();
    opt_in_dynamic_smem(kernel, smem);
    return [kernel, grid, params](cudaStream_t stream) { kernel<<<grid, Cfg::kThreads, smem, stream>>>(params); };
  };
  if (p.b == Order::col) return prepare(std::integral_constant<GmmaMajor, GmmaMajor::K>{});
  return prepare(std::integral_constant<GmmaMajor, GmmaMajor::MN>{});
}

}  // namespace mm::ch09
