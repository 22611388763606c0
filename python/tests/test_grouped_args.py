"""grouped_mm and grouped_swiglu without a GPU: the layout helper, the checks before a launch (TypeError for a
dtype or a device, ValueError for a shape, a stride or chapter 13's rules on N (I) and K, each in one line) on fake
DLPack arrays, the library's refusals as exceptions, and, where torch is importable, the gate/up interleaving
helper on CPU tensors and the custom operators' fakes (what torch.compile traces) on fake CUDA tensors, refusing
what the real ones refuse."""

import pytest

import gemm_ladder
from gemm_ladder import _core
from support import BF16, F32, FakeCudaArray, library_missing, no_sm90a, rerun_with_python_ops, torch_missing

ADDR = 0x7F0000000000  # 256-byte aligned: an address no call below reaches the GPU with
I64, I32 = (0, 64), (0, 32)


def test_grouped_layout():
    # chapter 13's contiguous_layout: each expert from a multiple of 128, offsets[g + 1] its end
    assert gemm_ladder.grouped_layout([0, 1, 128, 0, 257]) == ([0, 0, 1, 256, 256, 513], [0, 0, 128, 256, 256], 640)
    assert gemm_ladder.grouped_layout([0, 0]) == ([0, 0, 0], [0, 0], 128)  # at least one tile of rows
    assert gemm_ladder.grouped_layout([5, 5], alignment=64) == ([0, 5, 69], [0, 64], 128)
    with pytest.raises(ValueError, match="an expert of -1 rows"):
        gemm_ladder.grouped_layout([3, -1])


def refused(exc, words, **overrides):
    args = dict(dtype_a="bfloat16", dtype_b="bfloat16", dtype_offsets="int64", shape_a=(256, 64), strides_a=(64, 1),
                shape_b=(2, 256, 64), strides_b=(256 * 64, 64, 1), shape_offsets=(3,), strides_offsets=(1,), tile_rows=0)
    args.update(overrides)
    with pytest.raises(exc) as e:
        _core.grouped_plan(**args)
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_grouped_plan():
    ok = dict(dtype_a="bfloat16", dtype_b="bfloat16", dtype_offsets="int64", shape_a=(256, 64), strides_a=(64, 1),
              shape_b=(2, 256, 64), strides_b=(256 * 64, 64, 1), shape_offsets=(3,), strides_offsets=(1,))
    assert _core.grouped_plan(**ok) == (2, 256, 256, 64)
    # strides of extent-1 dimensions are never looked at: one expert, one row, one offset stride
    assert _core.grouped_plan(**dict(ok, shape_a=(1, 64), strides_a=(999, 1), shape_b=(1, 256, 64),
                                     strides_b=(7, 64, 1), shape_offsets=(2,), strides_offsets=(1,))) == (1, 1, 256, 64)
    refused(TypeError, "grouped_mm takes bfloat16 a and b", dtype_a="float32")
    refused(TypeError, "offsets is int32: grouped_mm takes int64 offsets", dtype_offsets="int32")
    refused(ValueError, "a must be a matrix (rows, K) and b the experts' weights (E, N, K)", shape_b=(512, 64),
            strides_b=(64, 1))
    refused(ValueError, "shape mismatch: a is 256x64 and b is 2x256x72", shape_b=(2, 256, 72), strides_b=(256 * 72, 72, 1))
    refused(ValueError, "b has no experts (E = 0)", shape_b=(0, 256, 64), shape_offsets=(1,))
    refused(ValueError, "offsets has shape (2,): it must hold E + 1 = 3 int64", shape_offsets=(2,))
    refused(ValueError, "offsets: stride (2,): grouped_mm takes contiguous offsets", strides_offsets=(2,))
    refused(ValueError, "a: strides (1, 256) for a 256x64 matrix", strides_a=(1, 256))
    refused(ValueError, "b: strides (16384, 1, 256) for 2 weights of 256x64", strides_b=(16384, 1, 256))
    refused(ValueError, "b: strides (20000, 64, 1)", strides_b=(20000, 64, 1))  # a slice of a longer stack
    refused(ValueError, "N = 384: grouped_mm needs N % 256 == 0", shape_b=(2, 384, 64), strides_b=(384 * 64, 64, 1))
    refused(ValueError, "K = 60: grouped_mm needs K % 8 == 0", shape_a=(256, 60), strides_a=(60, 1), shape_b=(2, 256, 60),
            strides_b=(256 * 60, 60, 1))
    refused(ValueError, "tile_rows = 32: 0 (the library chooses), 16, 64 or 128", tile_rows=32)


