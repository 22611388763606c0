// Chapter 11, appendix step narrow_tiles: decode (M <= 64) without the swap, in one round of 64-row
// tiles whose N is cut to the SM count; and the small problems (512³: 32 tiles of tile_shapes' 128×64
// for 132 SMs, where cuBLAS runs 96 of 64×48) in one round of 64-row tiles too.
//
// swap_ab puts N on wgmma's M, so its tiles come in 64 or 128 rows of N: at N = 10240, 80 tiles of 128
// rows (60% of 132 SMs) or 160 of 64 (two rounds). wgmma's N goes from 8 to 256 in steps of 8, so the
// other orientation, C's 64 rows on wgmma's M and N on its N, can cut N into as many tiles as there
// are SMs: 128 tiles of 80 columns at N = 10240, one per SM. cuBLAS's decode kernel at 64×10240×8192
// runs 92 tiles of 112 rows of N with DRAM at 83-85% of its peak, where swap_ab's 80 tiles reach 70-73%
// (profiles/session_2026-11-30n_issue36.txt): at M = 64 every byte of B feeds 64 rows, and with 80
// SMs each one's tensor core is about two thirds busy streaming its share; more SMs share the work.
//
// What changes from tile_shapes: the tile (64 rows, one consumer warpgroup, N from narrow_tile_n) and
// the epilogue, C stored by the registers (CollectiveEpilogueStrided: a 64×80 tile is not a whole
// number of the TMA epilogue's 64-column pieces). The kernel is any_shape's tile kernel, K whole.
//
// Build: cmake --build build --target ch11_every_shape   (configured with -DMM_APPENDIX_STEPS=ON)
// Run:   build/bin/ch11_every_shape --kernel narrow_tiles --sizes 64x10240x8192,512
#pragma once

#include "11_every_shape/any_shape.cuh"

namespace mm::ch11 {

/// A 64×BN tile of C with one consumer warpgroup, K steps of 64, as many stages (at most 8) as 200 KB
/// of shared memory hold.
template <int BN_>
struct Narrow64Cfg : KernelConfig<64, BN_, 64, std::min(8, 200 * 1024 / ((64 + BN_) * 64 * 2))> {};

/// The tile widths narrow_tiles takes (wgmma N with a bf16 atom, tools/gen_mma_sm90_ops.py).
inline constexpr int kNarrowTileNs[] = {32, 48, 64, 80, 96, 112, 128};

/// The narrowest width of kNarrowTileNs whose 64-row tiles of C fit one round of `sms` SMs (the
/// widest if none does).
inline int narrow_tile_n(const GemmProblem& p, int sms) {
  const std::int64_t rows = launch::ceil_div(p.m, std::int64_t(64));
  for (int bn : kNarrowTileNs)
    if (rows * launch::ceil_div(p.n, std::int64_t(bn)) <= sms) return bn;
  return kNarrowTileNs[std::size(kNarrowTileNs) - 1];
}

/// Calls `f(Narrow64Cfg<bn>{})`.
template <class F>
decltype(auto) with_narrow_tile(int bn, F&& f) {
  switch (bn) {
    case 32: return f(Narrow64Cfg<32>{});
    case 48: return f(Narrow64Cfg<48>{});
    case 64: return f(Narrow64Cfg<64>{});
    case 80: return f(Narrow64Cfg<80>{});
    case 96: return f(Narrow64Cfg<96>{});
    case 112: return f(Narrow64Cfg<112>{});
    default: return f(Narrow64Cfg<128>{});
  }
}

/// narrow_tiles' rule: RCR and TMA's rules for A and B (C is stored by the registers: any N).
inline std::string narrow_tiles_rejects(const GemmProblem& p) { return rcr_tma_rejects(p); }

/// The step: the tile of narrow_tile_n, K whole, C stored by the registers.
template <class = void>  // compiled where it is called, not where its header is included (step_rules.hpp)
PreparedGemm prepare_narrow_tiles(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, int max_blocks = 0) {
  check_step("narrow_tiles", narrow_tiles_rejects(p), A, B, nullptr);
  return with_narrow_tile(narrow_tile_n(p, device_sm_count()), [&](auto cfg) {
    using Cfg = decltype(cfg);
    using Kernel = AnyShapeKernel<Cfg, GmmaMajor::K, CollectiveEpilogueStrided<Cfg, bf16>>;
    const SplitKTileScheduler units = SplitKTileScheduler::make(tile_order<Cfg>(p), k_steps_of<Cfg>(p), 1);
    return detail::prepare_any_tile_kernel<Kernel>({p.m, p.n, p.k}, {A, p.k}, {B, p.k},
                                                   Kernel::Epilogue::to_underlying_arguments(C, int(p.m), int(p.n), p.n, 1),
                                                   units, max_blocks, "narrow_tiles " + tile_name<Cfg>());
  });
}

}  // namespace mm::ch11
