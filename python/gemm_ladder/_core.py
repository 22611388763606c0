"""mm, linear and mm_fp8 on torch tensors (read directly) and on any DLPack array (read through its capsule).

What each operand must look like, checked before anything is launched (TypeError for a type, a dtype
or a device; ValueError for a shape or a stride), and what is never done: no operand is ever copied.

- ``a`` (M×K): row-major, strides (K, 1). Anything else is refused (``.contiguous()`` makes one).
- ``b`` (K×N): either row-major, strides (N, 1) (the RRR problem), or the transpose of a row-major N×K
  matrix, strides (1, K) (the RCR problem, C = A·Bᵀ: ``weight.t()`` of an ``nn.Linear``, read in place).
  Other strides are refused. fp8 takes the second only (its kernels read e4m3 K-major).
- ``out`` (M×N), when given: row-major, strides (N, 1), the output's dtype, writable, overlapping
  neither input. Without it the result is a new torch tensor (for torch inputs; other arrays need ``out``).
- A stride of a dimension of extent 1 is never looked at (it is never used to reach an element).
- grouped_mm: ``a`` (rows×K) row-major as above; ``b`` (E, N, K), the experts' nn.Linear weights stacked,
  contiguous (strides (N·K, K, 1)); ``offsets`` int64 (E + 1,), contiguous. Other strides are refused,
  other dtypes too (an int32 ``offsets`` included: ``.to(torch.int64)``); nothing is copied. Chapter 13's
  rules are checked here, before the library: N % 256 == 0, K % 8 == 0 (ValueError).
- grouped_swiglu: as grouped_mm, with ``w_gate_up_interleaved`` (E, 2I, K) in b's place (each expert's gate and
  up weights interleaved by 128 rows: interleave_gate_up) and a result of (rows, I); I % 128 == 0, K % 8 == 0.
- moe_permute: ``xf`` (tokens, hidden) bf16 whose rows are contiguous (strides (P, 1), any pitch P >= hidden);
  ``flat`` and ``order`` (tokens·k,), ``counts`` (E,), int64 and contiguous; E from 1 to 4096, rows >= tokens·k.
  Torch tensors only.
- All on one CUDA device; for torch tensors the kernel runs on torch's current stream of that device
  (or ``stream=``), for other arrays on ``stream=`` (an int handle or an object with ``cuda_stream``),
  by default the legacy default stream. Non-torch arrays must be on the calling thread's current device.
"""

from __future__ import annotations

import sys

from . import _dlpack
from ._library import (GL_BF16, GL_FP8_E4M3_BLOCK_SCALED, GL_FP8_E4M3_PER_TENSOR, GL_RCR, GL_RRR, GL_TF32,
                       LibraryNotFoundError, library)

# dtype of A and B -> (gl_dtype, dtype of C)
MM_DTYPES = {"bfloat16": (GL_BF16, "bfloat16"), "float32": (GL_TF32, "float32")}
FP8_DTYPE = "float8_e4m3fn"
SCALE_BLOCK = 128  # K (and B's N) extent of one block of fp8 block scales


def _ceil_div(a: int, b: int) -> int:
    return (a + b - 1) // b


def _dense(rows, cols, strides) -> bool:
    """Row-major with no gap: strides (cols, 1), the stride of an extent-1 dimension not looked at."""
    return (rows == 1 or strides[0] == cols) and (cols == 1 or strides[1] == 1)


def b_layout(k, n, strides):
    """(gl_layout, ldb) for a K×N operand B with these strides, or None if neither problem reads it in
    place. RCR (the transpose of a row-major N×K matrix) is preferred where both describe the memory
    (a single row or column), since every kernel reads it as it is."""
    s0, s1 = strides
    if (k == 1 or s0 == 1) and (n == 1 or s1 == k):
        return GL_RCR, k
    if (n == 1 or s1 == 1) and (k == 1 or s0 == n):
        return GL_RRR, n
    return None


def check_shapes(name_a, shape_a, name_b, shape_b):
    """(M, K, N) of a (M×K) times b (K×N); ValueError for anything but two matrices that chain."""
    if len(shape_a) != 2 or len(shape_b) != 2:
        raise ValueError(f"{name_a} and {name_b} must be matrices (2-D): got shapes {tuple(shape_a)} and {tuple(shape_b)}")
    m, k = shape_a
    k2, n = shape_b
    if k != k2:
        raise ValueError(f"shape mismatch: {name_a} is {m}x{k} and {name_b} is {k2}x{n}: {name_a}'s columns "
                         f"({k}) must equal {name_b}'s rows ({k2})")
    return m, k, n


