"""gemm_ladder: the ladder's finished kernels from Python, on torch tensors and on any DLPack array.

    import torch, gemm_ladder
    y = gemm_ladder.linear(x, layer.weight)          # x @ weight.T, bf16 (every_shape) or fp32 (tf32)
    c = gemm_ladder.mm(a, b)                         # a @ b; b row-major (RRR) or weight.t() (RCR)
    c = gemm_ladder.mm_fp8(a8, w8.t(), sa, sb)       # e4m3, per-tensor or DeepSeek-V3 block scales, bf16 C
    c = gemm_ladder.grouped_mm(x, w, offsets)        # every expert's x_g @ w[g].T in one launch (chapter 13)
    w_i = gemm_ladder.interleave_gate_up(w_gate_up)  # once, at load: [W_gate; W_up] interleaved by 128 rows
    h = gemm_ladder.grouped_swiglu(x, w_i, offsets)  # every expert's SiLU(x_g @ W_gate.T) * (x_g @ W_up.T), one launch
    a, offsets, place = gemm_ladder.moe_permute(xf, flat, order, counts, k, rows)  # routed tokens into that layout
    gemm_ladder.last_path()                          # "swap_ab 128x16 x8": what ran

A thin layer over the C library libgemm_ladder.so (lib/include/gemm_ladder.h) through ctypes: no compiled
extension, so it imports straight from a build tree (``PYTHONPATH=python`` from the repository root,
the library found in ``build*/lib`` or at ``$GEMM_LADDER_LIBRARY``; _library.py says where it looks)
or is installed with ``pip install .``. Importing it needs neither torch, numpy, the library nor a GPU.

- moe_permute (the routed tokens into grouped_mm's layout, with its offsets: torch tensors only).
- mm, linear, mm_fp8, grouped_mm, grouped_swiglu (_core.py says which strides each operand may have; nothing is copied, bad input
  raises TypeError or ValueError before anything runs, a refusal of the library raises its
  GemmLadderError, a ValueError or RuntimeError subclass, with the library's one line).
- With torch tensors they run on torch's current stream and return a new tensor (or write ``out=``).
  Under torch.compile they become the custom operators ``torch.ops.gemm_ladder.mm``, ``.linear``,
  ``.mm_fp8``, ``.grouped_mm`` and ``.grouped_swiglu`` (registered when torch is importable: _torch_ops.py), so a
  compiled graph holds them without a break.
- Prepared GEMMs (tensor maps, split-K workspaces) are cached inside the library per (problem,
  pointers, stream): clear_cache() frees them, cache_stats() counts them.
"""

from __future__ import annotations

import ctypes
import importlib.util
import sys

from . import _core
from ._library import (CudaError, GemmLadderError, InternalError, InvalidArgumentError, LibraryNotFoundError,
                       NoSm90aDeviceError, UnsupportedError, find_library, library)

__all__ = [
    "mm", "linear", "mm_fp8", "grouped_mm", "grouped_swiglu", "moe_permute", "interleave_gate_up", "deinterleave_gate_up",
    "grouped_layout", "last_path", "device_status", "clear_cache", "set_cache_capacity", "cache_stats",
    "library_path", "GemmLadderError", "InvalidArgumentError", "UnsupportedError", "NoSm90aDeviceError", "CudaError",
    "InternalError", "LibraryNotFoundError",
]
__version__ = "0.1.0"


def _compiling() -> bool:
    torch = _core._torch
    return torch is not None and torch.compiler.is_compiling()


def _functional_only(**not_taken) -> None:
    """Under torch.compile the calls are the functional operators: TypeError if any of these was given."""
    given = [name for name, value in not_taken.items() if value is not None]
    if given:
        names = [f"{n}=" for n in not_taken]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        raise TypeError(f"{listed} are not taken under torch.compile (the op is functional)")


def _needs_grad(tensors) -> bool:
    """Grad mode is on and one of these torch tensors requires a gradient."""
    return _core._torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


def _untracked(*tensors) -> None:
    """RuntimeError, before any launch, when an out= or stream= call (the ctypes path, which autograd does not see)
    gets a tensor that needs a gradient: as torch refuses out= under autograd, rather than a result with no
    gradient. The other calls go through the operator, whose backward raises (no derivative is implemented)."""
    if _needs_grad(tensors):
        raise RuntimeError("gemm_ladder: out= and stream= take no tensor that requires a gradient (autograd does not "
                           "see these calls and gemm_ladder implements no derivative): call it under torch.no_grad(), "
                           "or detach the inputs")


