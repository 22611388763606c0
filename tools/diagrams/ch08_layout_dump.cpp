// Prints what chapter 08's pictures of ldmatrix and of the swizzle show, computed by the layout library:
// the warp's ldmatrix.x4 of one A operand of mma.sync m16n8k16 (make_tiled_copy_A from the chapter's
// atoms, emulated on the host as tests/layout does), and the bank groups of the `swizzled` step's A
// stage with and without its swizzle. tools/diagrams/ch08_diagrams.py computes the same facts from
// the PTX ISA's formulas; the CTest plots.ch08_diagrams_layout runs both and fails if they disagree.
//
// Usage: ch08_layout_dump      (CPU only; one fact per line on stdout)
//   src <lane> <m> <k>          lane gives the address of the 16-byte row that starts at A(m, k)
//   dst <lane> <reg> <half> <m> <k>   lane receives A(m, k) in register reg, half half (0: low 16 bits)
//   bank <plain|swizzled> <m> <unit> <group>   the 16-byte unit `unit` of row m (k = 8·unit .. 8·unit+7)
//                               of a (128,32) bf16 A stage lies in bank group `group` (its 16-byte slot
//                               in a 128-byte line: banks 4·group .. 4·group+3)
#include <cuda_bf16.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "layout/all.hpp"

using namespace mm;
using bf16 = __nv_bfloat16;

namespace {

// One warp of chapter 08's TiledMMA: the bf16 atom, and the permutation that gives a warp 16×16 of C
// per repetition (one A atom, two B atoms: what one ldmatrix.x4 loads), as KernelTraits builds it.
using WarpMma = decltype(make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, Layout<Shape<_1, _1, _1>>{},
                                        Tile<_16, _16, Underscore>{}));

void print_ldmatrix_a() {
  WarpMma mma;
  // A 16×16 K-major A tile whose element (m, k) holds the bit pattern 16·m + k + 1 (never 0).
  std::vector<std::uint16_t> bits(16 * 16);
  for (int i = 0; i < 256; ++i) bits[i] = std::uint16_t(i + 1);
  std::vector<bf16> buf(256);
  std::memcpy(static_cast<void*>(buf.data()), bits.data(), 2 * bits.size());
  auto sA = make_tensor(buf.data(), make_layout(make_shape(_16{}, _16{}), LayoutRight{}));  // (M,K)
  auto s2r = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, bf16>{}, mma);
  using Frag = decltype(mma.get_slice(0).partition_fragment_A(sA));  // (MMA,MMA_M,MMA_K)
  std::array<Frag, 32> frags;
  using Src = decltype(s2r.get_slice(0).partition_S(sA));
  using Dst = decltype(s2r.get_slice(0).retile_D(frags[0]));
  std::array<Src, 32> srcs;
  std::array<Dst, 32> dsts;
  for (int lane = 0; lane < 32; ++lane) {
    frags[lane] = mma.get_slice(lane).partition_fragment_A(sA);
    auto thr = s2r.get_slice(lane);
    srcs[lane] = thr.partition_S(sA);             // (CPY,CPY_M,CPY_K)
    dsts[lane] = thr.retile_D(frags[lane]);       // (CPY,CPY_M,CPY_K)
    const int e = int(&srcs[lane](0) - buf.data());
    std::printf("src %d %d %d\n", lane, e / 16, e % 16);
  }
  copy_warp_on_host(s2r, srcs, dsts);
  for (int lane = 0; lane < 32; ++lane) {
    auto d = dsts[lane];
    for (int v = 0; v < int(size(d)); ++v) {
      std::uint16_t b = 0;
      std::memcpy(&b, &d(v), 2);
      const int e = int(b) - 1;
      std::printf("dst %d %d %d %d %d\n", lane, v / 2, v % 2, e / 16, e % 16);
    }
  }
}

// The `swizzled` step's A stage, (128,32) bf16 K-major (64-byte rows), as KernelTraits::k_major_smem
// builds it: the (8,32) atom, plain or composed with Swizzle<2,3,3>, tiled over the stage.
void print_banks() {
  auto atom = Layout<Shape<_8, _32>, Stride<_32, _1>>{};
  auto plain = tile_to_shape(atom, make_shape(_128{}, _32{}));
  auto swizzled = tile_to_shape(composition(Swizzle<2, 3, 3>{}, atom), make_shape(_128{}, _32{}));
  auto group = [](int elem) { return (2 * elem / 16) % 8; };  // 16-byte slot of the element's 128-byte line
  for (int m = 0; m < 16; ++m)
    for (int u = 0; u < 4; ++u) {
      std::printf("bank plain %d %d %d\n", m, u, group(int(plain(m, 8 * u))));
      std::printf("bank swizzled %d %d %d\n", m, u, group(int(swizzled(m, 8 * u))));
    }
}

}  // namespace

int main() {
  print_ldmatrix_a();
  print_banks();
  return 0;
}
