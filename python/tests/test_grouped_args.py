"""grouped_mm without a GPU: the layout helper, the checks before a launch (TypeError for a dtype or a
device, ValueError for a shape, a stride or chapter 13's rules on N and K, each in one line) on fake DLPack
arrays, the library's refusals as exceptions, and, where torch is importable, the custom operator's fake
(what torch.compile traces) on fake CUDA tensors, refusing what the real one refuses."""

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
