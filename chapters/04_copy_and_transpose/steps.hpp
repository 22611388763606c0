// Chapter 04's steps (steps.cu): the list the binary runs and the tests iterate, and the chapter's
// best step.
#pragma once

#include <vector>

#include "harness/copy_runner.hpp"

namespace mm::ch04 {

/// Every step of the chapter, in the order of the page: the four copies, then the four transposes.
std::vector<CopyKernel> steps();

/// The chapter's best step, copy_vec128 (98.2-98.4% of cudaMemcpy at the large sizes), named
/// "ch04_copy_vec128".
CopyKernel best();

}  // namespace mm::ch04