def fake_problem(**kw):
    a = FakeCudaArray(ADDR, (256, 64), BF16)
    b = FakeCudaArray(ADDR + 65536, (2, 256, 64), BF16)
    offsets = FakeCudaArray(ADDR + 4 * 65536, (3,), I64)
    out = FakeCudaArray(ADDR + 8 * 65536, (256, 256), BF16)
    return dict(dict(a=a, b=b, offsets=offsets, out=out), **kw)


def test_grouped_mm_checks_before_the_library():
    p = fake_problem()
    with pytest.raises(TypeError, match="out= is needed for arrays that are not torch tensors"):
        gemm_ladder.grouped_mm(p["a"], p["b"], p["offsets"])
    with pytest.raises(TypeError, match="offsets is int32"):
        gemm_ladder.grouped_mm(**fake_problem(offsets=FakeCudaArray(ADDR + 4 * 65536, (3,), I32)))
    with pytest.raises(TypeError, match="offsets is on cuda:1 but a is on cuda:0"):
        gemm_ladder.grouped_mm(**fake_problem(offsets=FakeCudaArray(ADDR + 4 * 65536, (3,), I64, device_id=1)))
    with pytest.raises(TypeError, match="out is float32: the result is bfloat16"):
        gemm_ladder.grouped_mm(**fake_problem(out=FakeCudaArray(ADDR + 8 * 65536, (256, 256), F32)))
    with pytest.raises(ValueError, match=r"out has shape \(256, 64\): the result is 256x256"):
        gemm_ladder.grouped_mm(**fake_problem(out=FakeCudaArray(ADDR + 8 * 65536, (256, 64), BF16)))
    with pytest.raises(ValueError, match="out overlaps offsets"):
        gemm_ladder.grouped_mm(**fake_problem(out=FakeCudaArray(ADDR + 4 * 65536 - 64, (256, 256), BF16)))
    with pytest.raises(ValueError, match="N = 128: grouped_mm needs N % 256 == 0"):
        gemm_ladder.grouped_mm(**fake_problem(b=FakeCudaArray(ADDR + 65536, (2, 128, 64), BF16),
                                              out=FakeCudaArray(ADDR + 8 * 65536, (256, 128), BF16)))
    np = pytest.importorskip("numpy", reason="numpy is not importable (scripts/test.sh installs it into .venv)")
    with pytest.raises(TypeError, match="a is on cpu:0: gemm_ladder runs on CUDA arrays"):
        gemm_ladder.grouped_mm(np.zeros((256, 64), np.float32), p["b"], p["offsets"], out=p["out"])


@pytest.mark.skipif(bool(library_missing()), reason=library_missing() or "-")
def test_grouped_library_refusals_are_exceptions_with_its_line():
    # A off TMA's 16-byte boundary (a whole bf16 off): the library's GL_UNSUPPORTED, a ValueError, with its line
    with pytest.raises(gemm_ladder.UnsupportedError) as e:
        gemm_ladder.grouped_mm(**fake_problem(a=FakeCudaArray(ADDR + 2, (256, 64), BF16)))
    assert isinstance(e.value, ValueError)
    assert str(e.value) == ("gl_grouped_gemm(E = 2, rows = 256, N = 256, K = 64): A starts 2 bytes past a 16-byte "
                            "boundary: TMA needs 16-byte aligned operands")
    with pytest.raises(gemm_ladder.InvalidArgumentError, match="offsets starts 4 bytes past a 8-byte boundary"):
        gemm_ladder.grouped_mm(**fake_problem(offsets=FakeCudaArray(ADDR + 4 * 65536 + 4, (3,), I64)))