def plan(dtype_a, dtype_b, shape_a, strides_a, shape_b, strides_b, fp8=False):
    """The problem the library gets for a·b, checked: (gl_dtype or None for fp8, layout, M, N, K, ldb,
    dtype of C). Raises TypeError (dtypes) or ValueError (shapes, strides) before anything runs."""
    m, k, n = check_shapes("a", shape_a, "b", shape_b)
    if fp8:
        if dtype_a != FP8_DTYPE or dtype_b != FP8_DTYPE:
            raise TypeError(f"mm_fp8 takes float8_e4m3fn a and b: got {dtype_a} and {dtype_b}")
        gl_dtype, c_dtype = None, "bfloat16"
    else:
        if dtype_a not in MM_DTYPES:
            raise TypeError(f"dtype {dtype_a} is not supported: mm takes bfloat16 (a bf16 GEMM, bf16 C) or "
                            f"float32 (tf32, fp32 C); fp8 goes through mm_fp8")
        if dtype_b != dtype_a:
            raise TypeError(f"a is {dtype_a} but b is {dtype_b}: both must have the same dtype")
        gl_dtype, c_dtype = MM_DTYPES[dtype_a]
    if not _dense(m, k, strides_a):
        raise ValueError(f"a: strides {tuple(strides_a)} for a {m}x{k} matrix: gemm_ladder takes a row-major a "
                         f"(strides ({k}, 1)) and copies nothing; call .contiguous() on it")
    layout = b_layout(k, n, strides_b)
    if layout is None:
        raise ValueError(f"b: strides {tuple(strides_b)} for a {k}x{n} matrix: gemm_ladder takes b row-major "
                         f"(strides ({n}, 1), RRR) or as the transpose of a row-major {n}x{k} matrix (strides "
                         f"(1, {k}), RCR: weight.t()), and copies nothing; call .contiguous() on it")
    if fp8 and layout[0] != GL_RCR:
        raise ValueError(f"b: strides {tuple(strides_b)}: mm_fp8 takes b as the transpose of a row-major {n}x{k} "
                         f"matrix (strides (1, {k}), as torch._scaled_mm does): the fp8 kernels read it K-major only")
    return gl_dtype, layout[0], m, n, k, layout[1], c_dtype


def fp8_mode(m, n, k, scale_a_shape, scale_a_strides, scale_b_shape, scale_b_strides, block_scaled):
    """GL_FP8_E4M3_PER_TENSOR or GL_FP8_E4M3_BLOCK_SCALED for these scales (block_scaled None: one
    element each is per tensor), checked against the layouts the kernels read; ValueError if not."""
    numel = lambda shape: _prod(shape)  # noqa: E731
    if block_scaled is None:
        block_scaled = not (numel(scale_a_shape) == 1 and numel(scale_b_shape) == 1)
    if not block_scaled:
        for name, shape in (("scale_a", scale_a_shape), ("scale_b", scale_b_shape)):
            if numel(shape) != 1:
                raise ValueError(f"{name}: per-tensor scales are one float32 each, got shape {tuple(shape)}")
        return GL_FP8_E4M3_PER_TENSOR
    kb = _ceil_div(k, SCALE_BLOCK)
    kb4 = _ceil_div(kb, 4) * 4
    nb = _ceil_div(n, SCALE_BLOCK)
    if (tuple(scale_a_shape) != (m, kb) or not ((m == 1 or scale_a_strides[0] == 1) and
                                                (kb == 1 or scale_a_strides[1] == m))):
        raise ValueError(f"scale_a: block scales of a are float32 of shape ({m}, {kb}) (a row and 128 of K each), "
                         f"stored M-contiguous, strides (1, {m}): torch.empty({kb}, {m}).t(); got shape "
                         f"{tuple(scale_a_shape)}, strides {tuple(scale_a_strides)}")
    # scale_b: (Nb, Kb) with rows Kb4 apart, or the padded (Nb, Kb4) buffer itself (what a copy of the
    # first becomes: torch.clone makes it contiguous), both row-major with rows Kb4 apart
    shape_b = tuple(scale_b_shape)
    rows_ok = nb == 1 or scale_b_strides[0] == kb4
    if not ((shape_b == (nb, kb) and rows_ok and (kb == 1 or scale_b_strides[1] == 1)) or
            (shape_b == (nb, kb4) and rows_ok and scale_b_strides[1] == 1)):
        raise ValueError(f"scale_b: block scales of b are float32 of shape ({nb}, {kb}) (one per 128x128 block of "
                         f"the {n}x{k} weight), rows {kb4} apart (K blocks padded to a multiple of 4): "
                         f"torch.empty({nb}, {kb4})[:, :{kb}], or that ({nb}, {kb4}) buffer itself; got shape "
                         f"{shape_b}, strides {tuple(scale_b_strides)}")
    return GL_FP8_E4M3_BLOCK_SCALED


def _prod(shape) -> int:
    p = 1
    for s in shape:
        p *= s
    return p


def _overlaps(p0, bytes0, p1, bytes1) -> bool:
    return p0 < p1 + bytes1 and p1 < p0 + bytes0


def _raise_status(status):
    raise library().error(status)


# ---- torch tensors: read directly (no DLPack capsule, no Python objects per call beyond the output) ----

_torch = None  # the torch module once a torch tensor has been seen (this module never imports torch)
_TORCH_DTYPES = {}


def _torch_module():
    """torch if the program has imported it, else None: a torch tensor cannot exist without it."""
    global _torch
    if _torch is None:
        torch = sys.modules.get("torch")
        if torch is None or not hasattr(torch, "Tensor"):
            return None
        _torch = torch
        for name in ("bfloat16", "float32", "float16", "float64", "float8_e4m3fn", "float8_e5m2", "int8", "int32",
                     "int64", "uint8", "bool"):
            if hasattr(torch, name):
                _TORCH_DTYPES[getattr(torch, name)] = name
    return _torch


