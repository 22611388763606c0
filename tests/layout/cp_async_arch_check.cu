// Compiled (not run) by CTest. Unguarded (the default), cp.async in an sm_75 pass must be a compile
// error that names the requirement; guarded (-DMM_CASE_GUARDED) the same kernel must build for sm_75,
// its body discarded in that pass (layout/arch.hpp), and for sm_80.
#include "layout/arch.hpp"
#include "layout/copy.hpp"

template <class T>
__global__ void k(T const* g) {
#if defined(MM_CASE_GUARDED)
  if constexpr (!mm::arch::compiled_for(mm::arch::sm80)) {
    mm::arch::no_code_for_this_target();
    return;
  } else
#endif
  {
    __shared__ alignas(16) T s[4];
    mm::SM80_CP_ASYNC_CACHEGLOBAL<mm::uint128_t>::copy(*reinterpret_cast<mm::uint128_t const*>(g),
                                                       *reinterpret_cast<mm::uint128_t*>(s));
    mm::cp_async_fence();
    mm::cp_async_wait<0>();
  }
}

template __global__ void k<float>(float const*);
