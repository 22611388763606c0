// Compiled (not run) by CTest: (8,8):(8,1) ∘ 4:3 must be a compile error naming the rule;
// the admissible control (8,8):(8,1) ∘ 4:2 must compile.
#include "layout/algebra.hpp"

int main() {
  using namespace mm;
  auto a = make_layout(make_shape(_8{}, _8{}), make_stride(_8{}, _1{}));
#if defined(MM_CASE_INADMISSIBLE)
  auto r = composition(a, make_layout(_4{}, _3{}));
#else
  auto r = composition(a, make_layout(_4{}, _2{}));
#endif
  return int(size(r)) == 4 ? 0 : 1;
}