def is_torch_tensor(x) -> bool:
    torch = _torch_module()
    return torch is not None and isinstance(x, torch.Tensor)


def torch_dtype_name(t) -> str:
    return _TORCH_DTYPES.get(t.dtype) or str(t.dtype).replace("torch.", "")


def _check_torch_device(tensors, names):
    """The device index all of `tensors` are on; TypeError unless that is one CUDA device."""
    index = None
    for t, name in zip(tensors, names):
        if not t.is_cuda:
            raise TypeError(f"{name} is on {t.device}: gemm_ladder runs on CUDA tensors")
        i = t.get_device()
        if index is None:
            index = i
        elif i != index:
            raise TypeError(f"{name} is on cuda:{i} but a is on cuda:{index}: all operands on one device")
    return index


def _torch_stream(torch, device_index, stream):
    if stream is None:
        return torch._C._cuda_getCurrentRawStream(device_index)
    return _stream_handle(stream)


def _torch_out(torch, out, m, n, c_dtype, device_index, a, b):
    if out is None:
        return torch.empty((m, n), dtype=getattr(torch, c_dtype), device=a.device)
    if not is_torch_tensor(out):
        raise TypeError("out must be a torch tensor when a and b are")
    if torch_dtype_name(out) != c_dtype:
        raise TypeError(f"out is {torch_dtype_name(out)}: the result is {c_dtype}")
    if tuple(out.shape) != (m, n):
        raise ValueError(f"out has shape {tuple(out.shape)}: the result is {m}x{n}")
    if not _dense(m, n, out.stride()):
        raise ValueError(f"out: strides {tuple(out.stride())}: the result is written row-major (strides ({n}, 1))")
    if not out.is_cuda or out.get_device() != device_index:
        raise TypeError(f"out is on {out.device} but a is on cuda:{device_index}: all operands on one device")
    c0, cb = out.data_ptr(), m * n * out.element_size()
    for name, t in (("a", a), ("b", b)):
        if _overlaps(c0, cb, t.data_ptr(), t.numel() * t.element_size()):
            raise ValueError(f"out overlaps {name}: the kernel would read what it writes")
    return out


def _call_on_device(torch, device_index, fn):
    if torch._C._cuda_getDevice() == device_index:
        return fn()
    with torch.cuda.device(device_index):
        return fn()


def mm_torch(a, b, out=None, stream=None):
    """mm for torch tensors (see mm)."""
    torch = _torch
    gl_dtype, layout, m, n, k, ldb, c_dtype = plan(torch_dtype_name(a), torch_dtype_name(b), a.shape, a.stride(),
                                                   b.shape, b.stride())
    device_index = _check_torch_device((a, b), ("a", "b"))
    out = _torch_out(torch, out, m, n, c_dtype, device_index, a, b)
    return _run_torch(torch, device_index, stream, gl_dtype, layout, m, n, k, a, b, ldb, out, None, None)


def _run_torch(torch, device_index, stream, gl_dtype, layout, m, n, k, a, b, ldb, out, scale_a, scale_b):
    """The checked problem to the library on the stream (torch's current one unless given): `out`, written;
    an empty product needs no launch (zeros where K = 0)."""
    if m == 0 or n == 0:
        return out
    if k == 0:
        return out.zero_()
    handle = _torch_stream(torch, device_index, stream)
    lib = library()
    sa, sb = (None, None) if scale_a is None else (scale_a.data_ptr(), scale_b.data_ptr())
    status = _call_on_device(torch, device_index, lambda: lib.gemm(gl_dtype, layout, m, n, k, a.data_ptr(), k, b.data_ptr(),
                                                                   ldb, out.data_ptr(), n, sa, sb, handle))
    if status:
        _raise_status(status)
    return out


def linear_rows(x, weight):
    """x (..., K) as rows (-1, K) without a copy, and the shape of x @ weight.T; ValueError if it cannot be."""
    if weight.dim() != 2:
        raise ValueError(f"weight must be a matrix (N, K): got shape {tuple(weight.shape)}")
    if x.dim() < 1:
        raise ValueError("x must have at least one dimension (..., K)")
    n, k = weight.shape
    if x.shape[-1] != k:
        raise ValueError(f"shape mismatch: x has {x.shape[-1]} features (its last dimension) but weight is {n}x{k}")
    try:
        x2 = x.view(-1, k)
    except (RuntimeError, ValueError):  # torch's "view size is not compatible" (a ValueError under fake tensors)
        raise ValueError(f"x: shape {tuple(x.shape)} with strides {tuple(x.stride())} is not rows of {k} elements a "
                         "view can flatten; gemm_ladder copies nothing: call .contiguous() on it") from None
    return x2, (*x.shape[:-1], n)


def linear_torch(x, weight, out=None, stream=None):
    """linear for torch tensors (see linear): mm of x's rows and weight.t() (RCR, read in place)."""
    x2, shape = linear_rows(x, weight)
    return mm_torch(x2, weight.t(), out, stream).view(shape)


