"""moe_permute without a GPU: the checks before a launch (TypeError for a dtype or a device, ValueError for a shape,
a stride, k, E or rows, each in one line), the library's own refusals through ctypes, and, where torch is
importable, the operator's fake (what torch.compile traces: the three results' shapes, dtypes and strides) on fake
CUDA tensors, a strict export holding the operator, and the operator's own checks refusing what _core refuses."""

import pytest

import gemm_ladder
from gemm_ladder import _core
from support import library_missing, no_sm90a, rerun_with_python_ops, torch_missing

ADDR = 0x7F0000000000  # 256-byte aligned: an address no call below reaches the GPU with


def plan(**overrides):
    """_core.moe_permute_plan of 5 tokens of 64, top 2 of 8 experts, 256 rows, with `overrides`."""
    args = dict(dtype_x="bfloat16", dtype_flat="int64", dtype_order="int64", dtype_counts="int64", shape_x=(5, 64),
                strides_x=(64, 1), shape_flat=(10,), strides_flat=(1,), shape_order=(10,), strides_order=(1,),
                shape_counts=(8,), strides_counts=(1,), k=2, rows=256)
    args.update(overrides)
    return _core.moe_permute_plan(**args)


def refused(exc, words, **overrides):
    with pytest.raises(exc) as e:
        plan(**overrides)
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_moe_permute_plan():
    assert plan() == (5, 64, 8, 10, 64)  # (tokens, hidden, E, routed, ldx)
    assert plan(strides_x=(96, 1)) == (5, 64, 8, 10, 96)  # rows of a wider matrix: any pitch of at least hidden
    assert plan(shape_x=(1, 64), strides_x=(7, 1), shape_flat=(2,), shape_order=(2,))[4] == 64  # one row: no pitch
    assert plan(shape_x=(0, 64), shape_flat=(0,), shape_order=(0,), rows=0) == (0, 64, 8, 0, 64)  # no token
    assert plan(shape_counts=(4096,))[2] == 4096
    refused(TypeError, "moe_permute takes bfloat16 xf (the tokens' rows): got float32", dtype_x="float32")
    refused(TypeError, "flat is int32: moe_permute takes int64 flat, order and counts", dtype_flat="int32")
    refused(TypeError, "order is int32: moe_permute takes int64", dtype_order="int32")
    refused(TypeError, "counts is int32: moe_permute takes int64", dtype_counts="int32")
    refused(ValueError, "xf must be a matrix (tokens, hidden): got shape (5, 64, 1)", shape_x=(5, 64, 1))
    refused(ValueError, "k = 0: each token picks at least one expert", k=0)
    refused(ValueError, "flat has shape (5, 2): it must hold tokens·k = 10 experts", shape_flat=(5, 2))
    refused(ValueError, "flat has shape (12,): it must hold tokens·k = 10", shape_flat=(12,))
    refused(ValueError, "order has shape (9,): it must hold the tokens·k = 10 slots sorted by expert", shape_order=(9,))
    refused(ValueError, "counts has shape (0,): it must hold E >= 1 counts", shape_counts=(0,))
    refused(ValueError, "counts has shape (2, 4)", shape_counts=(2, 4))
    refused(ValueError, "E = 4097: moe_permute takes at most 4096 experts", shape_counts=(4097,))
    refused(ValueError, "rows = 9 is below the tokens·k = 10 routed rows", rows=9)
    refused(ValueError, "xf: strides (1, 5) for a 5x64 matrix: moe_permute takes rows of contiguous elements",
            strides_x=(1, 5))
    refused(ValueError, "xf: strides (32, 1) for a 5x64 matrix", strides_x=(32, 1))  # rows that overlap
    refused(ValueError, "flat: stride (2,): moe_permute takes contiguous flat", strides_flat=(2,))
    refused(ValueError, "order: stride (2,): moe_permute takes contiguous order", strides_order=(2,))
    refused(ValueError, "counts: stride (2,): moe_permute takes contiguous counts", strides_counts=(2,))


