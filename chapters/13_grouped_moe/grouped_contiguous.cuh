// Chapter 13, step 1: grouped_contiguous. Every expert's GEMM of a mixture-of-experts layer in one
// persistent launch: chapter 11's tile_shapes kernel (128×256 tiles, a producer warpgroup and two
// consumers, C out by TMA stores) with one block changed, the tile scheduler.
//
//   expert g:  C_g (M_g × N) = A_g (M_g × K) · B_gᵀ      B_g: N × K (an nn.Linear weight), one per expert
//
// The routed tokens are sorted by expert into one A, expert after expert. A loop of one GEMM per
// expert (cuBLAS's way, and chapter 11's) launches E kernels: between them the GPU drains, and each
// expert's last wave leaves SMs idle. Here the scheduler (gemm/tile_scheduler_group_sm90.hpp,
// CUTLASS's PersistentTileSchedulerSm90Group) lists the tiles of every expert one after the other and
// the 132 persistent blocks walk that list, so one expert's tail wave is filled by the next expert's
// tiles. The row counts are read on the device: the host launches without knowing them.
//
//   GemmKernelCooperative          unchanged (it asks the scheduler where a tile is: tile_origin)
//   + CollectiveMma                unchanged: A as (rows × K), B as the experts' weights stacked, (E·N) × K
//   + CollectiveEpilogueTma        unchanged: C as (rows × N)
//   + PersistentGroupTileScheduler the new block: a tile's expert, its rows in A and C, its weight's rows
//
// A tile must never read another expert's rows. TMA loads whole 128-row boxes, so each expert's rows
// start on a multiple of 128 (DeepGEMM's "contiguous" layout): the caller that sorts the tokens leaves
// up to 127 rows of padding after each expert (`offsets[g + 1]` is where expert g ends; it starts at
// align_up(offsets[g], 128)). A tile then holds one expert's rows and that expert's padding, whose
// products land in C's padding rows, which nobody reads. What it costs: the padding's MMA (the
// expert's last tile runs 128 rows however few are real) and its bytes; the page measures both.
// B needs N % 256 == 0 so that a tile's 256 columns stay inside one expert's weight.
//
// Build: cmake --build build --target ch13_grouped_moe
// Run:   build/bin/ch13_grouped_moe --model qwen3 --tokens 4096
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm/collective_epilogue_sm90.hpp"
#include "gemm/collective_mma_sm90.hpp"
#include "gemm/kernel_adapter.hpp"
#include "gemm/kernel_sm90.hpp"
#include "gemm/tile_scheduler_group_sm90.hpp"