def _check_scales_torch(scales, device_index):
    for name, s in scales:
        if not is_torch_tensor(s):
            raise TypeError(f"{name} must be a torch tensor when a and b are")
        if torch_dtype_name(s) != "float32":
            raise TypeError(f"{name} is {torch_dtype_name(s)}: scales are float32")
        if not s.is_cuda or s.get_device() != device_index:
            raise TypeError(f"{name} is on {s.device}: scales live on a's device, cuda:{device_index}")


def mm_fp8_torch(a, b, scale_a, scale_b, out=None, stream=None, block_scaled=None):
    """mm_fp8 for torch tensors (see mm_fp8)."""
    torch = _torch
    _, _, m, n, k, ldb, c_dtype = plan(torch_dtype_name(a), torch_dtype_name(b), a.shape, a.stride(), b.shape,
                                       b.stride(), fp8=True)
    device_index = _check_torch_device((a, b), ("a", "b"))
    _check_scales_torch((("scale_a", scale_a), ("scale_b", scale_b)), device_index)
    gl_dtype = fp8_mode(m, n, k, scale_a.shape, scale_a.stride(), scale_b.shape, scale_b.stride(), block_scaled)
    out = _torch_out(torch, out, m, n, c_dtype, device_index, a, b)
    return _run_torch(torch, device_index, stream, gl_dtype, GL_RCR, m, n, k, a, b, ldb, out, scale_a, scale_b)


# ---- any DLPack array ----

def _stream_handle(stream) -> int:
    """A cudaStream_t as an int from an int, or from an object with cuda_stream (torch) or ptr (CuPy)."""
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise TypeError(f"stream: an int (a cudaStream_t) or an object with cuda_stream, got {type(stream).__name__}")


def _cuda_view(x, name, stream):
    v = _dlpack.view(x, stream)
    if v.device_type not in (_dlpack.KDL_CUDA, _dlpack.KDL_CUDA_MANAGED):
        raise TypeError(f"{name} is on {v.device}: gemm_ladder runs on CUDA arrays")
    return v


def _same_device(views, names):
    for v, name in zip(views[1:], names[1:]):
        if v.device_id != views[0].device_id:
            raise TypeError(f"{name} is on {v.device} but {names[0]} is on {views[0].device}: all operands on one device")


def _dlpack_out(out, m, n, c_dtype, stream, inputs):
    if out is None:
        raise TypeError("out= is needed for arrays that are not torch tensors: gemm_ladder allocates results with "
                        f"torch only (pass a writable {m}x{n} {c_dtype} array)")
    v = _cuda_view(out, "out", stream)
    if v.dtype != c_dtype:
        raise TypeError(f"out is {v.dtype}: the result is {c_dtype}")
    if v.shape != (m, n):
        raise ValueError(f"out has shape {v.shape}: the result is {m}x{n}")
    if not _dense(m, n, v.strides):
        raise ValueError(f"out: strides {v.strides}: the result is written row-major (strides ({n}, 1))")
    if v.read_only:
        raise ValueError("out is read-only (its DLPack capsule says so)")
    for name, x in inputs:
        if _overlaps(v.data, m * n * v.itemsize, x.data, _prod(x.shape) * x.itemsize):
            raise ValueError(f"out overlaps {name}: the kernel would read what it writes")
    return v


def mm_dlpack(a, b, out=None, stream=None):
    """mm for DLPack arrays (see mm)."""
    handle = _stream_handle(stream)
    va, vb = _cuda_view(a, "a", handle), _cuda_view(b, "b", handle)
    gl_dtype, layout, m, n, k, ldb, c_dtype = plan(va.dtype, vb.dtype, va.shape, va.strides, vb.shape, vb.strides)
    _same_device((va, vb), ("a", "b"))
    if out is None and is_torch_tensor(a):
        out = _torch.empty((m, n), dtype=getattr(_torch, c_dtype), device=a.device)
    vc = _dlpack_out(out, m, n, c_dtype, handle, (("a", va), ("b", vb)))
    _same_device((va, vc), ("a", "out"))
    if m == 0 or n == 0:
        return out
    if k == 0:
        raise ValueError("K = 0: the result is zeros, which gemm_ladder does not write into a non-torch array")
    status = library().gemm(gl_dtype, layout, m, n, k, va.data, k, vb.data, ldb, vc.data, n, None, None, handle)
    if status:
        _raise_status(status)
    return out


