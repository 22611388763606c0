// Compiled (not run) by CTest for sm_75: using cp.async there must be a compile error that
// names the requirement.
#include "layout/copy.hpp"

__global__ void k(float const* g) {
  __shared__ alignas(16) float s[4];
  mm::SM80_CP_ASYNC_CACHEGLOBAL<mm::uint128_t>::copy(*reinterpret_cast<mm::uint128_t const*>(g),
                                                     *reinterpret_cast<mm::uint128_t*>(s));
  mm::cp_async_fence();
  mm::cp_async_wait<0>();
}
