"""The PyTorch custom operators: torch.ops.gemm_ladder.mm, .linear, .mm_fp8, .grouped_mm, .grouped_swiglu and .moe_permute.

mm, linear, grouped_mm, grouped_swiglu and moe_permute are C++ kernels where _cpp_ops.py can build them (csrc/torch_ops.cpp: no Python per
call); otherwise, and mm_fp8 always, each is a ``torch.library.custom_op`` (functional: it returns a new
tensor, mutates nothing) whose implementation is _core's (the library on ``torch.cuda.current_stream()``
of the inputs' device). Each has a ``register_fake`` that applies the same checks to shapes, dtypes and strides and returns an empty
tensor of the result's shape, dtype and (row-major) strides: what torch.compile traces, and what
``torch.library.opcheck`` compares with the real thing. No derivative is implemented: the ops are for
inference, and a backward through them raises a RuntimeError (the C++ operators' Autograd kernel is torch's
autogradNotImplementedFallback: "derivative for gemm_ladder::linear is not implemented"; a custom_op without
register_autograd: "Trying to backward through gemm_ladder.mm_fp8.default but no autograd formula was
registered"); an out= or stream= call, which autograd does not see, refuses an input that requires a gradient.

Imported by the package when torch is importable.
"""

from __future__ import annotations

import torch

from . import _core, _cpp_ops

_core._torch_module()  # _core reads torch tensors from now on (and dynamo sees no sys.modules lookup)


def _empty_result(a, m, n, dtype_name):
    return a.new_empty((m, n), dtype=getattr(torch, dtype_name))


def _mm_fake(a, b):
    _, _, m, n, _, _, c_dtype = _core.plan(_core.torch_dtype_name(a), _core.torch_dtype_name(b), a.shape, a.stride(),
                                          b.shape, b.stride())
    return _empty_result(a, m, n, c_dtype)


def _linear_fake(x, weight):
    x2, shape = _core.linear_rows(x, weight)
    wt = weight.t()
    _, _, _, _, _, _, c_dtype = _core.plan(_core.torch_dtype_name(x2), _core.torch_dtype_name(wt), x2.shape,
                                          x2.stride(), wt.shape, wt.stride())
    return x.new_empty(shape, dtype=getattr(torch, c_dtype))


def _grouped_mm_fake(a, b, offsets, tile_rows=0, zero_fill=True):
    _, rows, n, _ = _core.grouped_plan(_core.torch_dtype_name(a), _core.torch_dtype_name(b),
                                      _core.torch_dtype_name(offsets), a.shape, a.stride(), b.shape, b.stride(),
                                      offsets.shape, offsets.stride(), tile_rows)
    return _empty_result(a, rows, n, "bfloat16")


def _grouped_swiglu_fake(a, w_gate_up_interleaved, offsets, tile_rows=0, zero_fill=True):
    w = w_gate_up_interleaved
    _, rows, i, _ = _core.grouped_swiglu_plan(_core.torch_dtype_name(a), _core.torch_dtype_name(w),
                                              _core.torch_dtype_name(offsets), a.shape, a.stride(), w.shape, w.stride(),
                                              offsets.shape, offsets.stride(), tile_rows)
    return _empty_result(a, rows, i, "bfloat16")


def _moe_permute_fake(xf, flat, order, counts, k, rows):
    tokens, hidden, experts, routed, _ = _core.moe_permute_plan(
        _core.torch_dtype_name(xf), _core.torch_dtype_name(flat), _core.torch_dtype_name(order),
        _core.torch_dtype_name(counts), xf.shape, xf.stride(), flat.shape, flat.stride(), order.shape, order.stride(),
        counts.shape, counts.stride(), k, rows)
    return (xf.new_empty((rows, hidden)), counts.new_empty((experts + 1,)), counts.new_empty((routed,)))


CPP_MODULE = _cpp_ops.load()  # csrc/torch_ops.cpp built and loaded, or None
CPP_OPS = CPP_MODULE is not None  # True: torch.ops.gemm_ladder.mm, .linear, .grouped_mm and .grouped_swiglu are its kernels
FAST_LINEAR = CPP_MODULE.linear if CPP_OPS else None  # the eager fast path (returns None where it does not apply)
FAST_MM = CPP_MODULE.mm if CPP_OPS else None
FAST_GROUPED_MM = CPP_MODULE.grouped_mm if CPP_OPS else None
FAST_GROUPED_SWIGLU = CPP_MODULE.grouped_swiglu if CPP_OPS else None
FAST_MOE_PERMUTE = getattr(CPP_MODULE, "moe_permute", None) if CPP_OPS else None