def mm_fp8_dlpack(a, b, scale_a, scale_b, out=None, stream=None, block_scaled=None):
    """mm_fp8 for DLPack arrays (see mm_fp8)."""
    handle = _stream_handle(stream)
    va, vb = _cuda_view(a, "a", handle), _cuda_view(b, "b", handle)
    vsa, vsb = _cuda_view(scale_a, "scale_a", handle), _cuda_view(scale_b, "scale_b", handle)
    _, _, m, n, k, ldb, c_dtype = plan(va.dtype, vb.dtype, va.shape, va.strides, vb.shape, vb.strides, fp8=True)
    for name, v in (("scale_a", vsa), ("scale_b", vsb)):
        if v.dtype != "float32":
            raise TypeError(f"{name} is {v.dtype}: scales are float32")
    _same_device((va, vb, vsa, vsb), ("a", "b", "scale_a", "scale_b"))
    gl_dtype = fp8_mode(m, n, k, vsa.shape, vsa.strides, vsb.shape, vsb.strides, block_scaled)
    if out is None and is_torch_tensor(a):
        out = _torch.empty((m, n), dtype=_torch.bfloat16, device=a.device)
    vc = _dlpack_out(out, m, n, c_dtype, handle, (("a", va), ("b", vb)))
    _same_device((va, vc), ("a", "out"))
    if m == 0 or n == 0:
        return out
    status = library().gemm(gl_dtype, GL_RCR, m, n, k, va.data, k, vb.data, ldb, vc.data, n, vsa.data, vsb.data, handle)
    if status:
        _raise_status(status)
    return out


# ---- grouped_mm (chapter 13's grouped kernel: every expert of a mixture-of-experts layer in one launch) ----

GROUPED_N = 256  # N % 256: a 256-column tile must stay inside one expert's weight
GROUPED_K = 8    # K % 8: TMA reads rows whose pitch is a multiple of 16 bytes
GROUPED_TILES = (0, 16, 64, 128)


def _grouped_operands(op, w, out, w_shape, dtype_a, dtype_b, dtype_offsets, shape_a, strides_a, shape_b, strides_b,
                      shape_offsets, strides_offsets):
    """(E, rows, N, K) of a grouped call `op` (grouped_mm or grouped_swiglu) whose weights are the argument named `w`,
    of shape `w_shape`, and whose result is `out`: the checks both share, in one order (csrc/torch_ops.cpp's
    grouped_operands says the same)."""
    if dtype_a != "bfloat16" or dtype_b != "bfloat16":
        raise TypeError(f"{op} takes bfloat16 a and {w} (a bf16 grouped GEMM, bf16 {out}): got {dtype_a} and {dtype_b}")
    if dtype_offsets != "int64":
        raise TypeError(f"offsets is {dtype_offsets}: {op} takes int64 offsets (E + 1 of them, offsets[0] = 0; "
                        "call .to(torch.int64))")
    if len(shape_a) != 2 or len(shape_b) != 3:
        raise ValueError(f"a must be a matrix (rows, K) and {w} the experts' weights {w_shape}: got shapes "
                         f"{tuple(shape_a)} and {tuple(shape_b)}")
    rows, k = shape_a
    e, n, k2 = shape_b
    if k != k2:
        raise ValueError(f"shape mismatch: a is {rows}x{k} and {w} is {e}x{n}x{k2}: a's columns ({k}) must equal the "
                         f"weights' K ({k2})")
    if e < 1:
        raise ValueError(f"{w} has no experts (E = 0): {op} needs at least one")
    if tuple(shape_offsets) != (e + 1,):
        raise ValueError(f"offsets has shape {tuple(shape_offsets)}: it must hold E + 1 = {e + 1} int64 (offsets[0] = 0, "
                         "offsets[g + 1] where expert g ends)")
    if e + 1 > 1 and strides_offsets[0] != 1:
        raise ValueError(f"offsets: stride {tuple(strides_offsets)}: {op} takes contiguous offsets and copies "
                         "nothing; call .contiguous() on it")
    if not _dense(rows, k, strides_a):
        raise ValueError(f"a: strides {tuple(strides_a)} for a {rows}x{k} matrix: {op} takes a row-major a "
                         f"(strides ({k}, 1)) and copies nothing; call .contiguous() on it")
    if not ((e == 1 or strides_b[0] == n * k) and _dense(n, k, strides_b[1:])):
        raise ValueError(f"{w}: strides {tuple(strides_b)} for {e} weights of {n}x{k}: {op} takes them contiguous "
                         f"(strides ({n * k}, {k}, 1): nn.Linear weights stacked) and copies nothing; call .contiguous() on it")
    return e, rows, n, k


def grouped_plan(dtype_a, dtype_b, dtype_offsets, shape_a, strides_a, shape_b, strides_b, shape_offsets,
                 strides_offsets, tile_rows=0):
    """(E, rows, N, K) of grouped_mm(a, b, offsets), checked: TypeError (dtypes), ValueError (shapes,
    strides, chapter 13's rules on N and K, tile_rows) before anything runs."""
    e, rows, n, k = _grouped_operands("grouped_mm", "b", "C", "(E, N, K)", dtype_a, dtype_b, dtype_offsets, shape_a,
                                      strides_a, shape_b, strides_b, shape_offsets, strides_offsets)
    if n % GROUPED_N != 0:
        raise ValueError(f"N = {n}: grouped_mm needs N % 256 == 0 (chapter 13's 256-column tile must stay inside one "
                         "expert's weight)")
    if k % GROUPED_K != 0:
        raise ValueError(f"K = {k}: grouped_mm needs K % 8 == 0 (TMA reads rows whose pitch is a multiple of 16 bytes)")
    if tile_rows not in GROUPED_TILES:
        raise ValueError(f"tile_rows = {tile_rows}: 0 (the library chooses), 16, 64 or 128")
    return e, rows, n, k