def _eager(name, args, fallback):
    """An eager call with torch tensors, no out= and no stream=, that the fast path declined (_fast_linear, _fast_mm:
    8-10 µs of host time a call on the H200 machine, against 16-20 through the operator and 15-19 for F.linear,
    plots/data/h200/profiles/session_2026-11-30s_issue39.txt): torch.ops.gemm_ladder.<name> where it is
    csrc/torch_ops.cpp's C++ kernel (19-21 µs of host time a call where the ctypes path takes 29-40,
    plots/data/h200/profiles/session_2026-11-30l_issue36_39.txt; a decode step at batch 1 makes 17 calls).
    Where that operator refuses its arguments (its ValueError, TypeError or RuntimeError), or is not built,
    `fallback()`: the ctypes path, whose checks are the same in the same order and which raises the
    library's own error class (UnsupportedError, NoSm90aDeviceError, ...) with the same line."""
    ops = sys.modules.get(__name__ + "._torch_ops")  # imported at the end of this file where torch is
    # an input that needs a gradient takes the operator even where it is Python's: autograd then sees the call
    if ops is not None and (ops.CPP_OPS or _needs_grad([t for t in args if _core.is_torch_tensor(t)])):
        try:
            return getattr(_core._torch.ops.gemm_ladder, name)(*args)
        except (ValueError, TypeError, RuntimeError):
            pass
    return fallback()


# The eager fast path: csrc/torch_ops.cpp's module functions (set at the end of this file where they are built).
# Each takes the plain call (contiguous CUDA tensors of a supported dtype, no torch function or
# dispatch mode, no input that needs a gradient under grad mode) and returns its result with no dispatcher between Python and gl_gemm, or None for
# anything else, which then takes the checked path below (the operator, then ctypes) and its errors.
_fast_linear = None
_fast_mm = None
_fast_grouped_mm = None
_fast_grouped_swiglu = None
_fast_moe_permute = None


def mm(a, b, *, out=None, stream=None):
    """C = a @ b: bf16 a and b give a bf16 C (chapter 11's every_shape), float32 a float32 C (tf32).

    a is M×K row-major; b is K×N, row-major (RRR) or the transpose of a row-major N×K matrix (RCR, a
    weight's ``.t()``). With torch tensors the result is a new tensor on torch's current stream (or
    ``out``, or ``stream``); with other DLPack arrays, ``out`` is required. Nothing is copied.
    """
    if not _compiling() and out is None and stream is None and _fast_mm is not None:
        c = _fast_mm(a, b)
        if c is not None:
            return c
    if _core.is_torch_tensor(a) and _core.is_torch_tensor(b):
        if _compiling():
            _functional_only(out=out, stream=stream)
            return _core._torch.ops.gemm_ladder.mm(a, b)
        if out is None and stream is None:
            return _eager("mm", (a, b), lambda: _core.mm_torch(a, b))
        _untracked(a, b)
        return _core.mm_torch(a, b, out, stream)
    return _core.mm_dlpack(a, b, out, stream)


def linear(x, weight, *, out=None, stream=None):
    """x @ weight.T for x (..., K) and weight (N, K), as ``torch.nn.functional.linear`` without bias.

    The weight is read in place (RCR: C = A·Bᵀ), x as rows of K (its leading dimensions must collapse
    into one without a copy). The result has shape (..., N); ``out``, if given, shape (prod(...), N).
    """
    if not _compiling() and out is None and stream is None and _fast_linear is not None:
        y = _fast_linear(x, weight)
        if y is not None:
            return y
    if _core.is_torch_tensor(x) and _core.is_torch_tensor(weight):
        if _compiling():
            _functional_only(out=out, stream=stream)
            return _core._torch.ops.gemm_ladder.linear(x, weight)
        if out is None and stream is None:
            return _eager("linear", (x, weight), lambda: _core.linear_torch(x, weight))
        _untracked(x, weight)
        return _core.linear_torch(x, weight, out, stream)
    raise TypeError("linear takes torch tensors (x and weight); for other arrays call mm(x2d, weight_transposed, out=...)")


