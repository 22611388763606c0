// Host emulation of a warp-wide tensor-core instruction (mma.sync), for the CPU tests.
//
// One lane of an mma.sync cannot be run on its own: every lane's D depends on the registers of the
// other 31 (mma_sm80.hpp's atoms stop loudly when called on the host). A CPU test collects the
// fragments of all 32 lanes instead and hands them to mma_sync_on_host, which does what the tensor
// core does, through the atom's traits only:
//
//   1. scatter: lane t's value v of A lands at ALayout(t, v) of the atom's (M,K) tile (B, C alike);
//      every element of each tile must be hit exactly once (the TV layouts are bijections);
//   2. multiply: D(m,n) = C(m,n) + sum_k A(m,k) * B(n,k), in double;
//   3. gather: lane t's value v of D is D at CLayout(t, v).
//
//   mma_sync_on_host(SM80_16x8x16_F32BF16BF16F32_TN{},
//                    [&](int lane) { return tCrA[lane](_, m, k); },   // (MMA) values of each lane
//                    [&](int lane) { return tCrB[lane](_, n, k); },
//                    [&](int lane) { return tCrC[lane](_, m, n); },
//                    [&](int lane) { return tCrC[lane](_, m, n); });  // D may alias C
//
// gemm_warp_on_host does the same for a whole TiledMMA fragment of one warp (every (m, n, k) atom,
// as gemm(mma, A, B, C) does on the device). Since a wrong TV layout scatters an operand to the
// wrong place, these emulations are what lets a CPU test check a warp-wide TiledMMA end to end.
// Host only.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "layout/mma_sm80.hpp"

namespace mm {

namespace detail {
// The value the tensor core multiplies, for one operand element of atom Op. bf16 and fp32 convert
// exactly; a tf32 operand is an fp32 register whose 13 low mantissa bits the instruction ignores
// (to_tf32 rounds them away first; if it did not, the hardware truncates, and so do we).
template <class Op, class V>
double mma_operand_value(V const& x) {
  if constexpr (std::is_same_v<Op, SM80_16x8x8_F32TF32TF32F32_TN>) {
    float f = float(x);
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    u &= 0xffffe000u;
    std::memcpy(&f, &u, sizeof u);
    return double(f);
  } else if constexpr (std::is_same_v<std::remove_cvref_t<V>, __nv_bfloat16>) {
    return double(__bfloat162float(x));
  } else {
    return double(x);
  }
}

// Scatters the lanes' values of one operand into its atom tile (column-major) through `tv`,
// checking that every element is written exactly once.
template <class Op, class TV, class Lanes>
std::vector<double> mma_scatter(TV const& tv, int tile_size, Lanes const& lanes, char const* what) {
  std::vector<double> tile(tile_size, 0.0);
  std::vector<int> hits(tile_size, 0);
  for (int t = 0; t < int(size<0>(tv)); ++t) {
    auto frag = lanes(t);
    layout_check(int(size(frag)) == int(size<1>(tv)), what);
    for (int v = 0; v < int(size<1>(tv)); ++v) {
      int idx = int(tv(t, v));
      layout_check(0 <= idx && idx < tile_size, what);
      tile[idx] = mma_operand_value<Op>(frag(v));
      hits[idx] += 1;
    }
  }
  for (int h : hits) layout_check(h == 1, what);
  return tile;
}
}  // namespace detail

/// Emulates one warp-wide `Op` (an mma.sync atom with MMA_Traits) on the host: D = A·B + C, where
/// `a(lane)`, `b(lane)`, `c(lane)` return lane's register fragment of A, B, C (any tensor of the
/// atom's value count, values in the traits' value order) and `d(lane)` a writable one for D. The
/// fragments are scattered into the atom's tiles through ALayout/BLayout/CLayout (each must hit every
/// element exactly once, or layout_check stops), multiplied in double, and D is gathered back through
/// CLayout, rounded once to ValTypeD. All of C is read before D is written, so D may alias C. The
/// tensor core rounds its own way (fp32 adds in some order); compare with a tolerance.
template <class Op, class LanesA, class LanesB, class LanesC, class LanesD>
void mma_sync_on_host(Op const&, LanesA const& a, LanesB const& b, LanesC const& c, LanesD const& d) {
  using Tr = MMA_Traits<Op>;
  using MNK = typename Tr::Shape_MNK;
  constexpr int M = size_v<decltype(make_layout(get<0>(MNK{})))>;
  constexpr int N = size_v<decltype(make_layout(get<1>(MNK{})))>;
  constexpr int K = size_v<decltype(make_layout(get<2>(MNK{})))>;
  static_assert(size_v<typename Tr::ThrID> == 32, "mma_sync_on_host: a warp-wide atom (32 lanes)");
  auto A = detail::mma_scatter<Op>(typename Tr::ALayout{}, M * K, a, "mma_sync_on_host: A's TV layout is not a bijection onto (M,K)");
  auto B = detail::mma_scatter<Op>(typename Tr::BLayout{}, N * K, b, "mma_sync_on_host: B's TV layout is not a bijection onto (N,K)");
  auto Cm = detail::mma_scatter<Op>(typename Tr::CLayout{}, M * N, c, "mma_sync_on_host: C's TV layout is not a bijection onto (M,N)");
  std::vector<double> D(M * N);
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < M; ++m) {
      double acc = Cm[m + M * n];
      for (int k = 0; k < K; ++k) acc += A[m + M * k] * B[n + N * k];
      D[m + M * n] = acc;
    }
  typename Tr::CLayout ctv;
  for (int t = 0; t < 32; ++t) {
    auto frag = d(t);
    for (int v = 0; v < int(size<1>(ctv)); ++v) frag(v) = typename Tr::ValTypeD(D[int(ctv(t, v))]);
  }
}

/// gemm(mma, A, B, C) for the 32 lanes of one warp of a TiledMMA whose atom is warp-wide, on the
/// host: `a[lane]`, `b[lane]`, `c[lane]` are the lanes' fragments (MMA,MMA_M,MMA_K), (MMA,MMA_N,MMA_K),
/// (MMA,MMA_M,MMA_N) (from partition_fragment_A/B/C or partition_A/B/C of the lanes' thread indices),
/// and every (m, n, k) atom runs through mma_sync_on_host, in gemm's order. C is updated in place.
template <class TiledMma, class FragsA, class FragsB, class FragsC>
void gemm_warp_on_host(TiledMma const&, FragsA const& a, FragsB const& b, FragsC& c) {
  using Op = typename TiledMma::atom_type::op_type;
  for (int k = 0; k < int(size<2>(a[0])); ++k)
    for (int m = 0; m < int(size<1>(a[0])); ++m)
      for (int n = 0; n < int(size<1>(b[0])); ++n) {
        auto lane_c = [&](int lane) { return c[lane](_, m, n); };
        mma_sync_on_host(Op{}, [&](int lane) { return a[lane](_, m, k); }, [&](int lane) { return b[lane](_, n, k); },
                         lane_c, lane_c);
      }
}

}  // namespace mm