def permute_call(lib, **overrides):
    """gl_moe_permute through ctypes on fake addresses (refused before the GPU), with `overrides`."""
    args = dict(tokens=5, hidden=64, k=2, experts=8, rows=256, x=ADDR, ldx=64, flat=ADDR + 0x1000, order=ADDR + 0x2000,
                counts=ADDR + 0x3000, a=ADDR + 0x10000, offsets=ADDR + 0x4000, place=ADDR + 0x5000, stream=None)
    args.update(overrides)
    return lib.moe_permute(*args.values())


@pytest.mark.skipif(bool(library_missing()), reason=library_missing() or "-")
def test_library_refusals_have_one_line():
    lib = gemm_ladder.library()
    assert lib.moe_permute is not None, f"{lib.path} has no gl_moe_permute"
    for overrides, status, words in [
            (dict(k=0), 1, "k (each token's experts) must be at least 1"),
            (dict(experts=5000), 2, "E above 4096"),
            (dict(rows=9), 1, "rows = 9 is below the tokens·k = 10 routed rows"),
            (dict(ldx=60), 1, "ldx = 60 is below hidden = 64"),
            (dict(order=ADDR + 0x2004), 1, "order starts 4 bytes past a 8-byte boundary"),
            (dict(a=None), 1, "A is NULL")]:
        got = permute_call(lib, **overrides)
        why = lib.lib.gl_last_error().decode()
        assert got == status, (overrides, got, why)
        assert why.startswith("gl_moe_permute(tokens = 5, hidden = 64, k = ") and words in why, why
        assert "\n" not in why


@pytest.mark.skipif(not no_sm90a().startswith("needs a CUDA GPU"), reason="this machine has a GPU: without one, a call "
                    "that passes every check is refused with GL_NO_SM90A (checked on machines without)")
def test_without_a_gpu_the_library_says_why():
    lib = gemm_ladder.library()
    assert permute_call(lib) == 3  # GL_NO_SM90A
    assert "no CUDA GPU" in lib.lib.gl_last_error().decode()
    assert permute_call(lib, tokens=0, x=None, flat=None, order=None, place=None) == 3  # no token: NULLs allowed


# ---- with torch (no GPU): the operator's fake, a strict export, the operator's checks ----

needs_torch = pytest.mark.skipif(bool(torch_missing()), reason=torch_missing() or "-")


def routing(torch, tokens=5, k=2, experts=8, hidden=64, device="cuda"):
    xf = torch.empty(tokens, hidden, dtype=torch.bfloat16, device=device)
    flat = torch.empty(tokens * k, dtype=torch.int64, device=device)
    return xf, flat, torch.empty_like(flat), torch.empty(experts, dtype=torch.int64, device=device)


@needs_torch
def test_fake_moe_permute():
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    schema = str(torch.ops.gemm_ladder.moe_permute.default._schema)
    assert schema == ("gemm_ladder::moe_permute(Tensor xf, Tensor flat, Tensor order, Tensor counts, int k, int rows) -> "
                      "(Tensor, Tensor, Tensor)"), schema
    with FakeTensorMode():
        xf, flat, order, counts = routing(torch, tokens=300, k=8, experts=128, hidden=2048)
        a, offsets, place = torch.ops.gemm_ladder.moe_permute(xf, flat, order, counts, 8, 18944)
        assert (a.shape, a.dtype, a.stride(), a.device.type) == ((18944, 2048), torch.bfloat16, (2048, 1), "cuda")
        assert (offsets.shape, offsets.dtype, offsets.device.type) == ((129,), torch.int64, "cuda")
        assert (place.shape, place.dtype, place.device.type) == ((2400,), torch.int64, "cuda")
        with pytest.raises(TypeError, match="flat is int32"):
            torch.ops.gemm_ladder.moe_permute(xf, flat.int(), order, counts, 8, 18944)
        with pytest.raises(ValueError, match="rows = 100 is below the tokens·k = 2400 routed rows"):
            torch.ops.gemm_ladder.moe_permute(xf, flat, order, counts, 8, 100)
        with pytest.raises(ValueError, match=r"xf: strides \(1, 300\)"):
            torch.ops.gemm_ladder.moe_permute(xf.t().contiguous().t(), flat, order, counts, 8, 18944)


