"""grouped_mm on an sm_90a GPU with torch: every expert of odd layouts (empty experts, one row, tile edges,
E = 1, many small experts, no rows at all, a Qwen3 decode step) against float64 torch, both tiles and the
library's choice; rows outside every expert's tiles left as they were (out=) or zero; a non-default stream
(ordered after what it holds), torch.compile(fullgraph=True), torch.library.opcheck, DLPack arrays, and
the checks before a launch. The same for grouped_swiglu against float64 silu(x @ W_gate.T) * (x @ W_up.T) on
the stacked weights it was given interleaved (interleave_gate_up). Skipped, with the reason, without such a GPU
or without torch."""

import pytest

from support import DLPackOnly, gpu_and_torch_missing

pytestmark = pytest.mark.skipif(bool(gpu_and_torch_missing()), reason=gpu_and_torch_missing() or "-")

if not gpu_and_torch_missing():
    import torch

    import gemm_ladder

TOLERANCE = 8e-3 + 1e-5  # per element, relative to sum_k |a_ik·b_kj|: a bf16 C (test_gpu.py's)


def problem(rows_per_expert, n, k, seed=0, extra_rows=0):
    """a (rows, K) in the contiguous layout (padding rows random too: they must not leak into an expert's
    rows), w (E, N, K), offsets (E + 1) on the GPU, and each expert's first row."""
    offsets, first, rows = gemm_ladder.grouped_layout(rows_per_expert)
    rows += extra_rows
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = (torch.rand(rows, k, device="cuda", generator=g) * 2 - 1).to(torch.bfloat16)
    w = (torch.rand(len(rows_per_expert), n, k, device="cuda", generator=g) * 2 - 1).to(torch.bfloat16)
    return a, w, torch.tensor(offsets, device="cuda", dtype=torch.int64), first


def expect_experts_close(c, a, w, first, rows_per_expert, what):
    for e, (f, r) in enumerate(zip(first, rows_per_expert)):
        if r == 0:
            continue
        a64, w64 = a[f:f + r].double(), w[e].double().t()
        err = (c[f:f + r].double() - a64 @ w64).abs()
        bound = TOLERANCE * (a64.abs() @ w64.abs()) + 1e-6
        bad = err > bound
        assert not bad.any(), (f"{what}: expert {e} ({r} rows from row {f}): {int(bad.sum())} of {bad.numel()} elements "
                               f"off, worst {float(err.max()):.3g}; path {gemm_ladder.last_path()}")


