// bf16: chapter 11's every_shape, the dispatcher the chapter's page calls "ours". The problem goes
// through as it came: every_shape decides what it takes (its rules, its pointers) and says why not.
#include "prepare.hpp"

#include "11_every_shape/every_shape.hpp"

namespace gl::detail {

mm::PreparedGemm prepare_bf16(const mm::GemmProblem& p, const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c) {
  return mm::ch11::prepare_every_shape(p, a, b, c);
}

}  // namespace gl::detail