if CPP_OPS:
    torch.library.register_fake("gemm_ladder::mm")(_mm_fake)
    torch.library.register_fake("gemm_ladder::linear")(_linear_fake)
    torch.library.register_fake("gemm_ladder::grouped_mm")(_grouped_mm_fake)
    torch.library.register_fake("gemm_ladder::grouped_swiglu")(_grouped_swiglu_fake)
    torch.library.register_fake("gemm_ladder::moe_permute")(_moe_permute_fake)
else:
    @torch.library.custom_op("gemm_ladder::mm", mutates_args=())
    def mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """a @ b (bf16, or float32 as tf32) with the library's kernel; see gemm_ladder.mm."""
        return _core.mm_torch(a, b)

    mm.register_fake(_mm_fake)

    @torch.library.custom_op("gemm_ladder::linear", mutates_args=())
    def linear(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        """x @ weight.T for x (..., K), weight (N, K); see gemm_ladder.linear."""
        return _core.linear_torch(x, weight)

    linear.register_fake(_linear_fake)

    # the C++ operator's schema, spelled out: inferred from the annotation, tile_rows would be a SymInt
    @torch.library.custom_op("gemm_ladder::grouped_mm", mutates_args=(),
                             schema="(Tensor a, Tensor b, Tensor offsets, int tile_rows=0, bool zero_fill=True) -> Tensor")
    def grouped_mm(a: torch.Tensor, b: torch.Tensor, offsets: torch.Tensor, tile_rows: int = 0,
                   zero_fill: bool = True) -> torch.Tensor:
        """Every expert's a_g @ b[g].T in one launch (chapter 13); see gemm_ladder.grouped_mm."""
        return _core.grouped_mm_torch(a, b, offsets, tile_rows=tile_rows, zero_fill=zero_fill)

    grouped_mm.register_fake(_grouped_mm_fake)

    @torch.library.custom_op("gemm_ladder::grouped_swiglu", mutates_args=(),
                             schema="(Tensor a, Tensor w_gate_up_interleaved, Tensor offsets, int tile_rows=0, "
                                    "bool zero_fill=True) -> Tensor")
    def grouped_swiglu(a: torch.Tensor, w_gate_up_interleaved: torch.Tensor, offsets: torch.Tensor, tile_rows: int = 0,
                       zero_fill: bool = True) -> torch.Tensor:
        """Every expert's SiLU(a_g @ W_gate.T) * (a_g @ W_up.T) in one launch (chapter 13, step 3); see
        gemm_ladder.grouped_swiglu."""
        return _core.grouped_swiglu_torch(a, w_gate_up_interleaved, offsets, tile_rows=tile_rows, zero_fill=zero_fill)

    grouped_swiglu.register_fake(_grouped_swiglu_fake)

    @torch.library.custom_op("gemm_ladder::moe_permute", mutates_args=(),
                             schema="(Tensor xf, Tensor flat, Tensor order, Tensor counts, int k, int rows) -> "
                                    "(Tensor, Tensor, Tensor)")
    def moe_permute(xf: torch.Tensor, flat: torch.Tensor, order: torch.Tensor, counts: torch.Tensor, k: int,
                    rows: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The routed tokens into grouped_mm's contiguous layout, its offsets, each slot's row; see
        gemm_ladder.moe_permute."""
        return _core.moe_permute_torch(xf, flat, order, counts, k, rows)

    moe_permute.register_fake(_moe_permute_fake)


@torch.library.custom_op("gemm_ladder::mm_fp8", mutates_args=())
def mm_fp8(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor) -> torch.Tensor:
    """(a @ b) with e4m3 a, b and their scales (per tensor or block), a bf16 result; see gemm_ladder.mm_fp8."""
    return _core.mm_fp8_torch(a, b, scale_a, scale_b)


@mm_fp8.register_fake
def _mm_fp8_fake(a, b, scale_a, scale_b):
    _, _, m, n, k, _, c_dtype = _core.plan(_core.torch_dtype_name(a), _core.torch_dtype_name(b), a.shape, a.stride(),
                                          b.shape, b.stride(), fp8=True)
    for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        if _core.torch_dtype_name(s) != "float32":
            raise TypeError(f"{name} is {_core.torch_dtype_name(s)}: scales are float32")
    _core.fp8_mode(m, n, k, scale_a.shape, scale_a.stride(), scale_b.shape, scale_b.stride(), None)
    return _empty_result(a, m, n, c_dtype)