def mm_fp8(a, b, scale_a, scale_b, *, out=None, stream=None, block_scaled=None):
    """C = (a @ b) with fp8 e4m3 a (M×K) and b (K×N, the transpose of a row-major N×K weight), a bf16 C.

    Per-tensor scales (one float32 each, on the device): C = scale_a·scale_b·(a @ b), chapter 12's
    fp8_per_tensor (fp8_per_tensor_small_m for few rows). Block scales (DeepSeek-V3's; chapter 12's
    fp8_block_scaled, fp8_block_scaled_small_m for few rows): scale_a of shape
    (M, ceil(K/128)) stored M-contiguous, one per row and 128 of K; scale_b of shape (ceil(N/128),
    ceil(K/128)), one per 128×128 block of the weight, rows padded to a multiple of 4 (or the padded
    buffer itself; _core.fp8_mode spells the strides). ``block_scaled`` None picks per tensor when both scales hold one element.
    """
    if all(_core.is_torch_tensor(t) for t in (a, b, scale_a, scale_b)):
        if _compiling():
            _functional_only(out=out, stream=stream, block_scaled=block_scaled)
            return _core._torch.ops.gemm_ladder.mm_fp8(a, b, scale_a, scale_b)
        if out is None and stream is None and block_scaled is None and _needs_grad((a, b, scale_a, scale_b)):
            return _core._torch.ops.gemm_ladder.mm_fp8(a, b, scale_a, scale_b)  # autograd sees the operator
        _untracked(a, b, scale_a, scale_b)
        return _core.mm_fp8_torch(a, b, scale_a, scale_b, out, stream, block_scaled)
    return _core.mm_fp8_dlpack(a, b, scale_a, scale_b, out, stream, block_scaled)


def grouped_mm(a, b, offsets, *, out=None, stream=None, tile_rows=0, zero_fill=True):
    """Every expert's C_g = A_g @ b[g].T of a mixture-of-experts layer in one launch (chapter 13's
    grouped_contiguous), bf16 in and out, fp32 accumulation.

    a: (rows, K) bf16, row-major: the routed tokens sorted by expert, each expert's rows starting on a
    multiple of 128 (DeepGEMM's contiguous layout; the rows between an expert's end and the next
    multiple of 128 are padding the caller leaves). b: (E, N, K) bf16, contiguous: the experts'
    nn.Linear weights stacked; N % 256 == 0, K % 8 == 0. offsets: (E + 1,) int64 on a's device:
    offsets[0] = 0 and expert g's rows are align_up(offsets[g], 128) .. offsets[g + 1] - 1 (its end).
    ``grouped_layout(rows_per_expert)`` computes offsets and rows on the host.

    The result is (rows, N) bf16: each expert's rows are its product; the other rows are 0 (the result
    is zero-filled first: one memset) or, for padding rows inside an expert's last tile, the products
    of a's padding rows. ``zero_fill=False`` leaves out the memset: rows outside every expert's tiles
    then hold whatever the allocator's memory held (a caller that reads back only the experts' rows, as
    a model gathering its tokens does, saves a write of rows × N × 2 bytes: 351 MB a layer at the
    MoE model's prefill). With ``out`` (required for arrays that are not torch tensors) nothing is
    zero-filled and rows outside every expert's tiles are left as they were.

    The offsets are read by the kernel on the device: nothing here waits for the GPU, and their values
    are not checked (a torch.compile graph or a CUDA graph can hold the call). Whatever they hold, the
    kernel reads and writes only inside a, b and the result; offsets that break the rules above give
    wrong rows. ``tile_rows`` 0 lets the library choose (chapter 13's rule): the 16-row decode tile
    (the weights on wgmma's M) where 64-row tiles would be fewer than the SMs (at most rows/64 · N/256
    of them) and K >= 1024, else 64-row tiles when rows <= 128·E (no expert fills more than one
    128-row tile: decode), else 128; 16, 64 or 128 forces one. ``last_path()`` names it.
    """
    if not _compiling() and out is None and stream is None and _fast_grouped_mm is not None:
        c = _fast_grouped_mm(a, b, offsets, tile_rows, zero_fill)
        if c is not None:
            return c
    if all(_core.is_torch_tensor(t) for t in (a, b, offsets)):
        if _compiling():
            _functional_only(out=out, stream=stream)
            return _core._torch.ops.gemm_ladder.grouped_mm(a, b, offsets, tile_rows, zero_fill)
        if out is None and stream is None:
            return _eager("grouped_mm", (a, b, offsets, tile_rows, zero_fill),
                          lambda: _core.grouped_mm_torch(a, b, offsets, None, None, tile_rows, zero_fill))
        _untracked(a, b, offsets)
        return _core.grouped_mm_torch(a, b, offsets, out, stream, tile_rows, zero_fill)
    return _core.grouped_mm_dlpack(a, b, offsets, out, stream, tile_rows)


