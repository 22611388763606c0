"""The PyTorch side without a GPU: the custom operators' fake implementations (shapes, dtypes, strides and
the same refusals as the real ones) on fake CUDA tensors, a graph traced by dynamo (strict export: a graph
break fails it) holding the three operators, and torch's CPU tensors refused with a TypeError. Skipped,
with the reason, where torch is not importable."""

import pytest

from support import rerun_with_python_ops, torch_missing

pytestmark = pytest.mark.skipif(bool(torch_missing()), reason=torch_missing() or "-")

if not torch_missing():
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    import gemm_ladder


def fake_cuda(*shape, dtype=None):
    return torch.empty(*shape, dtype=dtype or torch.bfloat16, device="cuda")


def test_operators_are_registered():
    for name in ("mm", "linear", "mm_fp8"):
        assert hasattr(torch.ops.gemm_ladder, name)
    schema = str(torch.ops.gemm_ladder.mm.default._schema)
    assert schema == "gemm_ladder::mm(Tensor a, Tensor b) -> Tensor", schema


def test_fake_shapes_dtypes_and_strides():
    with FakeTensorMode():
        a, w = fake_cuda(7, 64), fake_cuda(40, 64)
        c = torch.ops.gemm_ladder.mm(a, w.t())
        assert (c.shape, c.dtype, c.stride(), c.device.type) == ((7, 40), torch.bfloat16, (40, 1), "cuda")
        c = torch.ops.gemm_ladder.mm(fake_cuda(7, 64, dtype=torch.float32), fake_cuda(64, 40, dtype=torch.float32))
        assert c.dtype == torch.float32
        y = torch.ops.gemm_ladder.linear(fake_cuda(2, 3, 64), w)
        assert (y.shape, y.stride()) == ((2, 3, 40), (120, 40, 1))
        a8, w8 = fake_cuda(5, 256, dtype=torch.float8_e4m3fn), fake_cuda(136, 256, dtype=torch.float8_e4m3fn)
        per_tensor = torch.ops.gemm_ladder.mm_fp8(a8, w8.t(), fake_cuda(1, dtype=torch.float32), fake_cuda(1, dtype=torch.float32))
        assert (per_tensor.shape, per_tensor.dtype) == ((5, 136), torch.bfloat16)
        sa = fake_cuda(2, 5, dtype=torch.float32).t()            # (M, Kb), M-contiguous
        sb = fake_cuda(2, 4, dtype=torch.float32)[:, :2]          # (Nb, Kb), rows Kb4 = 4 apart
        assert torch.ops.gemm_ladder.mm_fp8(a8, w8.t(), sa, sb).shape == (5, 136)


def test_fake_refuses_as_the_real_one_does():
    with FakeTensorMode():
        a, w = fake_cuda(7, 64), fake_cuda(40, 64)
        with pytest.raises(ValueError, match="shape mismatch: a is 7x64 and b is 40x64"):
            torch.ops.gemm_ladder.mm(a, w)
        with pytest.raises(TypeError, match="dtype float16 is not supported"):
            torch.ops.gemm_ladder.mm(fake_cuda(7, 64, dtype=torch.float16), fake_cuda(64, 8, dtype=torch.float16))
        with pytest.raises(ValueError, match=r"a: strides \(1, 64\) for a 64x7 matrix"):
            torch.ops.gemm_ladder.mm(fake_cuda(7, 64).t(), fake_cuda(7, 8))
        with pytest.raises(ValueError, match=r"b: strides \(128, 1\) for a 64x40 matrix"):
            torch.ops.gemm_ladder.mm(a, fake_cuda(64, 128)[:, :40])
        with pytest.raises(ValueError, match="x: shape .* is not rows of 64 elements a view can flatten"):
            torch.ops.gemm_ladder.linear(fake_cuda(3, 2, 64).transpose(0, 1), w)
        a8, w8 = fake_cuda(5, 256, dtype=torch.float8_e4m3fn), fake_cuda(136, 256, dtype=torch.float8_e4m3fn)
        with pytest.raises(ValueError, match="mm_fp8 takes b as the transpose"):
            torch.ops.gemm_ladder.mm_fp8(a8, w8.t().contiguous(), fake_cuda(1, dtype=torch.float32), fake_cuda(1, dtype=torch.float32))
        with pytest.raises(ValueError, match="scale_a: block scales of a"):
            torch.ops.gemm_ladder.mm_fp8(a8, w8.t(), fake_cuda(5, 2, dtype=torch.float32), fake_cuda(2, 4, dtype=torch.float32)[:, :2])


class Model(torch.nn.Module if not torch_missing() else object):
    def forward(self, x, w, a8, w8, sa, sb):
        y = gemm_ladder.linear(x, w) + gemm_ladder.mm(x.view(-1, x.shape[-1]), w.t()).view(*x.shape[:-1], -1)
        return y, gemm_ladder.mm_fp8(a8, w8.t(), sa, sb)


def test_dynamo_traces_the_operators_without_a_graph_break():
    # strict export is dynamo's full-graph capture: a graph break fails it, as fullgraph=True does
    with FakeTensorMode():
        args = (fake_cuda(2, 3, 64), fake_cuda(40, 64), fake_cuda(5, 256, dtype=torch.float8_e4m3fn),
                fake_cuda(136, 256, dtype=torch.float8_e4m3fn), fake_cuda(1, dtype=torch.float32),
                fake_cuda(1, dtype=torch.float32))
        graph = torch.export.export(Model(), args, strict=True).graph
    targets = [str(n.target) for n in graph.nodes if n.op == "call_function"]
    for op in ("gemm_ladder.linear.default", "gemm_ladder.mm.default", "gemm_ladder.mm_fp8.default"):
        assert op in targets, targets


def test_cpu_tensors_are_refused():
    a, b = torch.zeros(4, 8, dtype=torch.bfloat16), torch.zeros(8, 16, dtype=torch.bfloat16)
    with pytest.raises(TypeError, match="a is on cpu: gemm_ladder runs on CUDA tensors"):
        gemm_ladder.mm(a, b)
    with pytest.raises(TypeError, match="a is on cpu"):
        torch.ops.gemm_ladder.mm(a, b)
    with pytest.raises(TypeError, match="dtype float16 is not supported"):
        gemm_ladder.mm(a.half(), b.half())


def test_the_switch_to_the_python_operators_is_honoured():
    import os

    from gemm_ladder import _torch_ops
    if os.environ.get("GEMM_LADDER_CPP_OPS") == "0":
        assert not _torch_ops.CPP_OPS


def test_the_python_operators_pass_the_same_tests():
    # Where the C++ operators cannot be built (no library yet, no compiler; GEMM_LADDER_CPP_OPS=0 forces it)
    # the Python custom_ops stand in, with the same schemas, fakes and refusals: this file again, in a
    # process that registers those.
    rerun_with_python_ops(__file__, "the_python_operators_pass")
