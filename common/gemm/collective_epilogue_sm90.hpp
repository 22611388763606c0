// The collective epilogues of the Hopper kernels: how a consumer warpgroup's accumulators (a 64×BN
// fp32 tile in wgmma's C layout) reach C.
//
//   CollectiveEpilogueTma      (CUTLASS's sm90 TMA warp-specialized epilogue) the tile leaves in
//                              pieces: each converted to C's type, written to a 128-byte-swizzled
//                              shared buffer (stmatrix for bf16, 8-byte stores for fp32:
//                              gemm/epilogue_sm90.hpp) and sent out by one TMA store. A store
//                              pipeline of kCBuffers buffers per warpgroup: the store of one piece
//                              overlaps the staging of the next, and the next tile's main loop starts
//                              without waiting for the last stores to land. An optional per-tensor
//                              scale (fp8) multiplies the accumulators first. A tile whose N is not
//                              a multiple of the piece (bf16: 128×160, 128×176) ends in a narrower
//                              piece, 64×(N mod 64), through the same buffers and pipeline by a
//                              second TMA store whose box is that narrow and unswizzled (a 128-byte
//                              swizzle row holds 64 columns).
//   CollectiveEpilogueStrided  each thread stores its own values, masked at C's edges, into C
//                              described by a layout: (m, n) at m·row_stride + n·col_stride. A
//                              transposed C (swap-AB's Cᵀ) is the layout (1, ldc): a host choice,
//                              not another kernel. For C that TMA cannot store, and small tiles.
//
// The store pipeline's rule, in one place (EpilogueStorePipeline): piece p of a warpgroup, counted
// across all its tiles, goes through buffer p % kCBuffers, and before refilling it the issuing thread
// waits until at most kCBuffers - 1 of its stores still read shared memory: those are pieces p - 1 ..
// p - kCBuffers + 1, none of which uses buffer p % kCBuffers. (Counting pieces within a tile, j % 2,
// is wrong when a tile has an odd number of pieces: the next tile's first piece then refills the
// buffer of the store issued last. tests/gemm/test_gemm_blocks.cpp checks the rule for 1 to 4 pieces
// per tile and 1 to 4 buffers.)
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>

#include "gemm/epilogue_sm90.hpp"
#include "gemm/problem.hpp"
#include "gemm/warp_specialization.hpp"  // named_barrier_sync
#include "layout/all.hpp"
#include "layout/copy_traits_sm90_tma.hpp"
#include "layout/mbarrier.hpp"  // fence_proxy_async_shared

namespace mm {

/// The store pipeline's buffer rule (see the file comment): which buffer piece `p` uses, and how
/// many stores may still be reading when it is refilled. Host and device.
template <int Buffers>
struct EpilogueStorePipeline {
  static_assert(Buffers >= 1, "at least one C buffer");
  static constexpr int kBuffers = Buffers;  ///< C buffers of a warpgroup
  /// Stores that may still read shared memory when the next piece is staged (tma_store_wait's N).
  static constexpr int kStoresInFlight = Buffers - 1;
  int pieces = 0;  ///< pieces this warpgroup has sent, across all its tiles