@pytest.mark.skipif(not no_sm90a().startswith("needs a CUDA GPU"), reason="this machine has a GPU: without one, a call "
                    "that passes every check is refused with GL_NO_SM90A (checked on machines without)")
def test_grouped_without_a_gpu_is_a_runtime_error_with_the_reason():
    with pytest.raises(gemm_ladder.NoSm90aDeviceError, match=r"gl_grouped_gemm\(E = 2.*no CUDA GPU"):
        gemm_ladder.grouped_mm(**fake_problem())


# ---- grouped_swiglu: the checks before the library (no torch needed) ----

def swiglu_refused(exc, words, **overrides):
    args = dict(dtype_a="bfloat16", dtype_b="bfloat16", dtype_offsets="int64", shape_a=(256, 64), strides_a=(64, 1),
                shape_b=(2, 256, 64), strides_b=(256 * 64, 64, 1), shape_offsets=(3,), strides_offsets=(1,), tile_rows=0)
    args.update(overrides)
    with pytest.raises(exc) as e:
        _core.grouped_swiglu_plan(**args)
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_grouped_swiglu_plan():
    ok = dict(dtype_a="bfloat16", dtype_b="bfloat16", dtype_offsets="int64", shape_a=(256, 64), strides_a=(64, 1),
              shape_b=(2, 768, 64), strides_b=(768 * 64, 64, 1), shape_offsets=(3,), strides_offsets=(1,))
    assert _core.grouped_swiglu_plan(**ok) == (2, 256, 384, 64)  # (E, rows, I, K): the result is I = 2I / 2 wide
    assert _core.grouped_swiglu_plan(**ok, tile_rows=64) == _core.grouped_swiglu_plan(**ok, tile_rows=128)
    swiglu_refused(TypeError, "grouped_swiglu takes bfloat16 a and w_gate_up_interleaved (a bf16 grouped GEMM, bf16 H)",
                   dtype_b="float32")
    swiglu_refused(TypeError, "offsets is int32: grouped_swiglu takes int64 offsets", dtype_offsets="int32")
    swiglu_refused(ValueError, "a must be a matrix (rows, K) and w_gate_up_interleaved the experts' weights (E, 2I, K)",
                   shape_b=(512, 64), strides_b=(64, 1))
    swiglu_refused(ValueError, "shape mismatch: a is 256x64 and w_gate_up_interleaved is 2x256x72",
                   shape_b=(2, 256, 72), strides_b=(256 * 72, 72, 1))
    swiglu_refused(ValueError, "w_gate_up_interleaved has no experts (E = 0): grouped_swiglu needs at least one",
                   shape_b=(0, 256, 64), shape_offsets=(1,))
    swiglu_refused(ValueError, "offsets: stride (2,): grouped_swiglu takes contiguous offsets", strides_offsets=(2,))
    swiglu_refused(ValueError, "a: strides (1, 256) for a 256x64 matrix: grouped_swiglu takes a row-major a",
                   strides_a=(1, 256))
    swiglu_refused(ValueError, "w_gate_up_interleaved: strides (16384, 1, 256) for 2 weights of 256x64",
                   strides_b=(16384, 1, 256))
    for n in (128, 384, 200):  # 2I = 384: N % 256 fails as it must for I = 192; the rule is on I
        swiglu_refused(ValueError, f"w_gate_up_interleaved has 2I = {n} rows per expert: grouped_swiglu needs I % 128 == 0",
                       shape_b=(2, n, 64), strides_b=(n * 64, 64, 1))
    swiglu_refused(ValueError, "K = 60: grouped_swiglu needs K % 8 == 0", shape_a=(256, 60), strides_a=(60, 1),
                   shape_b=(2, 256, 60), strides_b=(256 * 60, 60, 1))
    for tile in (16, 32):  # 16 is grouped_mm's decode tile, which the fused epilogue lacks
        swiglu_refused(ValueError, f"tile_rows = {tile}: 0 (the library chooses), 64 or 128 (grouped_swiglu has no decode "
                       "tile)", tile_rows=tile)


