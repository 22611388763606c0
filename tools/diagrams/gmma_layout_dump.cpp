// Prints where chapter 09's shared-memory stages put each element, and the wgmma descriptors
// make_gmma_desc reads off them: the facts the descriptor pictures of tools/diagrams/hopper_diagrams.py
// draw. That script computes the same from the PTX ISA's formulas; the CTest plots.diagrams_layout
// runs both and fails if they disagree, so the pictures cannot drift from the layouts the kernels use.
//
// Usage: gmma_layout_dump      (CPU only; one fact per line on stdout)
//   elem K <mn> <k> <byte>     A stage (64,64), K-major (chapter 09's tma step): byte offset of (m, k)
//   elem MN <mn> <k> <byte>    B stage (128,64), MN-major (RRR): byte offset of (n, k)
//   desc <K|MN> <kk> <start> <lbo> <sbo> <swizzle bytes>   the descriptor of k16 slice kk (start
//                              relative to the stage's first byte)
#include <cuda_bf16.h>

#include <cstdint>
#include <cstdio>

#include "gemm/smem_layout_sm90.hpp"
#include "layout/all.hpp"
#include "layout/mma_sm90.hpp"

using namespace mm;
using bf16 = __nv_bfloat16;

namespace {

// The stages of chapter 09's tma step (TmaCfg: BM = 64, BN = 128, BK = 64, 4 stages).
using RingA = GmmaRing<bf16, GmmaMajor::K, _64, _64, 4>;     // (BM,BK,S)
using RingB = GmmaRing<bf16, GmmaMajor::MN, _128, _64, 4>;   // (BN,BK,S), B row-major (RRR)
using StageA = GmmaStage<RingA>;                             // (64,64)
using StageB = GmmaStage<RingB>;                             // (128,64)

alignas(1024) bf16 smem_a[cosize_v<RingA>];
alignas(1024) bf16 smem_b[cosize_v<RingB>];

template <class Stage>
void print_elements(const char* major, int mn_extent, int k_extent) {
  constexpr Stage stage{};
  for (int mn = 0; mn < mn_extent; ++mn)
    for (int k = 0; k < k_extent; ++k)
      std::printf("elem %s %d %d %d\n", major, mn, k, int(stage(make_coord(mn, k))) * int(sizeof(bf16)));
}

void print_desc(const char* major, int kk, GmmaDescriptor d, const bf16* base) {
  const std::uint32_t base_field = std::uint32_t(reinterpret_cast<std::uintptr_t>(base)) & 0x3FFF0u;
  std::printf("desc %s %d %u %u %u %d\n", major, kk, (d.start_bytes() - base_field) & 0x3FFF0u, d.lbo_bytes(),
              d.sbo_bytes(), gmma_swizzle_bytes(d.swizzle()));
}

}  // namespace

int main() {
  print_elements<StageA>("K", 16, 64);   // two 8-row groups: what SBO steps over
  print_elements<StageB>("MN", 128, 16);  // two 64-n panels (LBO) and two 8-k groups (SBO)
  auto sA = make_tensor(make_smem_ptr(smem_a), RingA{});  // (64,64,S)
  auto sB = make_tensor(make_smem_ptr(smem_b), RingB{});  // (128,64,S)
  for (int kk = 0; kk < 4; ++kk) {
    // As gmma_k_block slices a stage: k16 slice kk of the (64,64) A tile and of the (128,64) B tile.
    auto a_k = local_tile(sA(_, _, 0), make_shape(_64{}, _16{}), make_coord(0, kk));   // (64,16)
    auto b_k = local_tile(sB(_, _, 0), make_shape(_128{}, _16{}), make_coord(0, kk));  // (128,16)
    print_desc("K", kk, make_gmma_desc<GmmaMajor::K>(a_k), smem_a);
    print_desc("MN", kk, make_gmma_desc<GmmaMajor::MN>(b_k), smem_b);
  }
  return 0;
}