  /// The buffer of the next piece.
  MM_HD constexpr int buffer() const { return pieces % Buffers; }
  /// The issuing thread, before the next piece is staged: its buffer's last store has read it.
  MM_HD static void acquire() { tma_store_wait<kStoresInFlight>(); }
  /// After the piece's store is issued and committed.
  MM_HD constexpr void advance() { ++pieces; }
  /// The issuing thread, before the block exits: every store has read shared memory.
  MM_HD static void tail() { tma_store_wait<0>(); }
};

/// Whether and how an epilogue scales the accumulators before it stores them.
enum class EpilogueScale {
  none,        ///< C = A·B
  per_tensor,  ///< C = (*scale_a)·(*scale_b)·A·B, two floats in device memory (fp8 with per-tensor scales)
};

/// The TMA-store epilogue (see the file comment) of a kernel whose consumer warpgroups each hold
/// 64 rows × Cfg::BN of the tile. C (ElementC: bf16 or fp32) row-major, pieces of Cfg::kPieceM ×
/// kPieceN (64×64 bf16, 64×32 fp32: one 128-byte swizzle row wide), Cfg::kCBuffers per warpgroup;
/// bf16 with BN mod kPieceN = 16, 32 or 48: a last piece of that many columns (kTailN).
template <class Cfg, class ElementC, EpilogueScale Scale = EpilogueScale::none>
struct CollectiveEpilogueTma {
  static_assert(std::is_same_v<ElementC, __nv_bfloat16> || std::is_same_v<ElementC, float>, "bf16 or fp32 C");
  static_assert(Cfg::kPieceN * int(sizeof(ElementC)) == 128, "a piece is one 128-byte swizzle row wide");
  using Piece = decltype(tile_to_shape(GmmaLayoutK_SW128_Atom<ElementC>{},
                                       make_shape(Int<Cfg::kPieceM>{}, Int<Cfg::kPieceN>{})));  ///< (64,kPieceN), N contiguous
  using StorePipeline = EpilogueStorePipeline<Cfg::kCBuffers>;  ///< the buffer rule
  static constexpr int kPieces = Cfg::BN::value / Cfg::kPieceN;  ///< whole pieces of a warpgroup's 64×BN tile
  /// Columns of the last, narrower piece (0: BN is whole pieces): a multiple of 16 (stmatrix.x4's).
  static constexpr int kTailN = Cfg::BN::value % Cfg::kPieceN;
  static_assert(kTailN == 0 || (std::is_same_v<ElementC, __nv_bfloat16> && kTailN % 16 == 0),
                "a narrower last piece: bf16, a multiple of 16 columns");
  /// The last piece, (64,kTailN) in rows of kTailN elements, unswizzled (a swizzled box row is a whole
  /// swizzle row; 2-4-way bank conflicts on its Cfg::kPieceM rows' stmatrix, once a row block). In the
  /// buffers of the whole pieces. (64,16) when there is none: the type is never used.
  using TailPiece = Layout<Shape<Int<Cfg::kPieceM>, Int<kTailN == 0 ? 16 : kTailN>>, Stride<Int<kTailN == 0 ? 16 : kTailN>, _1>>;
  static_assert(cosize_v<TailPiece> <= cosize_v<Piece>, "the last piece fits a whole piece's buffer");

  /// The C buffers: kCBuffers per consumer warpgroup.
  struct TensorStorage {
    alignas(1024) ElementC c[Cfg::kConsumers][Cfg::kCBuffers][cosize_v<Piece>];  ///< (consumer, buffer, piece)
  };

  /// C's TMA store, and the scales when the epilogue has them.
  struct WholePieceParams {
    TmaCopy<SM90_TMA_STORE_2D, ElementC, Piece> tma_c;  ///< a piece of C out
    const float* scale_a = nullptr;  ///< EpilogueScale::per_tensor: A's scale (device memory)
    const float* scale_b = nullptr;  ///< B's
  };
  /// With a narrower last piece: its store too.
  struct TailPieceParams : WholePieceParams {
    TmaCopy<SM90_TMA_STORE_2D, ElementC, TailPiece> tma_c_tail;  ///< the last piece of a row block out
  };
  /// The kernel's parameters: the tail's store only where there is a tail.
  using Params = std::conditional_t<kTailN == 0, WholePieceParams, TailPieceParams>;