def fake_swiglu(**kw):
    a = FakeCudaArray(ADDR, (256, 64), BF16)
    w = FakeCudaArray(ADDR + 65536, (2, 512, 64), BF16)
    offsets = FakeCudaArray(ADDR + 4 * 65536, (3,), I64)
    out = FakeCudaArray(ADDR + 8 * 65536, (256, 256), BF16)
    return dict(dict(a=a, w_gate_up_interleaved=w, offsets=offsets, out=out), **kw)


def test_grouped_swiglu_checks_before_the_library():
    p = fake_swiglu()
    with pytest.raises(TypeError, match="out= is needed for arrays that are not torch tensors"):
        gemm_ladder.grouped_swiglu(p["a"], p["w_gate_up_interleaved"], p["offsets"])
    with pytest.raises(TypeError, match="offsets is int32: grouped_swiglu"):
        gemm_ladder.grouped_swiglu(**fake_swiglu(offsets=FakeCudaArray(ADDR + 4 * 65536, (3,), I32)))
    with pytest.raises(TypeError, match="w_gate_up_interleaved is on cuda:1 but a is on cuda:0"):
        gemm_ladder.grouped_swiglu(**fake_swiglu(w_gate_up_interleaved=FakeCudaArray(ADDR + 65536, (2, 512, 64), BF16,
                                                                                     device_id=1)))
    # the result is I = 256 columns wide, half the weights' 2I rows
    with pytest.raises(ValueError, match=r"out has shape \(256, 512\): the result is 256x256"):
        gemm_ladder.grouped_swiglu(**fake_swiglu(out=FakeCudaArray(ADDR + 8 * 65536, (256, 512), BF16)))
    with pytest.raises(ValueError, match="out overlaps w_gate_up_interleaved"):
        gemm_ladder.grouped_swiglu(**fake_swiglu(out=FakeCudaArray(ADDR + 65536 + 64, (256, 256), BF16)))
    with pytest.raises(ValueError, match="grouped_swiglu needs I % 128 == 0"):
        gemm_ladder.grouped_swiglu(**fake_swiglu(w_gate_up_interleaved=FakeCudaArray(ADDR + 65536, (2, 384, 64), BF16),
                                                 out=FakeCudaArray(ADDR + 8 * 65536, (256, 192), BF16)))
    with pytest.raises(ValueError, match="grouped_swiglu has no decode tile"):
        gemm_ladder.grouped_swiglu(**fake_swiglu(), tile_rows=16)


@pytest.mark.skipif(bool(library_missing()), reason=library_missing() or "-")
def test_grouped_swiglu_library_refusals_are_exceptions_with_its_line():
    with pytest.raises(gemm_ladder.UnsupportedError) as e:
        gemm_ladder.grouped_swiglu(**fake_swiglu(a=FakeCudaArray(ADDR + 2, (256, 64), BF16)))
    assert str(e.value) == ("gl_grouped_swiglu(E = 2, rows = 256, I = 256, K = 64): A starts 2 bytes past a 16-byte "
                            "boundary: TMA needs 16-byte aligned operands")
    with pytest.raises(gemm_ladder.UnsupportedError, match="H starts 8 bytes past a 16-byte boundary"):
        gemm_ladder.grouped_swiglu(**fake_swiglu(out=FakeCudaArray(ADDR + 8 * 65536 + 8, (256, 256), BF16)))


@pytest.mark.skipif(not no_sm90a().startswith("needs a CUDA GPU"), reason="this machine has a GPU: without one, a call "
                    "that passes every check is refused with GL_NO_SM90A (checked on machines without)")
def test_grouped_swiglu_without_a_gpu_is_a_runtime_error_with_the_reason():
    with pytest.raises(gemm_ladder.NoSm90aDeviceError, match=r"gl_grouped_swiglu\(E = 2, rows = 256, I = 256.*no CUDA GPU"):
        gemm_ladder.grouped_swiglu(**fake_swiglu())


# ---- the custom operator's fake, with torch (no GPU) ----

needs_torch = pytest.mark.skipif(bool(torch_missing()), reason=torch_missing() or "-")


