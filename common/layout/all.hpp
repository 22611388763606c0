// The layout library in one include: `#include "layout/all.hpp"`.
// CuTe-style layouts, tensors, tiling, partitioning, copies and MMAs, in namespace mm.
#pragma once

#include "layout/integer.hpp"
#include "layout/arch.hpp"
#include "layout/int_tuple.hpp"
#include "layout/layout.hpp"
#include "layout/algebra.hpp"
#include "layout/tensor.hpp"
#include "layout/predicate.hpp"
#include "layout/swizzle.hpp"
#include "layout/copy.hpp"
#include "layout/ldmatrix.hpp"
#include "layout/mma.hpp"
#include "layout/mma_sm80.hpp"
#include "layout/mma_emulation.hpp"
#include "layout/print.hpp"
#include "layout/svg.hpp"