SWIGLU_BLOCK = 128  # rows of W_gate (then of W_up) in each 256-row block of the interleaved weights
SWIGLU_TILES = (0, 64, 128)


def grouped_swiglu_plan(dtype_a, dtype_b, dtype_offsets, shape_a, strides_a, shape_b, strides_b, shape_offsets,
                        strides_offsets, tile_rows=0):
    """(E, rows, I, K) of grouped_swiglu(a, w_gate_up_interleaved, offsets), checked as grouped_plan is, with
    step 3's rule (I % 128 == 0) and its tiles (0, 64 or 128: no decode tile)."""
    e, rows, n, k = _grouped_operands("grouped_swiglu", "w_gate_up_interleaved", "H", "(E, 2I, K)", dtype_a, dtype_b,
                                      dtype_offsets, shape_a, strides_a, shape_b, strides_b, shape_offsets,
                                      strides_offsets)
    if n % (2 * SWIGLU_BLOCK) != 0:
        raise ValueError(f"w_gate_up_interleaved has 2I = {n} rows per expert: grouped_swiglu needs I % 128 == 0 (each "
                         "256-row block holds 128 rows of W_gate, then the same outputs' 128 rows of W_up)")
    if k % GROUPED_K != 0:
        raise ValueError(f"K = {k}: grouped_swiglu needs K % 8 == 0 (TMA reads rows whose pitch is a multiple of 16 bytes)")
    if tile_rows not in SWIGLU_TILES:
        raise ValueError(f"tile_rows = {tile_rows}: 0 (the library chooses), 64 or 128 (grouped_swiglu has no decode tile)")
    return e, rows, n // 2, k


def _grouped_run(handle, e, rows, n, k, pa, pb, pc, po, tile_rows):
    status = library().grouped_gemm(e, rows, n, k, pa, pb, pc, po, None, tile_rows, handle)
    if status:
        _raise_status(status)


def grouped_mm_torch(a, b, offsets, out=None, stream=None, tile_rows=0, zero_fill=True):
    """grouped_mm for torch tensors (see gemm_ladder.grouped_mm)."""
    torch = _torch
    e, rows, n, k = grouped_plan(torch_dtype_name(a), torch_dtype_name(b), torch_dtype_name(offsets), a.shape, a.stride(),
                                 b.shape, b.stride(), offsets.shape, offsets.stride(), tile_rows)
    device_index = _check_torch_device((a, b, offsets), ("a", "b", "offsets"))
    if out is None:
        out = (torch.zeros if zero_fill else torch.empty)((rows, n), dtype=torch.bfloat16, device=a.device)
    else:
        out = _torch_out(torch, out, rows, n, "bfloat16", device_index, a, b)
    if rows == 0 or n == 0:
        return out
    if k == 0:
        return out.zero_()
    handle = _torch_stream(torch, device_index, stream)
    _call_on_device(torch, device_index, lambda: _grouped_run(handle, e, rows, n, k, a.data_ptr(), b.data_ptr(),
                                                              out.data_ptr(), offsets.data_ptr(), tile_rows))
    return out


def grouped_mm_dlpack(a, b, offsets, out=None, stream=None, tile_rows=0):
    """grouped_mm for DLPack arrays (see gemm_ladder.grouped_mm): `out` is required (rows × N bf16)."""
    handle = _stream_handle(stream)
    va, vb, vo = _cuda_view(a, "a", handle), _cuda_view(b, "b", handle), _cuda_view(offsets, "offsets", handle)
    e, rows, n, k = grouped_plan(va.dtype, vb.dtype, vo.dtype, va.shape, va.strides, vb.shape, vb.strides, vo.shape,
                                 vo.strides, tile_rows)
    _same_device((va, vb, vo), ("a", "b", "offsets"))
    vc = _dlpack_out(out, rows, n, "bfloat16", handle, (("a", va), ("b", vb), ("offsets", vo)))
    _same_device((va, vc), ("a", "out"))
    if rows == 0 or n == 0:
        return out
    if k == 0:
        raise ValueError("K = 0: the result is zeros, which gemm_ladder does not write into a non-torch array")
    _grouped_run(handle, e, rows, n, k, va.data, vb.data, vc.data, vo.data, tile_rows)
    return out


def _swiglu_run(handle, e, rows, i, k, pa, pb, ph, po, tile_rows):
    lib = library()
    if lib.grouped_swiglu is None:
        raise LibraryNotFoundError(f"{lib.path} has no gl_grouped_swiglu: it was built before the call existed; rebuild "
                                   "it (cmake --build build --target gemm_ladder)")
    status = lib.grouped_swiglu(e, rows, i, k, pa, pb, ph, po, None, tile_rows, handle)
    if status:
        _raise_status(status)