@needs_torch
def test_fake_grouped_mm():
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    assert hasattr(torch.ops.gemm_ladder, "grouped_mm")
    schema = str(torch.ops.gemm_ladder.grouped_mm.default._schema)
    assert schema == "gemm_ladder::grouped_mm(Tensor a, Tensor b, Tensor offsets, int tile_rows=0, bool zero_fill=True) -> Tensor", schema
    with FakeTensorMode():
        a = torch.empty(384, 64, dtype=torch.bfloat16, device="cuda")
        w = torch.empty(3, 512, 64, dtype=torch.bfloat16, device="cuda")
        offsets = torch.empty(4, dtype=torch.int64, device="cuda")
        c = torch.ops.gemm_ladder.grouped_mm(a, w, offsets)
        assert (c.shape, c.dtype, c.stride(), c.device.type) == ((384, 512), torch.bfloat16, (512, 1), "cuda")
        assert torch.ops.gemm_ladder.grouped_mm(a, w, offsets, 64).shape == (384, 512)
        with pytest.raises(TypeError, match="offsets is int32"):
            torch.ops.gemm_ladder.grouped_mm(a, w, offsets.int())
        with pytest.raises(ValueError, match="N = 320: grouped_mm needs N % 256 == 0"):
            torch.ops.gemm_ladder.grouped_mm(a, torch.empty(3, 320, 64, dtype=torch.bfloat16, device="cuda"), offsets)
        with pytest.raises(ValueError, match=r"b: strides \(32768, 1, 512\)"):
            torch.ops.gemm_ladder.grouped_mm(a, w.transpose(1, 2).contiguous().transpose(1, 2), offsets)


@needs_torch
def test_grouped_mm_traces_without_a_graph_break():
    # strict export is dynamo's full-graph capture: a graph break fails it, as fullgraph=True does
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    class Moe(torch.nn.Module):
        def forward(self, x, w, offsets):
            return torch.nn.functional.silu(gemm_ladder.grouped_mm(x, w, offsets, tile_rows=64))

    with FakeTensorMode():
        args = (torch.empty(256, 64, dtype=torch.bfloat16, device="cuda"),
                torch.empty(2, 256, 64, dtype=torch.bfloat16, device="cuda"), torch.empty(3, dtype=torch.int64, device="cuda"))
        graph = torch.export.export(Moe(), args, strict=True).graph
    calls = [n for n in graph.nodes if n.op == "call_function" and str(n.target) == "gemm_ladder.grouped_mm.default"]
    assert len(calls) == 1, [str(n.target) for n in graph.nodes]
    assert 64 in calls[0].args or calls[0].kwargs.get("tile_rows") == 64, calls[0]


@needs_torch
def test_cpu_tensors_are_refused():
    import torch

    a = torch.zeros(256, 64, dtype=torch.bfloat16)
    w = torch.zeros(2, 256, 64, dtype=torch.bfloat16)
    offsets = torch.zeros(3, dtype=torch.int64)
    with pytest.raises(TypeError, match="a is on cpu: gemm_ladder runs on CUDA tensors"):
        gemm_ladder.grouped_mm(a, w, offsets)
    with pytest.raises(TypeError, match="a is on cpu: gemm_ladder runs on CUDA tensors"):
        torch.ops.gemm_ladder.grouped_mm(a, w, offsets)


@needs_torch
def test_the_python_operator_passes_the_same_tests():
    # Where the C++ operators cannot be built (GEMM_LADDER_CPP_OPS=0 forces it) the Python custom_op stands
    # in, with the same schema, fake and refusals: this file again, in a process that registers that one.
    rerun_with_python_ops(__file__, "the_python_operator_passes")


# ---- grouped_swiglu with torch (no GPU): the interleaving helper, the operator's fake ----