def grouped_swiglu(a, w_gate_up_interleaved, offsets, *, out=None, stream=None, tile_rows=0, zero_fill=True):
    """Every expert's SwiGLU activation h_g = SiLU(A_g @ W_gate[g].T) * (A_g @ W_up[g].T) in one launch (chapter
    13's grouped_swiglu, step 3): the gate+up grouped GEMM whose epilogue applies SiLU(gate)·up to the fp32
    accumulators, so the 2I-wide gate and up values are never written nor rounded to bf16. bf16 in and out.

    a and offsets as grouped_mm's (the contiguous layout, each expert from a multiple of 128 rows).
    w_gate_up_interleaved: (E, 2I, K) bf16, contiguous: each expert's W_gate and W_up (I×K each, nn.Linear's
    layout) with their rows interleaved by 128, the order the kernel's 256-column tiles read: rows 256t ..
    256t + 127 are W_gate's 128t .., rows 256t + 128 .. 256t + 255 W_up's same rows.
    ``interleave_gate_up(w_gate_up)`` makes it, once, from stacked [W_gate; W_up] (E, 2I, K). I % 128 == 0,
    K % 8 == 0.

    The result is (rows, I) bf16: each expert's rows are SiLU(gate)·up; the other rows as grouped_mm's (zero,
    or with ``zero_fill=False`` what the allocator's memory held; padding rows inside an expert's last tile
    may hold the activation of a's padding rows). ``out``, ``stream`` and the offsets as in grouped_mm.
    ``tile_rows`` 0 lets the library choose as grouped_mm does, but 64 where its rule says 16: the fused
    epilogue has no decode tile (chapter 13's step 6 is the plain GEMM only); 64 or 128 forces one.
    ``last_path()`` names it ("grouped_contiguous 128x256 SiLU(gate)·up").
    """
    w = w_gate_up_interleaved
    if not _compiling() and out is None and stream is None and _fast_grouped_swiglu is not None:
        h = _fast_grouped_swiglu(a, w, offsets, tile_rows, zero_fill)
        if h is not None:
            return h
    if all(_core.is_torch_tensor(t) for t in (a, w, offsets)):
        if _compiling():
            _functional_only(out=out, stream=stream)
            return _core._torch.ops.gemm_ladder.grouped_swiglu(a, w, offsets, tile_rows, zero_fill)
        if out is None and stream is None:
            return _eager("grouped_swiglu", (a, w, offsets, tile_rows, zero_fill),
                          lambda: _core.grouped_swiglu_torch(a, w, offsets, None, None, tile_rows, zero_fill))
        _untracked(a, w, offsets)
        return _core.grouped_swiglu_torch(a, w, offsets, out, stream, tile_rows, zero_fill)
    return _core.grouped_swiglu_dlpack(a, w, offsets, out, stream, tile_rows)


def moe_permute(xf, flat, order, counts, k, rows):
    """A mixture-of-experts layer's routed tokens copied into grouped_mm's contiguous layout, in one launch (the
    library's gl_moe_permute): returns (a, offsets, place), new tensors on xf's device.

    xf: (tokens, hidden) bf16, rows of contiguous elements (any row pitch). flat: (tokens·k,) int64, each token's k
    experts token-major (slot t·k + j is token t's j-th expert: ``topk(...).indices.flatten()``). order: (tokens·k,)
    int64, the slots sorted by expert (``flat.argsort(stable=True)``). counts: (E,) int64, the slots per expert.
    k: experts per token. rows: a's rows, at least tokens·k plus the padding (up to 127 an expert that gets rows;
    a model takes a bound known from the shapes, so that nothing waits for the GPU).

    a (rows, hidden): expert g's rows start on a multiple of 128, after the rows and padding of the experts before
    it; sorted row i (slot order[i]) sits at row i + (the padding before its expert) and holds xf[order[i] // k].
    Padding rows and rows past the last expert's are left as allocated (grouped_mm's zero_fill=False never reads
    them back). offsets (E + 1,): grouped_mm's (offsets[g + 1] = where expert g ends). place (tokens·k,): slot s's
    row in a, so that ``y.index_select(0, place)`` takes each slot's expert output back token-major.

    Checked before any launch: TypeError for a dtype or a device, ValueError for a shape, a stride, k < 1, E
    outside 1 .. 4096 or rows below tokens·k. The routing's values are the router's and not checked (gemm_ladder.h,
    gl_moe_permute: wrong values give wrong rows, never a write outside the results). Runs on torch's current
    stream; under torch.compile it is the operator ``torch.ops.gemm_ladder.moe_permute``. Torch tensors only.
    """
    if not _compiling() and _fast_moe_permute is not None:
        result = _fast_moe_permute(xf, flat, order, counts, k, rows)
        if result is not None:
            return result
    if not all(_core.is_torch_tensor(t) for t in (xf, flat, order, counts)):
        raise TypeError("moe_permute takes torch tensors (xf, flat, order and counts)")
    if _compiling():
        return _core._torch.ops.gemm_ladder.moe_permute(xf, flat, order, counts, k, rows)
    return _eager("moe_permute", (xf, flat, order, counts, k, rows),
                  lambda: _core.moe_permute_torch(xf, flat, order, counts, k, rows))