def grouped_swiglu_torch(a, w, offsets, out=None, stream=None, tile_rows=0, zero_fill=True):
    """grouped_swiglu for torch tensors (see gemm_ladder.grouped_swiglu)."""
    torch = _torch
    e, rows, i, k = grouped_swiglu_plan(torch_dtype_name(a), torch_dtype_name(w), torch_dtype_name(offsets), a.shape,
                                        a.stride(), w.shape, w.stride(), offsets.shape, offsets.stride(), tile_rows)
    device_index = _check_torch_device((a, w, offsets), ("a", "w_gate_up_interleaved", "offsets"))
    if out is None:
        out = (torch.zeros if zero_fill else torch.empty)((rows, i), dtype=torch.bfloat16, device=a.device)
    else:
        out = _torch_out(torch, out, rows, i, "bfloat16", device_index, a, w)
    if rows == 0 or i == 0:
        return out
    if k == 0:  # SiLU(0)·0
        return out.zero_()
    handle = _torch_stream(torch, device_index, stream)
    _call_on_device(torch, device_index, lambda: _swiglu_run(handle, e, rows, i, k, a.data_ptr(), w.data_ptr(),
                                                             out.data_ptr(), offsets.data_ptr(), tile_rows))
    return out


def grouped_swiglu_dlpack(a, w, offsets, out=None, stream=None, tile_rows=0):
    """grouped_swiglu for DLPack arrays (see gemm_ladder.grouped_swiglu): `out` is required (rows × I bf16)."""
    handle = _stream_handle(stream)
    va, vw = _cuda_view(a, "a", handle), _cuda_view(w, "w_gate_up_interleaved", handle)
    vo = _cuda_view(offsets, "offsets", handle)
    e, rows, i, k = grouped_swiglu_plan(va.dtype, vw.dtype, vo.dtype, va.shape, va.strides, vw.shape, vw.strides,
                                        vo.shape, vo.strides, tile_rows)
    _same_device((va, vw, vo), ("a", "w_gate_up_interleaved", "offsets"))
    vh = _dlpack_out(out, rows, i, "bfloat16", handle, (("a", va), ("w_gate_up_interleaved", vw), ("offsets", vo)))
    _same_device((va, vh), ("a", "out"))
    if rows == 0 or i == 0:
        return out
    if k == 0:
        raise ValueError("K = 0: the result is zeros, which gemm_ladder does not write into a non-torch array")
    _swiglu_run(handle, e, rows, i, k, va.data, vw.data, vh.data, vo.data, tile_rows)
    return out


def _swiglu_blocks(w, name):
    """(leading shape, 2I, K, 2I / 256) of stacked gate+up weights (..., 2I, K); TypeError or ValueError if not."""
    if not is_torch_tensor(w):
        raise TypeError(f"{name} takes a torch tensor (..., 2I, K): got {type(w).__name__}")
    if w.dim() < 2:
        raise ValueError(f"{name} takes weights of shape (..., 2I, K): got shape {tuple(w.shape)}")
    *lead, n, k = w.shape
    if n % (2 * SWIGLU_BLOCK) != 0:
        raise ValueError(f"{name}: 2I = {n} rows: grouped_swiglu's order needs I % 128 == 0")
    return lead, n, k, n // (2 * SWIGLU_BLOCK)


def interleave_gate_up(w_gate_up):
    """(..., 2I, K) weights stacked [W_gate; W_up] -> the same rows interleaved by 128 (a new contiguous tensor):
    rows 256t .. 256t + 127 are W_gate's 128t .., rows 256t + 128 .. 256t + 255 W_up's same rows."""
    lead, n, k, blocks = _swiglu_blocks(w_gate_up, "interleave_gate_up")
    parts = w_gate_up.reshape(*lead, 2, blocks, SWIGLU_BLOCK, k)               # (..., gate|up, t, 128, K)
    return parts.transpose(-4, -3).clone(memory_format=_torch.contiguous_format).view(*lead, n, k)  # (..., t, gate|up, 128, K)


def deinterleave_gate_up(w_interleaved):
    """interleave_gate_up's inverse: (..., 2I, K) interleaved by 128 -> stacked [W_gate; W_up] (a new contiguous tensor)."""
    lead, n, k, blocks = _swiglu_blocks(w_interleaved, "deinterleave_gate_up")
    parts = w_interleaved.reshape(*lead, blocks, 2, SWIGLU_BLOCK, k)           # (..., t, gate|up, 128, K)
    return parts.transpose(-4, -3).clone(memory_format=_torch.contiguous_format).view(*lead, n, k)  # (..., gate|up, t, 128, K)


def grouped_layout(rows_per_expert, alignment=128):
    """The contiguous layout of experts holding `rows_per_expert` rows (each >= 0): (offsets, first, rows),
    as lists of ints: the E + 1 offsets grouped_mm takes, each expert's first row (a multiple of
    `alignment`), and the rows of A and C (the last end rounded up to the alignment, at least one tile).
    Chapter 13's contiguous_layout, on the host."""
    offsets, first = [0], []
    for r in rows_per_expert:
        r = int(r)
        if r < 0:
            raise ValueError(f"an expert of {r} rows: rows_per_expert must be >= 0")
        start = _ceil_div(offsets[-1], alignment) * alignment
        first.append(start)
        offsets.append(start + r)
    return offsets, first, max(_ceil_div(offsets[-1], alignment) * alignment, alignment)


# ---- moe_permute (the routed tokens into grouped_mm's contiguous layout: the library's gl_moe_permute) ----

PERMUTE_MAX_EXPERTS = 4096  # gl_moe_permute's limit (the padding before each expert in a block's shared memory)