@needs_torch
def test_interleave_gate_up_puts_each_gate_block_before_its_up_block():
    import torch

    E, I, K = 3, 384, 24
    gate = torch.randn(E, I, K)
    up = torch.randn(E, I, K)
    stacked = torch.cat([gate, up], dim=1)  # (E, 2I, K): [W_gate; W_up], as x @ w.T then .chunk(2, -1) reads it
    w = gemm_ladder.interleave_gate_up(stacked)
    assert w.shape == stacked.shape and w.is_contiguous() and w.dtype == stacked.dtype
    for t in range(I // 128):  # rows 256t.. of an expert: W_gate's 128t..; the next 128: W_up's same rows
        assert torch.equal(w[:, 256 * t:256 * t + 128], gate[:, 128 * t:128 * t + 128])
        assert torch.equal(w[:, 256 * t + 128:256 * t + 256], up[:, 128 * t:128 * t + 128])
    assert torch.equal(gemm_ladder.deinterleave_gate_up(w), stacked)
    # the kernel's reading (grouped_swiglu.cuh, and the fp64 reference of test_lib): output j takes gate row
    # (j / 128)·256 + j % 128 of the interleaved block and up row 128 after it
    j = torch.arange(I)
    gate_rows = (j // 128) * 256 + j % 128
    assert torch.equal(w[:, gate_rows], gate) and torch.equal(w[:, gate_rows + 128], up)
    # any leading shape, bf16, a non-contiguous input; always a copy, even for I = 128 (the same order)
    one = torch.randn(256, 16, dtype=torch.bfloat16)
    copy = gemm_ladder.interleave_gate_up(one)
    assert torch.equal(copy, one) and copy.data_ptr() != one.data_ptr()
    strided = torch.randn(2, 16, 512).transpose(1, 2)  # (2, 512, 16), not contiguous
    assert torch.equal(gemm_ladder.deinterleave_gate_up(gemm_ladder.interleave_gate_up(strided)), strided)


@needs_torch
def test_interleave_gate_up_refusals():
    import torch

    with pytest.raises(ValueError, match="interleave_gate_up: 2I = 384 rows: grouped_swiglu's order needs I % 128 == 0"):
        gemm_ladder.interleave_gate_up(torch.zeros(2, 384, 8))
    with pytest.raises(ValueError, match=r"deinterleave_gate_up takes weights of shape \(..., 2I, K\): got shape \(512,\)"):
        gemm_ladder.deinterleave_gate_up(torch.zeros(512))
    with pytest.raises(TypeError, match="interleave_gate_up takes a torch tensor"):
        gemm_ladder.interleave_gate_up([[0.0] * 8] * 256)


@needs_torch
def test_fake_grouped_swiglu():
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    schema = str(torch.ops.gemm_ladder.grouped_swiglu.default._schema)
    assert schema == ("gemm_ladder::grouped_swiglu(Tensor a, Tensor w_gate_up_interleaved, Tensor offsets, int tile_rows=0, "
                      "bool zero_fill=True) -> Tensor"), schema
    with FakeTensorMode():
        a = torch.empty(384, 64, dtype=torch.bfloat16, device="cuda")
        w = torch.empty(3, 1536, 64, dtype=torch.bfloat16, device="cuda")
        offsets = torch.empty(4, dtype=torch.int64, device="cuda")
        h = torch.ops.gemm_ladder.grouped_swiglu(a, w, offsets)
        assert (h.shape, h.dtype, h.stride(), h.device.type) == ((384, 768), torch.bfloat16, (768, 1), "cuda")
        assert torch.ops.gemm_ladder.grouped_swiglu(a, w, offsets, 64, False).shape == (384, 768)
        with pytest.raises(ValueError, match="tile_rows = 16: 0 \\(the library chooses\\), 64 or 128"):
            torch.ops.gemm_ladder.grouped_swiglu(a, w, offsets, 16)
        with pytest.raises(TypeError, match="offsets is int32: grouped_swiglu"):
            torch.ops.gemm_ladder.grouped_swiglu(a, w, offsets.int())
        with pytest.raises(ValueError, match="w_gate_up_interleaved has 2I = 384 rows per expert"):
            torch.ops.gemm_ladder.grouped_swiglu(a, torch.empty(3, 384, 64, dtype=torch.bfloat16, device="cuda"), offsets)


@needs_torch
def test_grouped_swiglu_traces_without_a_graph_break():
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    class Experts(torch.nn.Module):  # an MoE's experts: the activation in one launch, then the down projection
        def forward(self, x, w_gate_up, w_down, offsets):
            h = gemm_ladder.grouped_swiglu(x, w_gate_up, offsets, zero_fill=False)
            return gemm_ladder.grouped_mm(h, w_down, offsets, zero_fill=False)

    with FakeTensorMode():
        bf16 = dict(dtype=torch.bfloat16, device="cuda")
        args = (torch.empty(256, 64, **bf16), torch.empty(2, 512, 64, **bf16), torch.empty(2, 256, 256, **bf16),
                torch.empty(3, dtype=torch.int64, device="cuda"))
        graph = torch.export.export(Experts(), args, strict=True).graph
    targets = [str(n.target) for n in graph.nodes if n.op == "call_function"]
    assert targets == ["gemm_ladder.grouped_swiglu.default", "gemm_ladder.grouped_mm.default"], targets


@needs_torch
def test_grouped_swiglu_cpu_tensors_are_refused():
    import torch

    a, w, offsets = torch.zeros(256, 64, dtype=torch.bfloat16), torch.zeros(2, 256, 64, dtype=torch.bfloat16), torch.zeros(3, dtype=torch.int64)
    with pytest.raises(TypeError, match="a is on cpu: gemm_ladder runs on CUDA tensors"):
        gemm_ladder.grouped_swiglu(a, w, offsets)
    with pytest.raises(TypeError, match="a is on cpu: gemm_ladder runs on CUDA tensors"):
        torch.ops.gemm_ladder.grouped_swiglu(a, w, offsets)


@needs_torch
@pytest.mark.parametrize("op", ["grouped_mm", "grouped_swiglu"])
def test_operator_refuses_as_the_python_checks_do(op):
    """The operator's own checks (csrc/torch_ops.cpp where it is built, else the Python custom_op's) run before
    its device check, so CPU tensors reach them here: each refusal is _core's, same type, same line."""
    import torch

    plan = _core.grouped_plan if op == "grouped_mm" else _core.grouped_swiglu_plan
    bf16 = dict(dtype=torch.bfloat16)
    good = dict(a=torch.zeros(256, 64, **bf16), w=torch.zeros(2, 512, 64, **bf16), offsets=torch.zeros(3, dtype=torch.int64))
    cases = [dict(w=torch.zeros(2, 512, 64)), dict(offsets=torch.zeros(3, dtype=torch.int32)),
             dict(w=torch.zeros(512, 64, **bf16)), dict(w=torch.zeros(2, 512, 72, **bf16)),
             dict(w=torch.zeros(0, 512, 64, **bf16), offsets=torch.zeros(1, dtype=torch.int64)),
             dict(offsets=torch.zeros(2, dtype=torch.int64)), dict(offsets=torch.zeros(6, dtype=torch.int64)[::2]),
             dict(a=torch.zeros(64, 256, **bf16).t()), dict(w=torch.zeros(2, 64, 512, **bf16).transpose(1, 2)),
             dict(w=torch.zeros(2, 384, 64, **bf16)),
             dict(a=torch.zeros(256, 60, **bf16), w=torch.zeros(2, 512, 60, **bf16)), dict(tile_rows=16),
             dict(tile_rows=32)]
    refused = 0
    for case in cases:
        args = {**good, "tile_rows": 0, **case}
        a, w, offsets = args["a"], args["w"], args["offsets"]
        try:
            plan(_core.torch_dtype_name(a), _core.torch_dtype_name(w), _core.torch_dtype_name(offsets), a.shape,
                 a.stride(), w.shape, w.stride(), offsets.shape, offsets.stride(), args["tile_rows"])
        except (TypeError, ValueError) as e:
            want = e
        else:
            continue  # (16 is grouped_mm's decode tile: taken, then refused for the CPU)
        refused += 1
        with pytest.raises(type(want)) as got:
            getattr(torch.ops.gemm_ladder, op)(a, w, offsets, args["tile_rows"])
        assert str(got.value).strip().splitlines()[0] == str(want), case
    assert refused >= 12