@needs_torch
def test_moe_permute_traces_without_a_graph_break():
    # strict export is dynamo's full-graph capture: a graph break fails it, as fullgraph=True does
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    class Permute(torch.nn.Module):
        def forward(self, xf, flat, order, counts):
            a, offsets, place = gemm_ladder.moe_permute(xf, flat, order, counts, 2, 1024)
            return a.float(), offsets + 1, place * 2

    with FakeTensorMode():
        graph = torch.export.export(Permute(), routing(torch), strict=True).graph
    calls = [n for n in graph.nodes if n.op == "call_function" and str(n.target) == "gemm_ladder.moe_permute.default"]
    assert len(calls) == 1, [str(n.target) for n in graph.nodes]
    assert calls[0].args[4:] == (2, 1024), calls[0].args


@needs_torch
def test_cpu_tensors_are_refused():
    import torch

    args = routing(torch, device="cpu")
    with pytest.raises(TypeError, match="xf is on cpu: gemm_ladder runs on CUDA tensors"):
        gemm_ladder.moe_permute(*args, 2, 256)
    with pytest.raises(TypeError, match="xf is on cpu: gemm_ladder runs on CUDA tensors"):
        torch.ops.gemm_ladder.moe_permute(*args, 2, 256)
    with pytest.raises(TypeError, match="moe_permute takes torch tensors"):
        gemm_ladder.moe_permute([0.0], *args[1:], 2, 256)


@needs_torch
def test_operator_refuses_as_the_python_checks_do():
    """The operator's own checks (csrc/torch_ops.cpp where it is built, else the Python custom_op's) run before its
    device check, so CPU tensors reach them here: each refusal is _core's, same type, same line."""
    import torch

    xf, flat, order, counts = routing(torch, device="cpu")
    i64 = dict(dtype=torch.int64)
    cases = [dict(xf=xf.float()), dict(flat=flat.int()), dict(order=order.int()), dict(counts=counts.int()),
             dict(xf=xf.view(5, 64, 1)), dict(k=0), dict(flat=flat.view(5, 2)), dict(order=torch.zeros(9, **i64)),
             dict(counts=torch.zeros(0, **i64)), dict(counts=torch.zeros(4097, **i64)), dict(rows=9),
             dict(xf=torch.zeros(64, 5, dtype=torch.bfloat16).t()), dict(flat=torch.zeros(20, **i64)[::2]),
             dict(order=torch.zeros(20, **i64)[::2]), dict(counts=torch.zeros(16, **i64)[::2])]
    for case in cases:
        args = {**dict(xf=xf, flat=flat, order=order, counts=counts, k=2, rows=256), **case}
        t = [args[n] for n in ("xf", "flat", "order", "counts")]
        with pytest.raises((TypeError, ValueError)) as want:
            _core.moe_permute_plan(*(_core.torch_dtype_name(x) for x in t), t[0].shape, t[0].stride(), t[1].shape,
                                   t[1].stride(), t[2].shape, t[2].stride(), t[3].shape, t[3].stride(), args["k"],
                                   args["rows"])
        with pytest.raises(want.type) as got:
            torch.ops.gemm_ladder.moe_permute(*t, args["k"], args["rows"])
        assert str(got.value).strip().splitlines()[0] == str(want.value), case
        with pytest.raises(want.type) as wrapper:  # the package's function: the fast path declines, the checks raise
            gemm_ladder.moe_permute(*t, args["k"], args["rows"])
        assert str(wrapper.value).strip().splitlines()[0] == str(want.value), case


@needs_torch
def test_the_python_operator_passes_the_same_tests():
    # Where the C++ operators cannot be built (GEMM_LADDER_CPP_OPS=0 forces it) the Python custom_op stands in, with
    # the same schema, fake and refusals: this file again, in a process that registers that one.
    from gemm_ladder import _torch_ops
    if not _torch_ops.CPP_OPS:
        pytest.skip("the C++ operators are not built here: this file already ran the Python ones")
    rerun_with_python_ops(__file__, "test_the_python_operator_passes_the_same_tests")
