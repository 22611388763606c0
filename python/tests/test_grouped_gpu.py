"""grouped_mm on an sm_90a GPU with torch: every expert of odd layouts (empty experts, one row, tile edges,
E = 1, many small experts, no rows at all, a Qwen3 decode step) against float64 torch, both tiles and the
library's choice; rows outside every expert's tiles left as they were (out=) or zero; a non-default stream
(ordered after what it holds), torch.compile(fullgraph=True), torch.library.opcheck, DLPack arrays, and
the checks before a launch. Skipped, with the reason, without such a GPU or without torch."""

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