  /// Host: C (M×N, rows `ldc` elements apart). Throws std::invalid_argument when TMA cannot store it
  /// (a pointer or pitch not 16-byte aligned).
  static Params to_underlying_arguments(ElementC* C, int m, int n, std::int64_t ldc, const float* scale_a = nullptr,
                                        const float* scale_b = nullptr) {
    const auto gC = make_tensor(C, make_layout(make_shape(m, n), make_stride(int(ldc), _1{})));
    WholePieceParams whole{make_tma_copy(SM90_TMA_STORE_2D{}, gC, Piece{}), scale_a, scale_b};
    if constexpr (kTailN == 0) {
      return whole;
    } else {
      return {whole, make_tma_copy(SM90_TMA_STORE_2D{}, gC, TailPiece{})};
    }
  }

  /// One thread: the tensor maps into the cache.
  MM_HD static void prefetch(const Params& params) {
    params.tma_c.prefetch();
    if constexpr (kTailN != 0) params.tma_c_tail.prefetch();
  }

  /// A consumer warpgroup's side of the epilogue (every thread of it constructs one): its buffers, its
  /// store pipeline, its named barrier (1 + the warpgroup's index: 0 is __syncthreads').
  struct Consumer {
    const Params& params;    ///< the epilogue's parameters
    TensorStorage& storage;  ///< the C buffers
    int cw;      ///< consumer warpgroup index
    int t;       ///< thread in the warpgroup
    float scale = 1.0f;      ///< EpilogueScale::per_tensor: (*scale_a)·(*scale_b)
    StorePipeline stores{};  ///< this warpgroup's pieces sent

    /// Thread `thread` of consumer warpgroup `consumer` (reads the scales once, if any).
    MM_HD Consumer(const Params& p, TensorStorage& s, int consumer, int thread) : params(p), storage(s), cw(consumer), t(thread) {
      if constexpr (Scale == EpilogueScale::per_tensor) scale = *params.scale_a * *params.scale_b;
    }

    /// The warpgroup's accumulators to C (`accum`: its register fragment (MMA,MMA_M,1) of 64×BN row
    /// blocks, CollectiveMma::partition_fragment_C's): row block h from row m0 + 64·h and column n0
    /// on (elements outside C are not stored: TMA drops them).
    template <class Accumulators>
    MM_HD void store(Accumulators& accum, int m0, int n0) {
      MM_UNROLL
      for (int h = 0; h < int(size<1>(accum.layout())); ++h) store_rows(flatten(accum(_, h, 0)), m0 + Cfg::kWgmmaM * h, n0);
    }

    /// One 64×BN row block (`acc`: (2,2,BN/8), GmmaFragmentLayout<BN>) to C from row m0 and column n0 on.
    template <class Frag>
    MM_HD void store_rows(Frag&& acc, int m0, int n0) {
      if constexpr (Scale == EpilogueScale::per_tensor) {
        MM_UNROLL
        for (int v = 0; v < int(acc.size()); ++v) acc(v) *= scale;
      }
      const int bar_id = 1 + cw;
      // The row block's global coordinates, (64,BN), and piece j's, (64,kPieceN): tiles of an identity tensor.
      const auto gC = domain_offset(make_coord(m0, n0), make_identity_tensor(make_shape(Int<Cfg::kWgmmaM>{}, typename Cfg::BN{})));
      MM_UNROLL
      for (int j = 0; j < kPieces; ++j) put_piece<Cfg::kPieceN>(acc, j, bar_id, Piece{}, params.tma_c, gC, j);
      if constexpr (kTailN != 0) {  // the narrower last piece: columns from kPieces·kPieceN on
        const auto gTail = domain_offset(make_coord(m0, n0 + kPieces * Cfg::kPieceN),
                                         make_identity_tensor(make_shape(Int<Cfg::kWgmmaM>{}, Int<kTailN>{})));
        put_piece<kTailN>(acc, kPieces, bar_id, TailPiece{}, params.tma_c_tail, gTail, 0);
      }
    }

