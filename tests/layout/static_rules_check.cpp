// Compiled (not run) by CTest: each case breaks one compile-time rule of the layout library and must not
// compile, with a message naming the rule; the control (the code outside the cases) must compile. One
// compile (-DMM_ALL_CASES) holds every case, each in a function of its own, and tests/layout/
// static_check.cmake checks the log: each case's message in an error its own lines lead to, and no error
// anywhere else (a broken header fails the control). -DMM_CASE_<NAME> compiles one case alone.
#include "layout/all.hpp"
#include "layout/mma_sm90.hpp"

namespace {
using namespace mm;
using Vec4 = Copy_Atom<UniversalCopy<mm::uint128_t>, float>;  // 4 floats per instruction
alignas(16) float smem_buf[1024];
alignas(16) float regs_buf[8];
float* const smem = smem_buf;  // pointers, as a kernel has them (an array does not decay in make_tensor)
float* const regs = regs_buf;

#if defined(MM_CASE_COMPLEMENT_NOT_INJECTIVE) || defined(MM_ALL_CASES)
void case_complement_not_injective() {
  // (2,2):(2,3), image 0,2,3,5: stride 2 covers [0,4) in steps of 2 and the stride 3 falls
  // inside it, so no layout fills the holes (CuTe: "Non-injective Layout detected").
  auto c = complement(Layout<Shape<_2, _2>, Stride<_2, _3>>{}, _24{});
  (void)c;
}
#endif
#if defined(MM_CASE_TILE_TO_SHAPE) || defined(MM_ALL_CASES)
void case_tile_to_shape() {
  auto t = tile_to_shape(Layout<Shape<_3, _2>>{}, make_shape(_8{}, _4{}));  // 3 does not divide 8
  (void)t;
}
#endif
#if defined(MM_CASE_VECTOR_UNIT) || defined(MM_ALL_CASES)
void case_vector_unit() {
  auto r4 = make_tensor(regs, Layout<_4, _1>{});
  // Swizzle<3,1,5> keeps units of 2 floats: a float4 would be split between two units.
  Vec4{}.call(make_tensor(smem, composition(Swizzle<3, 1, 5>{}, Layout<_4, _1>{})), std::move(r4));
}
#endif
#if defined(MM_CASE_VECTOR_START) || defined(MM_ALL_CASES)
void case_vector_start() {
  auto r4 = make_tensor(regs, Layout<_4, _1>{});
  // 4 floats from index 2: half in one swizzle unit, half in the next.
  Vec4{}.call(make_tensor(smem, make_composed_layout(Swizzle<3, 2, 5>{}, _2{}, Layout<_4, _1>{})), std::move(r4));
}
#endif
#if defined(MM_CASE_VECTOR_STARTS) || defined(MM_ALL_CASES)
void case_vector_starts() {
  // Two vectors, at 0 and 6: the second straddles the units [4,8) and [8,12).
  auto dst = make_tensor(smem, composition(Swizzle<3, 2, 5>{}, Layout<Shape<_4, _2>, Stride<_1, _6>>{}));
  copy(Vec4{}, make_tensor(regs, Layout<Shape<_4, _2>>{}), dst);
}
#endif
#if defined(MM_CASE_VECTOR_CONTIGUOUS) || defined(MM_ALL_CASES)
void case_vector_contiguous() {
  auto r4 = make_tensor(regs, Layout<_4, _1>{});
  Vec4{}.call(make_tensor(smem, composition(Swizzle<3, 2, 5>{}, Layout<_4, _2>{})), std::move(r4));
}
#endif
#if defined(MM_CASE_UPCAST_SPLITS_UNIT) || defined(MM_ALL_CASES)
void case_upcast_splits_unit() {
  auto u = upcast<8>(composition(Swizzle<3, 2, 5>{}, make_layout(make_shape(_128{}, _8{}))));
  (void)u;
}
#endif
#if defined(MM_CASE_GMMA_SWIZZLE) || defined(MM_ALL_CASES)
void case_gmma_swizzle() {
  // Chapter 07's fp32 swizzle (units of 4 floats, XOR from bit 5): not one of wgmma's patterns.
  constexpr auto sw = gmma_swizzle_of<float, decltype(composition(Swizzle<3, 2, 5>{}, Layout<_4, _1>{}))>();
  (void)sw;
}
#endif
#if defined(MM_CASE_GMMA_K_ROW) || defined(MM_ALL_CASES)
void case_gmma_k_row() {
  // A K-major tile whose rows are 32 elements (64 bytes) apart under the 128-byte swizzle.
  alignas(1024) static __nv_bfloat16 tile[64 * 32];
  auto d = make_gmma_desc<GmmaMajor::K>(
      make_tensor(&tile[0], composition(Swizzle<3, 3, 3>{}, Layout<Shape<_64, _16>, Stride<_32, _1>>{})));
  (void)d;
}
#endif
}  // namespace

int main() {
  // The controls: a float4 into a whole unit, and a copy of two vectors at 0 and 8.
  auto r4 = make_tensor(regs, Layout<_4, _1>{});
  Vec4{}.call(make_tensor(smem, composition(Swizzle<3, 2, 5>{}, Layout<_4, _1>{})), std::move(r4));
  auto dst = make_tensor(smem, composition(Swizzle<3, 2, 5>{}, Layout<Shape<_4, _2>, Stride<_1, _8>>{}));
  copy(Vec4{}, make_tensor(regs, Layout<Shape<_4, _2>>{}), dst);
  auto u = upcast<4>(composition(Swizzle<3, 2, 5>{}, make_layout(make_shape(_128{}, _8{}))));
  static_assert(std::is_same_v<decltype(u.fn_), Swizzle<3, 0, 5>>);
  alignas(1024) static __nv_bfloat16 tile[64 * 64];
  auto d = make_gmma_desc<GmmaMajor::K>(
      make_tensor(&tile[0], composition(Swizzle<3, 3, 3>{}, Layout<Shape<_64, _16>, Stride<_64, _1>>{})));
  (void)d;
  return 0;
}
