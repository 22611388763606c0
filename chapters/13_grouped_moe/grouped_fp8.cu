// Chapter 13, step 5: grouped_fp8 (grouped_fp8.hpp), compiled once.
#include "13_grouped_moe/grouped_fp8.hpp"

#include <stdexcept>

#include "12_hopper_datatypes/fp8_block_scaled.cuh"
#include "12_hopper_datatypes/fp8_block_scaled_small_m.cuh"  // Fp8Block64Cfg

namespace mm::ch13 {

namespace {

using GroupedFp8Cfg = ch12::Fp8BlockCfg;      // 128×256 tiles, K steps of 128, two consumers taking turns
using GroupedFp8Cfg64 = ch12::Fp8Block64Cfg;  // decode's: 64×256, one consumer, 5 stages (chapter 12's small-M tile)

/// Chapter 12's block-scaled main loop, told where a grouped tile is. Its mma() reads the scales of the
/// tile's rows (work.tile.m · BM onwards) and of B's column blocks (work.tile.n · 2 onwards) as one
/// GEMM's tile would: a grouped tile is handed to it as the tile of one GEMM of all rows by all experts'
/// stacked weights, row tile row_begin / BM (every expert's rows start on a multiple of 128) and column
/// tile b_tile_n (its expert's tiles in the stacked B). The loads need nothing: the kernel gives them
/// tile_origin's rows already.
template <class Cfg, ch12::WarpgroupTurns Turns>
struct CollectiveMmaBlockScaledGrouped : ch12::CollectiveMmaBlockScaled<Cfg, true, true, true, Turns> {
  static_assert(kGroupAlignment % Cfg::BM::value == 0, "every expert's first row is on a tile's edge");
  using Base = ch12::CollectiveMmaBlockScaled<Cfg, true, true, true, Turns>;
  template <class Pipe, class Accumulators>
  MM_HD static void mma(const typename Base::Params& params, Pipe& pipeline, typename Base::State& read,
                        typename Base::State& release, typename Base::TensorStorage& storage, Accumulators& accum, int cw,
                        const GroupWorkTileInfo& work) {
    WorkUnit unit = work;
    unit.tile.m = int(work.row_begin / Cfg::BM::value);
    unit.tile.n = work.b_tile_n;
    Base::mma(params, pipeline, read, release, storage, accum, cw, unit);
  }
};

/// The grouped kernel of a block-scaled tile: two consumers take turns (chapter 12's), one has none.
template <class Cfg>
using GroupedFp8Kernel = GemmKernelCooperative<
    Cfg,
    CollectiveMmaBlockScaledGrouped<Cfg, Cfg::kConsumers == 2 ? ch12::WarpgroupTurns::per_half : ch12::WarpgroupTurns::none>,
    CollectiveEpilogueTma<Cfg, bf16>, PersistentGroupTileScheduler>;

template <class Cfg>
PreparedGemm prepare(const GroupedProblem& g, const __nv_fp8_e4m3* A, const __nv_fp8_e4m3* B, const float* scale_a,
                     const float* scale_b, bf16* C, int max_blocks) {
  using Kernel = GroupedFp8Kernel<Cfg>;
  // The main loop sees one GEMM of all rows by all experts' stacked weights; the scheduler's tiles
  // keep each to its expert.
  GemmProblem p;
  p.m = g.rows, p.n = std::int64_t(g.groups) * g.n, p.k = g.k;
  p.a = Order::row, p.b = Order::col, p.c = Order::row;
  p.scale_a = scale_a, p.scale_b = scale_b;
  typename GemmAdapter<Kernel>::Arguments args{};
  args.mainloop = Kernel::Mainloop::to_underlying_arguments(p, A, B);
  args.epilogue = Kernel::Epilogue::to_underlying_arguments(C, int(g.rows), g.n, g.n);
  args.scheduler = grouped_schedule<Cfg>(g);
  args.max_blocks = max_blocks;
  GemmAdapter<Kernel> gemm;
  gemm.initialize(args);
  return gemm.prepared(std::string(g.offsets ? "grouped_contiguous" : "grouped_masked") + " fp8 block-scaled " +
                       std::to_string(Cfg::BM::value) + "x" + std::to_string(Cfg::BN::value));
}

}  // namespace

std::string grouped_fp8_rejects(const GroupedProblem& g) {
  if (std::string why = grouped_rejects(g); !why.empty()) return why;
  if (g.k % 16 != 0) return "needs K % 16 == 0: TMA reads rows whose pitch is a multiple of 16 bytes (e4m3)";
  return {};
}

PreparedGemm prepare_grouped_fp8(const GroupedProblem& g, const __nv_fp8_e4m3* A, const __nv_fp8_e4m3* B, const float* scale_a,
                                 const float* scale_b, bf16* C, int max_blocks, int tile_rows) {
  if (std::string why = grouped_fp8_rejects(g); !why.empty()) throw std::invalid_argument("grouped_fp8: " + why);
  if (scale_a == nullptr || scale_b == nullptr) throw std::invalid_argument("grouped_fp8: needs the block scales of A and B");
  if (tile_rows == 128) return prepare<GroupedFp8Cfg>(g, A, B, scale_a, scale_b, C, max_blocks);
  if (tile_rows == 64) return prepare<GroupedFp8Cfg64>(g, A, B, scale_a, scale_b, C, max_blocks);
  throw std::invalid_argument("grouped_fp8: tiles of 128 or 64 rows, not " + std::to_string(tile_rows));
}

PreparedGemm prepare_dense_fp8_block_scaled(const GemmProblem& p, const __nv_fp8_e4m3* A, const __nv_fp8_e4m3* B, bf16* C) {
  return ch12::prepare_fp8_block_scaled(p, A, B, C);
}

}  // namespace mm::ch13
