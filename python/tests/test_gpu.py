"""On an sm_90a GPU with torch: every dtype and both storage orders against a float64 torch.matmul at odd
shapes, on a non-default stream (ordered after what that stream already holds), under
torch.compile(fullgraph=True), through torch.library.opcheck, through DLPack, and from two threads on two
streams. Skipped, with the reason, without such a GPU or without torch."""

import threading

import pytest

from support import DLPackOnly, gpu_and_torch_missing

pytestmark = pytest.mark.skipif(bool(gpu_and_torch_missing()), reason=gpu_and_torch_missing() or "-")

if not gpu_and_torch_missing():
    import torch

    import gemm_ladder

# Tolerance per element relative to sum_k |a_ik·b_kj| (the harness's gemm_tolerance): a bf16 C is rounded
# to 8 bits; tf32 products keep 11; fp8 accumulates in fewer bits than fp32, then rounds to bf16.
TOLERANCE = {"bf16": 8e-3 + 1e-5, "tf32": 2e-3, "fp8": 1.2e-2}


def expect_close(got, a64, b64, kind, what):
    ref = a64 @ b64
    bound = TOLERANCE[kind] * (a64.abs() @ b64.abs()) + 1e-6
    err = (got.double() - ref).abs()
    bad = err > bound
    assert not bad.any(), (f"{what}: {int(bad.sum())} of {bad.numel()} elements off, worst {float(err.max()):.3g} "
                           f"(bound there {float(bound.flatten()[err.argmax()]):.3g}); path {gemm_ladder.last_path()}")


def operands(m, n, k, dtype, layout, seed=0):
    """a (M×K) and b (K×N) in `layout`: RCR is weight.t() of a row-major N×K weight, RRR a row-major K×N."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.rand(m, k, device="cuda", generator=g, dtype=torch.float32).mul_(2).sub_(1).to(dtype)
    if layout == "RCR":
        b = torch.rand(n, k, device="cuda", generator=g, dtype=torch.float32).mul_(2).sub_(1).to(dtype).t()
    else:
        b = torch.rand(k, n, device="cuda", generator=g, dtype=torch.float32).mul_(2).sub_(1).to(dtype)
    return a, b


# Sizes every kernel of the library takes (K and N multiples of 16) and sizes no 16-byte rule allows,
# which bf16 takes since every_shape takes every shape (chapter 11's any_shape.cuh): it must.
TAKEN = [(1, 4096, 4096), (5, 1000, 528), (33, 264, 80), (129, 136, 4112), (1000, 1000, 1040)]
RAGGED = [(1, 1, 1), (31, 33, 17), (257, 129, 65), (100, 100, 30)]


def run_or_skip_refusal(fn, must_take):
    try:
        return fn()
    except gemm_ladder.UnsupportedError as e:
        if must_take:
            raise
        pytest.skip(f"the chapter's kernel refuses it for now: {e}")


@pytest.mark.parametrize("layout", ["RCR", "RRR"])
@pytest.mark.parametrize("mnk", TAKEN + RAGGED, ids=lambda s: "x".join(map(str, s)))
def test_bf16(mnk, layout):
    m, n, k = mnk
    a, b = operands(m, n, k, torch.bfloat16, layout)
    c = run_or_skip_refusal(lambda: gemm_ladder.mm(a, b), must_take=True)
    assert c.dtype == torch.bfloat16 and c.shape == (m, n)
    expect_close(c, a.double(), b.double(), "bf16", f"bf16 {layout} {mnk}")


def one_consumer_shapes():
    """Shapes on chapter 11's one-consumer tiles (every_shape.hpp's wide_decode, mid_decode, one_consumer) on
    this GPU, with the tile each takes: N = 28672 at M = 17 and 64 (64×256), one 128-column tile per SM at M = 48
    and the model's 128×64 tile at M = 100 with a ragged N (64×128; at N = 6424 the 96-column tile of step 10
    would need two rounds, so it keeps 64×128)."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count if not gpu_and_torch_missing() else 132
    return [((17, 28672, 520), "64x256"), ((64, 28672, 264), "64x256"), ((48, 128 * sms, 264), "64x128"),
            ((100, 6424, 512), "64x128")]


@pytest.mark.parametrize("layout", ["RCR", "RRR"])
@pytest.mark.parametrize("case", range(4), ids=["17x28672x520", "64x28672x264", "48xNx264", "100x6424x512"])
def test_bf16_one_consumer_tiles(case, layout):
    # Both storage orders take the same tile (RRR with B MN-major): the path says so, and C is right.
    (m, n, k), tile = one_consumer_shapes()[case]
    a, b = operands(m, n, k, torch.bfloat16, layout)
    c = gemm_ladder.mm(a, b)
    assert f"tile_shapes {tile}" in gemm_ladder.last_path(), gemm_ladder.last_path()
    expect_close(c, a.double(), b.double(), "bf16", f"bf16 {layout} {(m, n, k)}")