def interleave_gate_up(w_gate_up):
    """(..., 2I, K) torch weights stacked [W_gate; W_up] (as a fused gate+up nn.Linear holds them, and as
    ``gate, up = (x @ w.T).chunk(2, -1)`` reads them) -> grouped_swiglu's order: the rows interleaved by 128
    (rows 256t .. 256t + 127 are W_gate's 128t .., the next 128 W_up's same rows). A new contiguous tensor on
    w's device (a copy even where the order does not change, I = 128); TypeError or ValueError (I % 128)
    otherwise. Done once, when the model loads its weights: it copies all of them."""
    return _core.interleave_gate_up(w_gate_up)


def deinterleave_gate_up(w_interleaved):
    """interleave_gate_up's inverse: grouped_swiglu's order back to stacked [W_gate; W_up]."""
    return _core.deinterleave_gate_up(w_interleaved)


def grouped_layout(rows_per_expert, alignment=128):
    """(offsets, first, rows) for experts of `rows_per_expert` rows in grouped_mm's contiguous layout:
    the E + 1 offsets (a list; ``torch.tensor(offsets, device="cuda")`` is grouped_mm's ``offsets``),
    each expert's first row in a and the result, and the rows a must have. Pure Python, on the host."""
    return _core.grouped_layout(rows_per_expert, alignment)


def last_path() -> str:
    """The path the calling thread's last successful call ran ("split_k 128x128 x3", "tf32_wgmma", ...)."""
    return library().lib.gl_last_path().decode()


def device_status() -> str:
    """"" when the current CUDA device runs the kernels; otherwise why not (no GPU, not sm_90a, ...)."""
    lib = library()
    return "" if lib.lib.gl_device_status() == 0 else lib.lib.gl_last_error().decode()


def clear_cache() -> None:
    """Frees every prepared GEMM and its workspace (waits for the device, as cudaFree does), but the ones a
    CUDA graph captured (the graph reads their workspaces: cache_stats()["pinned"])."""
    library().lib.gl_clear_cache()


def set_cache_capacity(entries: int) -> None:
    """Keeps at most `entries` prepared GEMMs (least recently used first out; 0: none)."""
    lib = library()
    status = lib.lib.gl_set_cache_capacity(entries)
    if status:
        raise lib.error(status)


def cache_stats() -> dict:
    """{"entries": prepared GEMMs held, "hits": lookups that found one, "misses": preparations, "pinned": the
    entries a CUDA graph captured, kept for the process's life since the graph reads their workspaces}."""
    lib = library().lib
    values = [ctypes.c_int64() for _ in range(3)]
    lib.gl_cache_stats(*(ctypes.byref(v) for v in values))
    return dict(zip(("entries", "hits", "misses", "pinned"), [v.value for v in values] + [lib.gl_cache_pinned()]))


def library_path() -> str:
    """The libgemm_ladder.so this package loads (or would load: see _library.py)."""
    return str(library().path if _library_loaded() else find_library())


def _library_loaded() -> bool:
    from . import _library
    return _library._loaded is not None


# The custom operators, where torch is installed (importing the package then imports torch).
if importlib.util.find_spec("torch") is not None:
    from . import _torch_ops  # noqa: E402,F401  (registers torch.ops.gemm_ladder.*)
    _fast_linear, _fast_mm, _fast_grouped_mm = _torch_ops.FAST_LINEAR, _torch_ops.FAST_MM, _torch_ops.FAST_GROUPED_MM
    _fast_grouped_swiglu = _torch_ops.FAST_GROUPED_SWIGLU
    _fast_moe_permute = _torch_ops.FAST_MOE_PERMUTE