    /// Piece j of a row block (`acc`), Cols columns from 64j (bf16) or 32j (fp32) on: staged into the
    /// next buffer as `layout` places it (the warpgroup's named barrier `bar_id` around it), sent by
    /// `tma` (one thread) to the jg-th tile of Cols columns of `g`, an identity tensor of C's coordinates.
    template <int Cols, class Frag, class PieceLayout, class Tma, class G>
    MM_HD void put_piece(Frag& acc, int j, int bar_id, PieceLayout, const Tma& tma, const G& g, int jg) {
      auto piece = make_tensor(make_smem_ptr(storage.c[cw][stores.buffer()]), PieceLayout{});  // (64,Cols)
      if (t == 0) StorePipeline::acquire();  // at most kCBuffers - 1 stores (the other buffers') still read
      named_barrier_sync(bar_id, 128);
      if constexpr (std::is_same_v<ElementC, __nv_bfloat16>) {
        stage_accumulators_bf16<Cols>(acc, j, piece, t);
      } else {
        stage_accumulators_f32(acc, j, piece, t);
      }
      fence_proxy_async_shared();  // the shared-memory writes, visible to the copy engine
      named_barrier_sync(bar_id, 128);
      if (t == 0) {
        tma.store(piece, local_tile(g, make_shape(Int<Cfg::kWgmmaM>{}, Int<Cols>{}), make_coord(0, jg)));
        tma_store_commit();
      }
      stores.advance();
    }

    /// Before the block exits: the stores have read shared memory.
    MM_HD void store_tail() {
      if (t == 0) StorePipeline::tail();
    }
  };
};

/// The register epilogue (see the file comment): each thread stores its values into C as `Params`'s
/// layout places them, as bf16 or fp32. No shared memory.
template <class Cfg, class ElementC>
struct CollectiveEpilogueStrided {
  struct TensorStorage {};  ///< none: the kernel gives it no shared memory

  /// C of the kernel's problem (rows × cols): (m, n) at c[m·row_stride + n·col_stride].
  struct Params {
    ElementC* c;              ///< C in device memory
    std::int64_t row_stride;  ///< between rows of the kernel's C (1 for a transposed C)
    std::int64_t col_stride;  ///< between its columns
    int rows;                 ///< the kernel's rows (elements past them are not stored)
    int cols;                 ///< its columns
  };

  /// Host: C as the kernel's rows × cols with the given strides (a transposed C: row_stride 1).
  static Params to_underlying_arguments(ElementC* C, int rows, int cols, std::int64_t row_stride, std::int64_t col_stride) {
    return {C, row_stride, col_stride, rows, cols};
  }

  /// Nothing to prefetch: no tensor map.
  MM_HD static void prefetch(const Params&) {}

  /// A consumer warpgroup's side: nothing to set up.
  struct Consumer {
    const Params& params;  ///< where C is
    int t;                 ///< thread in the warpgroup
    /// Thread `thread` of a consumer warpgroup.
    MM_HD Consumer(const Params& p, TensorStorage&, int, int thread) : params(p), t(thread) {}

    /// The warpgroup's accumulators (its register fragment (MMA,MMA_M,1) of 64×N row blocks) to the
    /// kernel's C: row block h from row m0 + 64·h and column n0 on.
    template <class Accumulators>
    MM_HD void store(Accumulators& accum, int m0, int n0) {
      MM_UNROLL
      for (int h = 0; h < int(size<1>(accum.layout())); ++h) {
        auto acc = flatten(accum(_, h, 0));  // (2,2,N/8)
        constexpr int kN = 2 * decltype(acc.size())::value;  // the tile's columns: two a value
        using Atom = SM90_64xNx16_F32BF16BF16_SS<kN, GmmaMajor::K, GmmaMajor::K>;  // the C layout of any 64×N wgmma
        store_accumulators_strided<Atom>(acc, params.c, params.row_stride, params.col_stride, m0 + 64 * h, n0,
                                         params.rows, params.cols, t);
      }
    }
    /// No stores in flight to wait for.
    MM_HD void store_tail() {}
  };
};

}  // namespace mm