def tiles_end(rows_per_expert):
    """One past the last row any tile covers: the last end rounded up to 128."""
    offsets, _, _ = gemm_ladder.grouped_layout(rows_per_expert)
    return -(-offsets[-1] // 128) * 128


MANY = [(i * 7) % 23 for i in range(37)]  # 0 .. 22 rows, two experts empty
LAYOUTS = {
    "empty_one_edges": [0, 1, 128, 0, 257, 129],
    "one_expert": [300],
    "one_row": [1],
    "many_small": MANY,
    "all_empty": [0, 0, 0],
}


@pytest.mark.parametrize("tile_rows", [0, 16, 64, 128])
@pytest.mark.parametrize("name", list(LAYOUTS))
def test_matches_float64(name, tile_rows):
    rows_per_expert = LAYOUTS[name]
    a, w, offsets, first = problem(rows_per_expert, 512, 136, extra_rows=64)
    c = gemm_ladder.grouped_mm(a, w, offsets, tile_rows=tile_rows)
    assert c.shape == (a.shape[0], 512) and c.dtype == torch.bfloat16
    expected_tile = tile_rows or (64 if a.shape[0] <= 128 * len(rows_per_expert) else 128)  # K = 136: never the decode tile
    expected_path = "grouped_decode 64x16 swapped" if expected_tile == 16 else f"grouped_contiguous {expected_tile}x256"
    assert gemm_ladder.last_path() == expected_path
    torch.cuda.synchronize()
    expect_experts_close(c, a, w, first, rows_per_expert, f"{name}, tile {tile_rows}")
    end = tiles_end(rows_per_expert)
    assert not c[end:].any(), f"rows {end}.. belong to no expert's tile: they must stay zero"


@pytest.mark.parametrize("rows_per_expert,path", [([16] * 128, "grouped_contiguous 64x256"),
                                                   ([1] * 8 + [0] * 120, "grouped_decode 64x16 swapped")],
                         ids=["16_each", "one_token"])
def test_qwen3_decode_step(rows_per_expert, path):
    # Qwen3-30B-A3B's gate+up at decode: 128 experts, N = 1536, K = 2048. 16 rows each (a buffer of 128·E rows:
    # up to 1536 tiles of 64×256, enough for every SM) takes step 2's 64-row tiles; one token's 8 experts of one
    # row (a buffer of 1024 rows: at most 96 such tiles) chapter 13's decode tile (step 6), which writes the
    # experts' rows only: the zero-filled padding stays zero. Step 2's 64-row tiles write every row they cover,
    # padding included (the padding rows of `a` are random here), so for them only the rows past the tiles are
    # checked.
    a, w, offsets, first = problem(rows_per_expert, 1536, 2048, seed=1)
    c = gemm_ladder.grouped_mm(a, w, offsets)
    assert gemm_ladder.last_path() == path
    expect_experts_close(c, a, w, first, rows_per_expert, "qwen3 decode")
    if path.startswith("grouped_decode"):
        real = torch.zeros(c.shape[0], dtype=torch.bool, device=c.device)
        for f, r in zip(first, rows_per_expert):
            real[f:f + r] = True
        assert not c[~real].any(), "the decode tile wrote a row that is no expert's"
    else:  # step 2's tiles write their whole 64 rows (the padding rows' products of A's random padding) and no more
        end = tiles_end(rows_per_expert)
        assert not c[end:].any(), f"rows {end}.. belong to no expert's tile: they must stay zero"


def test_out_leaves_rows_outside_the_tiles():
    rows_per_expert = [5, 0, 200]
    a, w, offsets, first = problem(rows_per_expert, 256, 64, extra_rows=128)
    out = torch.full((a.shape[0], 256), float("nan"), device="cuda", dtype=torch.bfloat16)
    assert gemm_ladder.grouped_mm(a, w, offsets, out=out) is out
    expect_experts_close(out, a, w, first, rows_per_expert, "out=")
    assert out[tiles_end(rows_per_expert):].isnan().all(), "a row past every expert's tiles was written"


@pytest.mark.parametrize("compiled", [False, True])
def test_without_zero_fill_the_experts_rows_are_the_same(compiled):
    # zero_fill=False leaves out the memset: rows past every expert's tiles hold what the allocator's memory
    # held (here: NaN, left by the tensor freed just before), each expert's rows are written as with it.
    rows_per_expert = [5, 0, 200]
    a, w, offsets, first = problem(rows_per_expert, 256, 64, extra_rows=128)
    end = tiles_end(rows_per_expert)

    def f(x, y, o):
        return gemm_ladder.grouped_mm(x, y, o, zero_fill=False)
    run = torch.compile(f, fullgraph=True) if compiled else f
    run(a, w, offsets)  # the compile, when compiled: before the NaN block is freed for the next call
    torch.full((a.shape[0], 256), float("nan"), device="cuda", dtype=torch.bfloat16)  # freed at once
    c = run(a, w, offsets)
    expect_experts_close(c, a, w, first, rows_per_expert, f"zero_fill=False, compiled={compiled}")
    torch.testing.assert_close(c[:end], gemm_ladder.grouped_mm(a, w, offsets)[:end], rtol=0, atol=0)
    assert c[end:].isnan().all(), "rows past every expert's tiles were written: zero_fill=False should leave them"


def test_non_default_stream_orders_after_its_pending_work():
    # On a side stream: a long sleep, then the offsets' real values, then the grouped GEMM. Run on any
    # other stream, the kernel would read offsets of zeros (no rows) before the copy lands.
    rows_per_expert = [130, 7, 64]
    a, w, offsets, first = problem(rows_per_expert, 256, 128, seed=2)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        work = torch.zeros_like(offsets)
        torch.cuda._sleep(50_000_000)  # about 25 ms
        work.copy_(offsets)
        c = gemm_ladder.grouped_mm(a, w, work)
    side.synchronize()
    expect_experts_close(c, a, w, first, rows_per_expert, "on a side stream")


def test_compiled_fullgraph_matches_eager():
    def f(x, w, offsets):  # silu in float32 in both: inductor would skip eager's bf16 rounding in between
        return torch.nn.functional.silu(gemm_ladder.grouped_mm(x, w, offsets).float()).sum(-1)

    rows_per_expert = [3, 0, 140, 1]
    a, w, offsets, _ = problem(rows_per_expert, 256, 256, seed=3)
    compiled = torch.compile(f, fullgraph=True)
    torch.testing.assert_close(compiled(a, w, offsets), f(a, w, offsets), rtol=1e-4, atol=1e-3)
    c_eager = gemm_ladder.grouped_mm(a, w, offsets, tile_rows=64)
    c_compiled = torch.compile(lambda x, y, o: gemm_ladder.grouped_mm(x, y, o, tile_rows=64), fullgraph=True)(a, w, offsets)
    torch.testing.assert_close(c_compiled, c_eager, rtol=0, atol=0)  # the same kernel on the same inputs


@pytest.mark.parametrize("tile_rows", [0, 64])
def test_opcheck(tile_rows):
    a, w, offsets, _ = problem([3, 0, 140, 1], 256, 80, seed=4)
    torch.library.opcheck(torch.ops.gemm_ladder.grouped_mm.default, (a, w, offsets, tile_rows),
                          test_utils=("test_schema", "test_autograd_registration", "test_faketensor",
                                      "test_aot_dispatch_dynamic"))


def test_fast_path_is_the_operator_bit_for_bit():
    """The eager plain call (contiguous CUDA tensors, no out= or stream=) takes csrc/torch_ops.cpp's module function
    (no dispatcher): the same kernel as the operator, with and without the zero-fill; it declines what it must not
    take (None: gemm_ladder.grouped_mm then takes the checked path)."""
    fast = gemm_ladder._fast_grouped_mm
    if fast is None:
        pytest.skip("the C++ module (csrc/torch_ops.cpp) is not built here: no fast path to test")
    rows_per_expert = [3, 0, 140, 1]
    a, w, offsets, first = problem(rows_per_expert, 256, 80, seed=6)
    for tile_rows in (0, 16, 64, 128):
        c = fast(a, w, offsets, tile_rows, True)
        assert c is not None, "the plain call must take the fast path"
        torch.testing.assert_close(c, torch.ops.gemm_ladder.grouped_mm(a, w, offsets, tile_rows, True), rtol=0, atol=0)
        c2 = fast(a, w, offsets, tile_rows, False)
        for f, r in zip(first, rows_per_expert):  # the experts' rows (the decode tile writes no padding row)
            torch.testing.assert_close(c2[f:f + r], c[f:f + r], rtol=0, atol=0)
    expect_experts_close(gemm_ladder.grouped_mm(a, w, offsets), a, w, first, rows_per_expert, "the public call")
    assert fast(a, w, offsets, 32, True) is None, "tile_rows 32"
    assert fast(a, w, offsets, 0, 1) is None, "zero_fill not a bool"
    assert fast(a.t().contiguous().t(), w, offsets, 0, True) is None, "non-contiguous a"
    assert fast(a, w, offsets.to(torch.int32), 0, True) is None, "int32 offsets"
    assert fast(a.float(), w.float(), offsets, 0, True) is None, "float32"
    assert fast(a.cpu(), w.cpu(), offsets.cpu(), 0, True) is None, "CPU tensors"
    assert fast(a[:, :72], w[:, :, :72], offsets, 0, True) is None, "non-contiguous (sliced) a"
    wp = torch.nn.Parameter(w.clone())
    with torch.enable_grad():
        assert fast(a, wp, offsets, 0, True) is None, "an input that needs a gradient"
    with torch.no_grad():
        assert fast(a, wp, offsets, 0, True) is not None, "no gradient needed under no_grad"


def test_backward_raises():
    a, w, offsets, _ = problem([3, 0, 140, 1], 256, 80, seed=7)
    wp = torch.nn.Parameter(w.clone())
    c = gemm_ladder.grouped_mm(a, wp, offsets)
    assert c.requires_grad
    with pytest.raises(RuntimeError, match="gemm_ladder::grouped_mm"):
        c.float().sum().backward()
    assert wp.grad is None


def test_cpp_operator_is_registered():
    from gemm_ladder import _torch_ops
    assert _torch_ops.CPP_OPS, "the C++ operators were not built (see the warning at import)"
    schema = str(torch.ops.gemm_ladder.grouped_mm.default._schema)
    assert schema == "gemm_ladder::grouped_mm(Tensor a, Tensor b, Tensor offsets, int tile_rows=0, bool zero_fill=True) -> Tensor", schema


def test_dlpack_arrays():
    rows_per_expert = [9, 250]
    a, w, offsets, first = problem(rows_per_expert, 256, 64, seed=5)
    out = torch.zeros(a.shape[0], 256, device="cuda", dtype=torch.bfloat16)
    got = gemm_ladder.grouped_mm(DLPackOnly(a), DLPackOnly(w), DLPackOnly(offsets), out=DLPackOnly(out))
    assert isinstance(got, DLPackOnly) and got.t is out
    torch.cuda.synchronize()
    torch.testing.assert_close(out, gemm_ladder.grouped_mm(a, w, offsets), rtol=0, atol=0)


def test_errors_before_launch_on_the_gpu():
    a, w, offsets, _ = problem([3, 5], 256, 64)
    with pytest.raises(TypeError, match="offsets is int32: grouped_mm takes int64 offsets"):
        gemm_ladder.grouped_mm(a, w, offsets.int())
    with pytest.raises(TypeError, match="offsets is on cpu"):
        gemm_ladder.grouped_mm(a, w, offsets.cpu())
    with pytest.raises(ValueError, match=r"b: strides \(16384, 1, 256\)"):
        gemm_ladder.grouped_mm(a, w.transpose(1, 2).contiguous().transpose(1, 2), offsets)
    # a bf16 off a 16-byte boundary: the library's (TMA's) rule, a ValueError subclass, before any launch
    storage = torch.zeros(a.numel() + 8, device="cuda", dtype=torch.bfloat16)
    shifted = storage[1:1 + a.numel()].view(a.shape)
    with pytest.raises(gemm_ladder.UnsupportedError, match="A starts 2 bytes past a 16-byte boundary"):
        gemm_ladder.grouped_mm(shifted, w, offsets)
    square, w256, offsets256, _ = problem([3, 5], 256, 256)  # a of 256 x 256: the result's shape
    with pytest.raises(ValueError, match="out overlaps a"):
        gemm_ladder.grouped_mm(square, w256, offsets256, out=square)


# ---- grouped_swiglu: SiLU(x @ W_gate.T) * (x @ W_up.T) of every expert in one launch ----

SWIGLU_PATH = "grouped_contiguous {}x256 SiLU(gate)·up"


def swiglu_problem(rows_per_expert, inter, k, seed=0, extra_rows=0):
    """a (rows, K) in the contiguous layout, the stacked [W_gate; W_up] weights (E, 2I, K) and their interleaved
    order (grouped_swiglu's), offsets on the GPU and each expert's first row."""
    a, w_gate_up, offsets, first = problem(rows_per_expert, 2 * inter, k, seed, extra_rows)
    return a, w_gate_up, gemm_ladder.interleave_gate_up(w_gate_up), offsets, first


def expect_swiglu_close(h, a, w_gate_up, first, rows_per_expert, what):
    """Each expert's rows of h against float64 silu(a_g @ W_gate.T) * (a_g @ W_up.T), W_gate and W_up the halves of
    the stacked weights; the error scale as chapter 13's swiglu_reference: the gate's and the up's sum |a·w| through
    |SiLU'| <= 1.1 and |SiLU(gate)|, and |h| itself (the rounding of the result)."""
    inter = w_gate_up.shape[1] // 2
    for e, (f, r) in enumerate(zip(first, rows_per_expert)):
        if r == 0:
            continue
        a64 = a[f:f + r].double()
        wg, wu = w_gate_up[e, :inter].double().t(), w_gate_up[e, inter:].double().t()
        gate, up = a64 @ wg, a64 @ wu
        want = torch.nn.functional.silu(gate) * up
        scale = 1.1 * up.abs() * (a64.abs() @ wg.abs()) + torch.nn.functional.silu(gate).abs() * (a64.abs() @ wu.abs())
        err = (h[f:f + r].double() - want).abs()
        bad = err > TOLERANCE * (scale + want.abs()) + 1e-6
        assert not bad.any(), (f"{what}: expert {e} ({r} rows from row {f}): {int(bad.sum())} of {bad.numel()} elements "
                               f"off, worst {float(err.max()):.3g}; path {gemm_ladder.last_path()}")


@pytest.mark.parametrize("tile_rows", [0, 64, 128])
@pytest.mark.parametrize("name", list(LAYOUTS))
def test_swiglu_matches_float64(name, tile_rows):
    rows_per_expert = LAYOUTS[name]
    a, w_gate_up, w, offsets, first = swiglu_problem(rows_per_expert, 384, 136, extra_rows=64)  # I: three tile columns
    h = gemm_ladder.grouped_swiglu(a, w, offsets, tile_rows=tile_rows)
    assert h.shape == (a.shape[0], 384) and h.dtype == torch.bfloat16
    expected_tile = tile_rows or (64 if a.shape[0] <= 128 * len(rows_per_expert) else 128)  # K = 136: no decode tile
    assert gemm_ladder.last_path() == SWIGLU_PATH.format(expected_tile)
    torch.cuda.synchronize()
    expect_swiglu_close(h, a, w_gate_up, first, rows_per_expert, f"{name}, tile {tile_rows}")
    end = tiles_end(rows_per_expert)
    assert not h[end:].any(), f"rows {end}.. belong to no expert's tile: they must stay zero"


@pytest.mark.parametrize("rows_per_expert", [[16] * 128, [1] * 8 + [0] * 120], ids=["16_each", "one_token"])
def test_swiglu_qwen3_decode_sizes(rows_per_expert):
    # Qwen3-30B-A3B's experts: I = 768, K = 2048. At one token grouped_mm's rule takes its decode tile (16 rows), which
    # the fused epilogue lacks: grouped_swiglu takes step 2's 64-row tile there, as at 16 rows an expert.
    a, w_gate_up, w, offsets, first = swiglu_problem(rows_per_expert, 768, 2048, seed=1)
    h = gemm_ladder.grouped_swiglu(a, w, offsets)
    assert gemm_ladder.last_path() == SWIGLU_PATH.format(64)
    expect_swiglu_close(h, a, w_gate_up, first, rows_per_expert, "qwen3 decode sizes")
    assert not h[tiles_end(rows_per_expert):].any()


def test_swiglu_is_silu_of_grouped_mm_on_the_stacked_weights():
    """Against the unfused path the model had: grouped_mm on the stacked weights, then F.silu(gate) * up in float32
    from the bf16 gate and up. Not bit for bit (the fused one never rounds gate and up to bf16), within a few bf16
    roundings of the largest value."""
    rows_per_expert = [3, 0, 140, 1]
    a, w_gate_up, w, offsets, first = swiglu_problem(rows_per_expert, 256, 512, seed=8)
    gate, up = gemm_ladder.grouped_mm(a, w_gate_up, offsets).float().chunk(2, dim=-1)
    unfused = torch.nn.functional.silu(gate) * up
    fused = gemm_ladder.grouped_swiglu(a, w, offsets).float()
    for f, r in zip(first, rows_per_expert):
        if r:
            assert ((fused[f:f + r] - unfused[f:f + r]).abs().max() / unfused[f:f + r].abs().max()).item() <= 2 ** -6


def test_swiglu_out_leaves_rows_outside_the_tiles():
    rows_per_expert = [5, 0, 200]
    a, w_gate_up, w, offsets, first = swiglu_problem(rows_per_expert, 128, 64, extra_rows=128)
    out = torch.full((a.shape[0], 128), float("nan"), device="cuda", dtype=torch.bfloat16)
    assert gemm_ladder.grouped_swiglu(a, w, offsets, out=out) is out
    expect_swiglu_close(out, a, w_gate_up, first, rows_per_expert, "out=")
    assert out[tiles_end(rows_per_expert):].isnan().all(), "a row past every expert's tiles was written"


@pytest.mark.parametrize("compiled", [False, True])
def test_swiglu_without_zero_fill_the_experts_rows_are_the_same(compiled):
    rows_per_expert = [5, 0, 200]
    a, w_gate_up, w, offsets, first = swiglu_problem(rows_per_expert, 128, 64, extra_rows=128)
    end = tiles_end(rows_per_expert)

    def f(x, y, o):
        return gemm_ladder.grouped_swiglu(x, y, o, zero_fill=False)
    run = torch.compile(f, fullgraph=True) if compiled else f
    run(a, w, offsets)  # the compile, when compiled: before the NaN block is freed for the next call
    torch.full((a.shape[0], 128), float("nan"), device="cuda", dtype=torch.bfloat16)  # freed at once
    h = run(a, w, offsets)
    expect_swiglu_close(h, a, w_gate_up, first, rows_per_expert, f"zero_fill=False, compiled={compiled}")
    torch.testing.assert_close(h[:end], gemm_ladder.grouped_swiglu(a, w, offsets)[:end], rtol=0, atol=0)
    assert h[end:].isnan().all(), "rows past every expert's tiles were written: zero_fill=False should leave them"


def test_swiglu_non_default_stream_orders_after_its_pending_work():
    rows_per_expert = [130, 7, 64]
    a, w_gate_up, w, offsets, first = swiglu_problem(rows_per_expert, 128, 128, seed=2)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        work = torch.zeros_like(offsets)
        torch.cuda._sleep(50_000_000)  # about 25 ms
        work.copy_(offsets)
        h = gemm_ladder.grouped_swiglu(a, w, work)
    side.synchronize()
    expect_swiglu_close(h, a, w_gate_up, first, rows_per_expert, "on a side stream")


def test_swiglu_compiled_fullgraph_matches_eager():
    def experts(x, w, w_down, offsets):  # an MoE's experts: the activation in one launch, then the down projection
        return gemm_ladder.grouped_mm(gemm_ladder.grouped_swiglu(x, w, offsets), w_down, offsets)

    rows_per_expert = [3, 0, 140, 1]
    a, _, w, offsets, _ = swiglu_problem(rows_per_expert, 256, 256, seed=3)
    w_down = (torch.rand(4, 256, 256, device="cuda") * 2 - 1).to(torch.bfloat16)
    compiled = torch.compile(experts, fullgraph=True)
    torch.testing.assert_close(compiled(a, w, w_down, offsets), experts(a, w, w_down, offsets), rtol=0, atol=0)


@pytest.mark.parametrize("tile_rows", [0, 64])
def test_swiglu_opcheck(tile_rows):
    a, _, w, offsets, _ = swiglu_problem([3, 0, 140, 1], 128, 80, seed=4)
    torch.library.opcheck(torch.ops.gemm_ladder.grouped_swiglu.default, (a, w, offsets, tile_rows),
                          test_utils=("test_schema", "test_autograd_registration", "test_faketensor",
                                      "test_aot_dispatch_dynamic"))


def test_swiglu_fast_path_is_the_operator_bit_for_bit():
    fast = gemm_ladder._fast_grouped_swiglu
    if fast is None:
        pytest.skip("the C++ module (csrc/torch_ops.cpp) is not built here: no fast path to test")
    rows_per_expert = [3, 0, 140, 1]
    a, w_gate_up, w, offsets, first = swiglu_problem(rows_per_expert, 128, 80, seed=6)
    for tile_rows in (0, 64, 128):
        h = fast(a, w, offsets, tile_rows, True)
        assert h is not None, "the plain call must take the fast path"
        torch.testing.assert_close(h, torch.ops.gemm_ladder.grouped_swiglu(a, w, offsets, tile_rows, True), rtol=0, atol=0)
        h2 = fast(a, w, offsets, tile_rows, False)
        for f, r in zip(first, rows_per_expert):
            torch.testing.assert_close(h2[f:f + r], h[f:f + r], rtol=0, atol=0)
    expect_swiglu_close(gemm_ladder.grouped_swiglu(a, w, offsets), a, w_gate_up, first, rows_per_expert, "the public call")
    assert fast(a, w, offsets, 16, True) is None, "tile_rows 16: no decode tile"
    assert fast(a, w, offsets, 0, 1) is None, "zero_fill not a bool"
    assert fast(a.t().contiguous().t(), w, offsets, 0, True) is None, "non-contiguous a"
    assert fast(a, w, offsets.to(torch.int32), 0, True) is None, "int32 offsets"
    assert fast(a, w[:, :128].contiguous(), offsets, 0, True) is None, "2I = 128"
    assert fast(a.cpu(), w.cpu(), offsets.cpu(), 0, True) is None, "CPU tensors"
    wp = torch.nn.Parameter(w.clone())
    with torch.enable_grad():
        assert fast(a, wp, offsets, 0, True) is None, "an input that needs a gradient"
    with torch.no_grad():
        assert fast(a, wp, offsets, 0, True) is not None, "no gradient needed under no_grad"


def test_swiglu_backward_raises():
    a, _, w, offsets, _ = swiglu_problem([3, 0, 140, 1], 128, 80, seed=7)
    wp = torch.nn.Parameter(w.clone())
    h = gemm_ladder.grouped_swiglu(a, wp, offsets)
    assert h.requires_grad
    with pytest.raises(RuntimeError, match="gemm_ladder::grouped_swiglu"):
        h.float().sum().backward()
    assert wp.grad is None


def test_swiglu_dlpack_arrays():
    rows_per_expert = [9, 250]
    a, _, w, offsets, _ = swiglu_problem(rows_per_expert, 128, 64, seed=5)
    out = torch.zeros(a.shape[0], 128, device="cuda", dtype=torch.bfloat16)
    got = gemm_ladder.grouped_swiglu(DLPackOnly(a), DLPackOnly(w), DLPackOnly(offsets), out=DLPackOnly(out))
    assert isinstance(got, DLPackOnly) and got.t is out
    torch.cuda.synchronize()
    torch.testing.assert_close(out, gemm_ladder.grouped_swiglu(a, w, offsets), rtol=0, atol=0)


def test_swiglu_errors_before_launch_on_the_gpu():
    a, _, w, offsets, _ = swiglu_problem([3, 5], 128, 64)
    with pytest.raises(TypeError, match="offsets is int32: grouped_swiglu takes int64 offsets"):
        gemm_ladder.grouped_swiglu(a, w, offsets.int())
    with pytest.raises(TypeError, match="w_gate_up_interleaved is on cpu"):
        gemm_ladder.grouped_swiglu(a, w.cpu(), offsets)
    with pytest.raises(ValueError, match="grouped_swiglu has no decode tile"):
        gemm_ladder.grouped_swiglu(a, w, offsets, tile_rows=16)
    storage = torch.zeros(a.numel() + 8, device="cuda", dtype=torch.bfloat16)
    shifted = storage[1:1 + a.numel()].view(a.shape)
    with pytest.raises(gemm_ladder.UnsupportedError, match="A starts 2 bytes past a 16-byte boundary"):
        gemm_ladder.grouped_swiglu(shifted, w, offsets)
    square, _, w128, offsets128, _ = swiglu_problem([3, 5], 128, 128)  # a of 256 x 128, H of 256 x 128: the same shape
    with pytest.raises(ValueError, match="out overlaps a"):
        gemm_ladder.grouped_swiglu(square, w128, offsets128, out=square)


# The C++ operator's refusals, each in a process of its own (cpp_refusals.py): a crash is this test's
# failure with the exit status, and the other tests still run.
@pytest.mark.parametrize("case,words", [
    ("mm_shapes", "ValueError shape mismatch: a is 256x64 and b is 256x64"),
    ("int32_offsets", "TypeError offsets is int32: grouped_mm takes int64 offsets"),
    ("cpu_offsets", "TypeError offsets is on cpu: gemm_ladder runs on CUDA tensors"),
    ("k_mismatch", "ValueError shape mismatch: a is 256x64 and b is 2x256x32"),
    ("b_strides", "ValueError b: strides (16384, 1, 256) for 2 weights of 256x64"),
    ("n_rule", "ValueError N = 128: grouped_mm needs N % 256 == 0"),
    ("tile_rows", "ValueError tile_rows = 32: 0 (the library chooses), 16, 64 or 128"),
    ("misaligned_a", "ValueError gl_grouped_gemm(E = 2, rows = 256, N = 256, K = 64): A starts 2 bytes past a 16-byte boundary"),
    ("swiglu_i_rule", "ValueError w_gate_up_interleaved has 2I = 384 rows per expert: grouped_swiglu needs I % 128 == 0"),
    ("swiglu_tile_16", "ValueError tile_rows = 16: 0 (the library chooses), 64 or 128 (grouped_swiglu has no decode tile)"),
    ("swiglu_cpu_w", "TypeError w_gate_up_interleaved is on cpu: gemm_ladder runs on CUDA tensors"),
    ("swiglu_misaligned_a", "ValueError gl_grouped_swiglu(E = 2, rows = 256, I = 128, K = 64): A starts 2 bytes past a "
                            "16-byte boundary"),
])
def test_cpp_operator_refuses_with_one_line(case, words):
    import os
    import pathlib
    import subprocess
    import sys
    script = pathlib.Path(__file__).with_name("cpp_refusals.py")
    r = subprocess.run([sys.executable, "-X", "faulthandler", str(script), case], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ))
    assert r.returncode == 0, f"{case}: exit status {r.returncode}\n{r.stdout[-1000:]}\n{r.stderr[-3000:]}"
    assert r.stdout.strip().startswith(words), f"{case}: {r.stdout.strip()!r}"