def moe_permute_plan(dtype_x, dtype_flat, dtype_order, dtype_counts, shape_x, strides_x, shape_flat, strides_flat,
                     shape_order, strides_order, shape_counts, strides_counts, k, rows):
    """(tokens, hidden, E, routed, ldx) of moe_permute(xf, flat, order, counts, k, rows), checked: TypeError (dtypes),
    ValueError (shapes, strides, k, rows, E) before anything runs (csrc/torch_ops.cpp's moe_permute_impl says the
    same, in the same order)."""
    if dtype_x != "bfloat16":
        raise TypeError(f"moe_permute takes bfloat16 xf (the tokens' rows): got {dtype_x}")
    for name, dtype in (("flat", dtype_flat), ("order", dtype_order), ("counts", dtype_counts)):
        if dtype != "int64":
            raise TypeError(f"{name} is {dtype}: moe_permute takes int64 flat, order and counts (call .to(torch.int64))")
    if len(shape_x) != 2:
        raise ValueError(f"xf must be a matrix (tokens, hidden): got shape {tuple(shape_x)}")
    tokens, hidden = shape_x
    if k < 1:
        raise ValueError(f"k = {k}: each token picks at least one expert")
    routed = tokens * k
    if tuple(shape_flat) != (routed,):
        raise ValueError(f"flat has shape {tuple(shape_flat)}: it must hold tokens·k = {routed} experts (token t's j-th "
                         "at t·k + j)")
    if tuple(shape_order) != (routed,):
        raise ValueError(f"order has shape {tuple(shape_order)}: it must hold the tokens·k = {routed} slots sorted by "
                         "expert")
    if len(shape_counts) != 1 or shape_counts[0] < 1:
        raise ValueError(f"counts has shape {tuple(shape_counts)}: it must hold E >= 1 counts (one per expert)")
    experts = shape_counts[0]
    if experts > PERMUTE_MAX_EXPERTS:
        raise ValueError(f"E = {experts}: moe_permute takes at most {PERMUTE_MAX_EXPERTS} experts")
    if rows < routed:
        raise ValueError(f"rows = {rows} is below the tokens·k = {routed} routed rows: a holds every one of them")
    if (hidden > 1 and strides_x[1] != 1) or (tokens > 1 and strides_x[0] < hidden):
        raise ValueError(f"xf: strides {tuple(strides_x)} for a {tokens}x{hidden} matrix: moe_permute takes rows of "
                         f"contiguous elements (strides (P, 1), P >= {hidden}) and copies nothing; call .contiguous() on it")
    for name, n, strides in (("flat", routed, strides_flat), ("order", routed, strides_order),
                             ("counts", experts, strides_counts)):
        if n > 1 and strides[0] != 1:
            raise ValueError(f"{name}: stride {tuple(strides)}: moe_permute takes contiguous {name} and copies nothing; "
                             "call .contiguous() on it")
    ldx = strides_x[0] if tokens > 1 else hidden
    return tokens, hidden, experts, routed, ldx


def moe_permute_device(xf, flat, order, counts) -> int:
    """The CUDA device all four are on; TypeError otherwise (after moe_permute_plan's checks, as the C++ operator)."""
    index = None
    for t, name in ((xf, "xf"), (flat, "flat"), (order, "order"), (counts, "counts")):
        if not t.is_cuda:
            raise TypeError(f"{name} is on {t.device}: gemm_ladder runs on CUDA tensors")
        if index is None:
            index = t.get_device()
        elif t.get_device() != index:
            raise TypeError(f"{name} is on cuda:{t.get_device()} but xf is on cuda:{index}: all operands on one device")
    return index


def moe_permute_torch(xf, flat, order, counts, k, rows, stream=None):
    """moe_permute for torch tensors through ctypes (see gemm_ladder.moe_permute): (a, offsets, place)."""
    torch = _torch
    tokens, hidden, experts, routed, ldx = moe_permute_plan(
        torch_dtype_name(xf), torch_dtype_name(flat), torch_dtype_name(order), torch_dtype_name(counts), xf.shape,
        xf.stride(), flat.shape, flat.stride(), order.shape, order.stride(), counts.shape, counts.stride(), k, rows)
    device_index = moe_permute_device(xf, flat, order, counts)
    a = torch.empty((rows, hidden), dtype=torch.bfloat16, device=xf.device)
    offsets = torch.empty(experts + 1, dtype=torch.int64, device=xf.device)
    place = torch.empty(routed, dtype=torch.int64, device=xf.device)
    lib = library()
    if lib.moe_permute is None:
        raise LibraryNotFoundError(f"{lib.path} has no gl_moe_permute: it was built before the call existed; rebuild it "
                                   "(cmake --build build --target gemm_ladder)")
    handle = _torch_stream(torch, device_index, stream)
    status = _call_on_device(torch, device_index, lambda: lib.moe_permute(
        tokens, hidden, k, experts, rows, xf.data_ptr(), ldx, flat.data_ptr(), order.data_ptr(), counts.data_ptr(),
        a.data_ptr(), offsets.data_ptr(), place.data_ptr(), handle))
    if status:
        _raise_status(status)
    return a, offsets, place
