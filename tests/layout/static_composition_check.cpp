// Compiled (not run) by CTest: an inadmissible composition of static layouts must be a compile error that
// names the rule; the admissible control (the code outside the cases) must compile, so a broken header
// cannot pass the test. One compile (-DMM_ALL_CASES) holds every case, each in a function of its own, and
// tests/layout/static_check.py checks the log (tests/layout/CMakeLists.txt); -DMM_CASE_<NAME> compiles one
// case alone.
// A = (8,8):(8,1): index x of A is coordinate (x % 8, x / 8), so A(x) = 8 (x % 8) + x / 8.
#include "layout/algebra.hpp"

namespace {
using namespace mm;
constexpr auto a = make_layout(make_shape(_8{}, _8{}), make_stride(_8{}, _1{}));

#if defined(MM_CASE_INADMISSIBLE_COMPOSITION) || defined(MM_ALL_CASES)
int case_inadmissible_composition() {
  // 4:3 hits indices 0,3,6,9 -> 0,24,48,9: the walk of stride 3 leaves the mode of 8 that 3
  // does not divide (CuTe: "Shape Divisibility Condition", 4 % ceil(8/3) != 0).
  auto r = composition(a, make_layout(_4{}, _3{}));
  return int(size(r));
}
#endif
#if defined(MM_CASE_STRIDE_COMPOSITION) || defined(MM_ALL_CASES)
int case_stride_composition() {
  // 2:12: 12 is neither a multiple of the first mode's 8 nor smaller than it (CuTe's
  // "Stride Divisibility Condition").
  auto r = composition(a, make_layout(_2{}, _12{}));
  return int(size(r));
}
#endif
#if defined(MM_CASE_CUTE_UNSOUND_COMPOSITION) || defined(MM_ALL_CASES)
int case_cute_unsound_composition() {
  // 6:3: CuTe accepts it (6 % ceil(8/3) == 0) and returns (3,2):(24,1), but index 3 is A(9) = 9,
  // not 1. Refused here: the walk leaves the mode of 8 that 3 does not divide.
  auto r = composition(a, make_layout(_6{}, _3{}));
  return int(size(r));
}
#endif
}  // namespace

int main() {
  auto r = composition(a, make_layout(_4{}, _2{}));  // 0,2,4,6 in the first mode: 4:16
  auto q = composition(a, make_layout(_2{}, _3{}));  // 0, 3 inside the first mode: 2:24
  static_assert(std::is_same_v<decltype(q), Layout<_2, Int<24>>>, "(8,8):(8,1) o 2:3 = 2:24");
  return int(size(r)) > 0 ? 0 : 1;
}