namespace mm::ch13 {

using bf16 = __nv_bfloat16;

/// Chapter 11's 128×256 tile: K steps of 64, 4 stages, two consumer warpgroups.
struct GroupedCfg : KernelConfig<128, 256, 64, 4> {};

/// Decode's tile (step 2): 64 rows, one consumer warpgroup, 5 stages (chapter 11's Tile64x256Cfg).
/// At decode an expert holds a few rows; a 128-row tile multiplies 124 rows of padding and reads them.
struct GroupedCfg64 : KernelConfig<64, 256, 64, 5> {};

/// grouped_contiguous's kernel: chapter 11's tile_shapes with the grouped scheduler.
template <class Cfg = GroupedCfg, class Epilogue = CollectiveEpilogueTma<Cfg, bf16>>
using GroupedKernel = GemmKernelCooperative<Cfg, CollectiveMma<Cfg, bf16>, Epilogue, PersistentGroupTileScheduler>;

/// A grouped GEMM as the kernel takes it: E experts sharing N and K, A and C of `rows` rows (every
/// expert's, with their padding), B the experts' N×K weights one after the other (K-major, rows K
/// apart). The rows of each expert are on the device, in one of the scheduler's two forms.
struct GroupedProblem {
  int groups = 1;                        ///< E: experts
  int n = 0;                             ///< columns of every C_g (rows of every B_g)
  int k = 0;                             ///< the inner dimension
  std::int64_t rows = 0;                 ///< rows of A and C (the buffers)
  const std::int64_t* offsets = nullptr; ///< contiguous: E + 1 ends in device memory (expert g starts at align_up(offsets[g], 128))
  const int* counts = nullptr;           ///< masked: E counts in device memory, expert g's rows from g·capacity
  std::int64_t capacity = 0;             ///< masked: rows between two experts' first rows
};

/// Columns of C an epilogue writes for a tile of `bn` columns: `bn`, or the epilogue's
/// kOutputColumnsPerTile when it has one (step 3's SiLU(gate)·up: half).
template <class Epilogue>
constexpr int output_columns_per_tile(int bn) {
  if constexpr (requires { Epilogue::kOutputColumnsPerTile; }) return Epilogue::kOutputColumnsPerTile;
  else return bn;
}

/// Rows a tile holds: each expert's first row is a multiple of it.
inline constexpr int kGroupAlignment = GroupedCfg::BM::value;

/// Empty when grouped_contiguous takes `g`; otherwise the rule it breaks, in one line.
inline std::string grouped_rejects(const GroupedProblem& g) {
  if (g.groups < 1) return "needs at least one expert";
  if (g.n < 1 || g.k < 1) return "needs N and K of at least 1";
  if (g.n % GroupedCfg::BN::value != 0)
    return "needs N % 256 == 0: a 256-column tile must not cross into the next expert's weight (B is the experts' N×K weights stacked)";
  if (g.k % 8 != 0) return "needs K % 8 == 0: TMA reads rows whose pitch is a multiple of 16 bytes";
  if ((g.offsets == nullptr) == (g.counts == nullptr)) return "needs either offsets (contiguous) or counts (masked)";
  if (g.counts && (g.capacity < 1 || g.capacity % kGroupAlignment != 0))
    return "needs a capacity that is a multiple of 128 (masked): every expert's first row on a tile's edge";
  if (g.rows < 1) return "needs A and C of at least one row";
  if (g.rows > INT32_MAX || std::int64_t(g.groups) * g.n > INT32_MAX) return "needs rows and E·N below 2^31 (TMA's int coordinates)";
  return {};
}

/// Empty when the host's copy of the rows the kernel will read from the device describes experts it can
/// walk inside A and C's `g.rows` rows; otherwise one line saying what is wrong. `host`: the E + 1
/// offsets (contiguous: offsets[0] = 0, each expert ending at or after its start aligned to 128, the
/// last end within g.rows) or the E counts (masked: each from 0 to the capacity, E·capacity within
/// g.rows). A caller that keeps its layout on the host asks this before the launch; one whose router
/// writes it on the device relies on the scheduler's clamping, which keeps every tile in its expert's
/// buffer whatever the counts.
template <class Count>
std::string grouped_layout_rejects(const GroupedProblem& g, const std::vector<Count>& host) {
  const bool contiguous = g.offsets != nullptr;
  if (host.size() != std::size_t(g.groups) + (contiguous ? 1 : 0))
    return contiguous ? "needs E + 1 offsets" : "needs E counts";
  std::vector<std::int64_t> offsets;
  std::vector<int> counts;
  for (Count c : host) (contiguous ? offsets.push_back(std::int64_t(c)) : counts.push_back(int(c)));
  const auto p = contiguous ? PersistentGroupTileScheduler::contiguous(g.groups, offsets.data(), kGroupAlignment, 1, 1, 1,
                                                                       kGroupAlignment)
                            : PersistentGroupTileScheduler::masked(g.groups, counts.data(), g.capacity, kGroupAlignment, 1);
  if (std::string why = PersistentGroupTileScheduler::rejects(p); !why.empty()) return why;
  const std::int64_t end = contiguous ? offsets.back() : std::int64_t(g.groups) * g.capacity;
  if (end > g.rows)
    return "the experts' rows end at row " + std::to_string(end) + ", past A and C's " + std::to_string(g.rows);
  return {};
}

/// The layout of a contiguous grouped A (and C) for `rows_per_expert`: where each expert starts and
/// ends when each starts on a multiple of `alignment` (DeepGEMM's psum layout).
struct ContiguousLayout {
  std::vector<std::int64_t> offsets;  ///< E + 1: offsets[0] = 0, offsets[g + 1] = expert g's end
  std::vector<std::int64_t> first;    ///< E: expert g's first row
  std::int64_t rows = 0;              ///< rows of A and C: the last end rounded up to the alignment (at least 1 tile)
};

/// The contiguous layout of `rows_per_expert` (each >= 0) with every expert starting on a multiple of `alignment`.
inline ContiguousLayout contiguous_layout(const std::vector<std::int64_t>& rows_per_expert, int alignment = kGroupAlignment) {
  ContiguousLayout l;
  l.offsets.push_back(0);
  for (std::int64_t r : rows_per_expert) {
    if (r < 0) throw std::invalid_argument("grouped_contiguous: an expert of negative rows");
    const std::int64_t start = (l.offsets.back() + alignment - 1) / alignment * alignment;
    l.first.push_back(start);
    l.offsets.push_back(start + r);
  }
  l.rows = std::max<std::int64_t>((l.offsets.back() + alignment - 1) / alignment * alignment, alignment);
  return l;
}

/// The grouped scheduler's arguments for `g` (its contiguous or masked form) with the tile of `Cfg`.
template <class Cfg>
PersistentGroupTileScheduler::Params grouped_schedule(const GroupedProblem& g) {
  const int tiles_n = g.n / Cfg::BN::value, k_steps = (g.k + Cfg::BK::value - 1) / Cfg::BK::value;
  return g.offsets ? PersistentGroupTileScheduler::contiguous(g.groups, g.offsets, Cfg::BM::value, tiles_n, Cfg::kGroupM,
                                                              k_steps, kGroupAlignment)
                   : PersistentGroupTileScheduler::masked(g.groups, g.counts, g.capacity, Cfg::BM::value, tiles_n, Cfg::kGroupM,
                                                          k_steps);
}

/// grouped_contiguous (or masked, by g's form) with the tile of `Cfg`: the blocks' arguments, then the
/// adapter (a grid of the blocks the GPU holds at once, at most `max_blocks` when above 0). A: g.rows ×
/// K, B: (E·N) × K, C: g.rows × N, all row-major. Throws std::invalid_argument for a problem it refuses.
/// `Epilogue`: C's columns per tile are the tile's (CollectiveEpilogueTma) or what the epilogue says
/// (its kOutputColumnsPerTile: step 3's SiLU(gate)·up writes half).
template <class Cfg = GroupedCfg, class Epilogue = CollectiveEpilogueTma<Cfg, bf16>>
PreparedGemm prepare_grouped(const GroupedProblem& g, const bf16* A, const bf16* B, bf16* C, int max_blocks = 0) {
  if (std::string why = grouped_rejects(g); !why.empty()) throw std::invalid_argument("grouped_contiguous: " + why);
  using Kernel = GroupedKernel<Cfg, Epilogue>;
  typename GemmAdapter<Kernel>::Arguments args{};
  args.mainloop = Kernel::Mainloop::to_underlying_arguments(A, B, int(g.rows), g.groups * g.n, g.k, g.k, g.k);
  const int c_cols = int(std::int64_t(g.n) * output_columns_per_tile<Epilogue>(Cfg::BN::value) / Cfg::BN::value);
  args.epilogue = Kernel::Epilogue::to_underlying_arguments(C, int(g.rows), c_cols, c_cols);
  args.scheduler = grouped_schedule<Cfg>(g);
  args.max_blocks = max_blocks;
  GemmAdapter<Kernel> gemm;
  gemm.initialize(args);
  const std::string tile = std::to_string(Cfg::BM::value) + "x" + std::to_string(Cfg::BN::value) +
                           (Cfg::kSkipIdleConsumers ? " skipping padding" : "") +
                           (c_cols != g.n ? " SiLU(gate)·up" : "");
  return gemm.prepared((g.offsets ? "grouped_contiguous " : "grouped_masked ") + tile);
}

}  // namespace mm::ch13