@pytest.mark.parametrize("layout", ["RCR", "RRR"])
def test_bf16_stream_tile(layout):
    # Chapter 11's step 10: at M = 100 and N = 6136 the 64×96 tile fills 128 SMs where 64×128 fills 96, in
    # RCR; RRR keeps 64×128 (its B MN-major comes in 64-column boxes).
    m, n, k = 100, 6136, 512
    a, b = operands(m, n, k, torch.bfloat16, layout)
    c = gemm_ladder.mm(a, b)
    tile = "64x96" if layout == "RCR" else "64x128"
    assert f"tile_shapes {tile}" in gemm_ladder.last_path(), gemm_ladder.last_path()
    expect_close(c, a.double(), b.double(), "bf16", f"bf16 {layout} {(m, n, k)}")


@pytest.mark.parametrize("layout", ["RCR", "RRR"])
@pytest.mark.parametrize("mnk", TAKEN, ids=lambda s: "x".join(map(str, s)))
def test_tf32(mnk, layout):
    m, n, k = mnk
    a, b = operands(m, n, k, torch.float32, layout)
    c = gemm_ladder.mm(a, b)
    assert c.dtype == torch.float32
    expect_close(c, a.double(), b.double(), "tf32", f"tf32 {layout} {mnk}")


def fp8_operands(m, n, k, block, seed=0):
    """e4m3 a and weight, their scales (per tensor or DeepSeek-V3 blocks, in the library's layouts) and
    the dequantized float64 a (M×K) and b (K×N)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    a8 = (torch.rand(m, k, device="cuda", generator=g) * 4 - 2).to(torch.float8_e4m3fn)
    w8 = (torch.rand(n, k, device="cuda", generator=g) * 4 - 2).to(torch.float8_e4m3fn)
    kb, nb = -(-k // 128), -(-n // 128)
    if not block:
        sa = torch.tensor([0.5], device="cuda")
        sb = torch.tensor([0.125], device="cuda")
        return a8, w8, sa, sb, a8.double() * 0.5, (w8.double() * 0.125).t()
    kb4 = -(-kb // 4) * 4
    sa = (2.0 ** torch.randint(-3, 3, (kb, m), device="cuda", generator=g).float()).t()  # (M, Kb), M-contiguous
    sb_full = 2.0 ** torch.randint(-3, 3, (nb, kb4), device="cuda", generator=g).float()
    sb = sb_full[:, :kb]  # (Nb, Kb), rows Kb4 apart
    a64 = a8.double() * sa.double().repeat_interleave(128, dim=1)[:, :k]
    w64 = w8.double() * sb.double().repeat_interleave(128, dim=0)[:n].repeat_interleave(128, dim=1)[:, :k]
    return a8, w8, sa, sb, a64, w64.t()


@pytest.mark.parametrize("block", [False, True], ids=["per_tensor", "block_scaled"])
@pytest.mark.parametrize("mnk", TAKEN, ids=lambda s: "x".join(map(str, s)))
def test_fp8(mnk, block):
    m, n, k = mnk
    a8, w8, sa, sb, a64, b64 = fp8_operands(m, n, k, block)
    c = gemm_ladder.mm_fp8(a8, w8.t(), sa, sb)
    assert c.dtype == torch.bfloat16 and c.shape == (m, n)
    # Block scales: fp8_block_scaled, or its small-M plans ("fp8_block_scaled_small_m 64x256 x4").
    assert gemm_ladder.last_path().startswith("fp8_block_scaled" if block else "fp8_per_tensor")
    expect_close(c, a64, b64, "fp8", f"fp8 {'block' if block else 'per tensor'} {mnk}")


def test_cpp_operators_are_built():
    # On a GPU machine with torch and a compiler the operators are csrc/torch_ops.cpp's (no Python per
    # call): the model's compiled numbers depend on it, so a failed build fails here, not silently.
    from gemm_ladder import _torch_ops
    assert _torch_ops.CPP_OPS, "the C++ operators were not built (see the warning at import)"
    x = torch.randn(3, 5, 64, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(40, 64, device="cuda", dtype=torch.bfloat16)
    expect_close(torch.ops.gemm_ladder.linear(x, w).view(-1, 40), x.view(-1, 64).double(), w.t().double(), "bf16",
                 "C++ linear")


def test_linear_matches_torch_and_reads_the_weight_in_place():
    x = torch.randn(3, 7, 4096, device="cuda", dtype=torch.bfloat16)
    layer = torch.nn.Linear(4096, 1000, bias=False, device="cuda", dtype=torch.bfloat16)
    y = gemm_ladder.linear(x, layer.weight)
    assert y.shape == (3, 7, 1000)
    expect_close(y.view(-1, 1000), x.view(-1, 4096).double(), layer.weight.double().t(), "bf16", "linear")


def test_non_default_stream_orders_after_its_pending_work():
    # On a side stream: a long sleep, then a's new values, then the GEMM. Run on any other stream, the
    # GEMM would read the old a (zeros) before the copy lands.
    a, b = operands(128, 512, 1024, torch.bfloat16, "RCR", seed=3)
    zeros = torch.zeros_like(a)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        work = zeros.clone()
        torch.cuda._sleep(50_000_000)  # about 25 ms
        work.copy_(a)
        c = gemm_ladder.mm(work, b)
    side.synchronize()
    expect_close(c, a.double(), b.double(), "bf16", "on a side stream")


def test_compiled_fullgraph_matches_eager():
    def f(x, w, a8, w8, sa, sb):
        return gemm_ladder.linear(x, w).float().sum(-1), gemm_ladder.mm_fp8(a8, w8.t(), sa, sb)

    compiled = torch.compile(f, fullgraph=True)
    x = torch.randn(4, 9, 512, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(264, 512, device="cuda", dtype=torch.bfloat16)
    a8, w8, sa, sb, _, _ = fp8_operands(9, 264, 512, block=True)
    (sum_eager, c_eager), (sum_got, c_got) = f(x, w, a8, w8, sa, sb), compiled(x, w, a8, w8, sa, sb)
    torch.testing.assert_close(c_got, c_eager, rtol=0, atol=0)  # the same kernel on the same inputs
    torch.testing.assert_close(sum_got, sum_eager, rtol=1e-4, atol=1e-3)  # inductor may sum in another order


def test_captured_in_a_cuda_graph_on_a_new_shape():
    # A shape no test prepared before (M = 11, split K): the library prepares it during the capture (a
    # workspace's cudaMalloc and cudaMemset, which the capture allows only with the thread's mode relaxed)
    # and pins it; the graph replays on new values of a, clear_cache() between, matching each time.
    a, b = operands(11, 4096, 4096, torch.bfloat16, "RCR", seed=5)
    static_a = a.clone()
    pinned = gemm_ladder.cache_stats()["pinned"]
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        c = gemm_ladder.mm(static_a, b)
    assert gemm_ladder.cache_stats()["pinned"] == pinned + 1
    for seed in (6, 7):
        new_a, _ = operands(11, 4096, 4096, torch.bfloat16, "RCR", seed=seed)
        static_a.copy_(new_a)
        c.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        expect_close(c, new_a.double(), b.double(), "bf16", f"graph replay (seed {seed})")
        gemm_ladder.clear_cache()  # the pinned entry stays: the next replay reads its workspace


def test_compiled_reduce_overhead_on_a_new_shape():
    # torch.compile's mode="reduce-overhead" records the compiled step in a CUDA graph, with our op in it.
    def f(x, w):
        return gemm_ladder.linear(torch.nn.functional.silu(gemm_ladder.linear(x, w)), w.t().contiguous())
    compiled = torch.compile(f, fullgraph=True, mode="reduce-overhead")
    w = torch.randn(3072, 1024, device="cuda", dtype=torch.bfloat16) / 32
    for step in range(4):  # the first calls warm up and record; the later ones replay
        x = torch.randn(13, 1024, device="cuda", dtype=torch.bfloat16, generator=torch.Generator(device="cuda").manual_seed(step))
        torch.compiler.cudagraph_mark_step_begin()
        got = compiled(x, w).clone()
        want = f(x, w)
        torch.testing.assert_close(got, want, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("op", ["mm", "mm_rrr", "mm_tf32", "linear", "mm_fp8", "mm_fp8_block"])
def test_opcheck(op):
    a, b = operands(33, 264, 80, torch.bfloat16, "RCR")
    if op == "mm":
        args = (a, b)
    elif op == "mm_rrr":
        args = (a, b.contiguous())
    elif op == "mm_tf32":
        args = operands(33, 264, 80, torch.float32, "RRR")
    elif op == "linear":
        args = (torch.randn(2, 5, 80, device="cuda", dtype=torch.bfloat16), b.t())
    else:
        a8, w8, sa, sb, _, _ = fp8_operands(33, 264, 256, block=op == "mm_fp8_block")
        # opcheck copies its inputs (a padded scale_b becomes contiguous): the padded buffer itself
        args = (a8, w8.t(), sa, sb._base if sb._base is not None else sb)
    target = {"mm_rrr": "mm", "mm_tf32": "mm", "mm_fp8_block": "mm_fp8"}.get(op, op)
    if op == "mm_rrr":
        run_or_skip_refusal(lambda: gemm_ladder.mm(*args), must_take=True)
    # test_schema checks for mutation by multiplying the inputs, which torch cannot do in fp8: the fp8
    # operator is checked for the rest (fake tensor, autograd registration, AOT dispatch with dynamic shapes)
    utils = ("test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic") if target == "mm_fp8" else \
        ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
    torch.library.opcheck(getattr(torch.ops.gemm_ladder, target).default, args, test_utils=utils)


@pytest.mark.parametrize("op", ["linear", "mm", "mm_fp8"])
def test_backward_raises(op):
    """No derivative is implemented: a backward through an operator raises, naming it, instead of autograd's
    fallback warning and no gradient (the C++ operators' Autograd kernel; mm_fp8's custom_op raises by itself)."""
    import warnings
    if op == "mm_fp8":
        a8, w8, sa, sb, _, _ = fp8_operands(33, 264, 256, block=False)
        scale = torch.nn.Parameter(sa.clone())  # float32: the only input of mm_fp8 that can need a gradient
        y = gemm_ladder.mm_fp8(a8, w8.t(), scale, sb)
    else:
        a, b = operands(33, 264, 80, torch.bfloat16, "RCR")
        scale = torch.nn.Parameter(b.t().contiguous())  # the (N, K) weight
        y = gemm_ladder.linear(a, scale) if op == "linear" else gemm_ladder.mm(a, scale.t())
    assert y.requires_grad and y.grad_fn is not None
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match=f"gemm_ladder(::|\\.){op}"):
            y.float().sum().backward()
    assert scale.grad is None
    if op != "mm_fp8":  # out= (the ctypes path, unseen by autograd) refuses it before a launch, as torch's out= does
        with pytest.raises(RuntimeError, match="requires a gradient"):
            gemm_ladder.linear(a, scale, out=torch.empty(33, 264, device="cuda", dtype=torch.bfloat16))
    assert not [w for w in seen if "autograd kernel was not registered" in str(w.message)], [str(w.message) for w in seen]


def test_dlpack_arrays():
    a, b = operands(65, 264, 200, torch.bfloat16, "RCR")
    out = torch.empty(65, 264, device="cuda", dtype=torch.bfloat16)
    got = gemm_ladder.mm(DLPackOnly(a), DLPackOnly(b), out=DLPackOnly(out))
    assert isinstance(got, DLPackOnly) and got.t is out
    torch.cuda.synchronize()
    torch.testing.assert_close(out, gemm_ladder.mm(a, b), rtol=0, atol=0)


def test_two_threads_two_streams():
    a, b = operands(128, 256, 4096, torch.bfloat16, "RCR", seed=5)  # split-K: a workspace per stream
    x, w = operands(16, 4096, 1024, torch.bfloat16, "RCR", seed=6)  # decode: swap_ab
    results, errors = {}, []

    def worker(t):
        try:
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                c1, c2 = torch.empty(128, 256, device="cuda", dtype=torch.bfloat16), torch.empty(16, 4096, device="cuda",
                                                                                                 dtype=torch.bfloat16)
                for _ in range(50):
                    gemm_ladder.mm(a, b, out=c1)
                    gemm_ladder.mm(x, w, out=c2)
            s.synchronize()
            results[t] = (c1, c2)
        except Exception as e:  # reported by the main thread
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    for t in range(2):
        expect_close(results[t][0], a.double(), b.double(), "bf16", f"thread {t}, split K")
        expect_close(results[t][1], x.double(), w.double(), "bf16", f"thread {t}, decode")


def test_cache_hits_on_repeated_calls():
    a, b = operands(7, 512, 1024, torch.bfloat16, "RCR")
    out = torch.empty(7, 512, device="cuda", dtype=torch.bfloat16)
    gemm_ladder.mm(a, b, out=out)
    before = gemm_ladder.cache_stats()
    for _ in range(10):
        gemm_ladder.mm(a, b, out=out)
    after = gemm_ladder.cache_stats()
    assert after["hits"] - before["hits"] == 10 and after["misses"] == before["misses"]
    assert gemm_ladder.last_path()


def test_errors_before_launch_on_the_gpu():
    a, b = operands(8, 16, 32, torch.bfloat16, "RCR")
    with pytest.raises(TypeError, match="a is bfloat16 but b is float32"):
        gemm_ladder.mm(a, b.float())
    with pytest.raises(TypeError, match="a is on cpu"):
        gemm_ladder.mm(a.cpu(), b)
    with pytest.raises(ValueError, match="out overlaps a"):
        gemm_ladder.mm(a, b, out=a.view(-1)[:128].view(8, 16))
    with pytest.raises(ValueError, match=r"a: strides \(1, 8\) for a 8x32 matrix"):
        gemm_ladder.mm(a.t().contiguous().t(), b)
