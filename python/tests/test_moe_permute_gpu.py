"""moe_permute on an sm_90a GPU with torch: the library's permute (gl_moe_permute) against the MoE example's
torch_permute (torch's ops: the reference) at 1, 64, 300 and 4096 tokens, 8 experts top 2 and 128 top 8: the same
offsets, the same places, the token's row at each place; through the eager fast path and the operator (bit for
bit the same); x's rows at a pitch and at a hidden size that is no multiple of 8 (the 2-byte copy); ordered on a
side stream; under torch.compile(fullgraph=True); captured into a CUDA graph and replayed on a new routing;
torch.library.opcheck. Skipped, with the reason, without such a GPU or without torch."""

import importlib.util
import pathlib
import sys

import pytest

from support import gpu_and_torch_missing

pytestmark = pytest.mark.skipif(bool(gpu_and_torch_missing()), reason=gpu_and_torch_missing() or "-")

if not gpu_and_torch_missing():
    import torch

    import gemm_ladder

    SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "examples" / "llama_decoder.py"
    _spec = importlib.util.spec_from_file_location("llama_decoder", SCRIPT)
    ld = sys.modules.get("llama_decoder") or importlib.util.module_from_spec(_spec)
    if "llama_decoder" not in sys.modules:
        sys.modules["llama_decoder"] = ld  # before it runs: its dataclasses look their module up there
        _spec.loader.exec_module(ld)


def routing(tokens, k, experts, hidden, seed=12):
    """xf (tokens, hidden) bf16 and a router's flat, order and counts (as moe_forward makes them), with one expert
    busier than a 128-row tile where there are tokens enough; and the rows of a that any such routing needs."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    scores = torch.rand(tokens, experts, device="cuda", generator=gen)
    scores[: tokens // 2, 0] += 1
    flat = scores.topk(k, dim=-1).indices.flatten()
    order = flat.argsort(stable=True)
    counts = torch.zeros(experts, dtype=torch.int64, device="cuda").scatter_add_(0, flat, torch.ones_like(flat))
    xf = torch.randn(tokens, hidden, device="cuda", generator=gen).to(torch.bfloat16)
    return xf, flat, order, counts, ld.padded_rows(tokens * k, experts, tokens)


def expect_torch_permute(got, xf, flat, order, counts, k, rows, what):
    a, offsets, place = got
    a_ref, offsets_ref, place_ref = ld.torch_permute(xf, flat, order, counts, k, rows)
    assert (a.shape, a.dtype, offsets.dtype, place.dtype) == ((rows, xf.shape[1]), torch.bfloat16, torch.int64,
                                                             torch.int64), what
    assert torch.equal(offsets, offsets_ref), f"{what}: offsets {offsets.tolist()[:8]}.. vs {offsets_ref.tolist()[:8]}.."
    assert torch.equal(place, place_ref), f"{what}: places differ at {int((place != place_ref).sum())} slots"
    assert torch.equal(a[place], xf[torch.arange(flat.numel(), device="cuda") // k]), f"{what}: a row is not its token's"


@pytest.mark.parametrize("via", ["fast_path", "operator"])
@pytest.mark.parametrize("k,experts", [(2, 8), (8, 128)], ids=["e8_k2", "e128_k8"])
@pytest.mark.parametrize("tokens", [1, 64, 300, 4096])
def test_is_torch_permute(tokens, k, experts, via):
    xf, flat, order, counts, rows = routing(tokens, k, experts, 2048 if experts == 128 else 256)
    fn = gemm_ladder.moe_permute if via == "fast_path" else torch.ops.gemm_ladder.moe_permute
    got = fn(xf, flat, order, counts, k, rows)
    assert gemm_ladder.last_path() == "moe_permute 16-byte"
    expect_torch_permute(got, xf, flat, order, counts, k, rows, f"{tokens} tokens, top {k} of {experts}, {via}")


def test_fast_path_is_the_operator_bit_for_bit():
    fast = gemm_ladder._fast_moe_permute
    if fast is None:
        pytest.skip("the C++ operators are not built here (no fast path)")
    xf, flat, order, counts, rows = routing(300, 8, 128, 2048)
    by_fast = fast(xf, flat, order, counts, 8, rows)
    assert by_fast is not None, "the fast path declined a plain call"
    by_op = torch.ops.gemm_ladder.moe_permute(xf, flat, order, counts, 8, rows)
    place = by_op[2]
    assert torch.equal(by_fast[1], by_op[1]) and torch.equal(by_fast[2], place)
    assert torch.equal(by_fast[0][place], by_op[0][place])
    assert fast(xf.float(), flat, order, counts, 8, rows) is None  # anything but the plain call: the checked path


@pytest.mark.parametrize("hidden,pitch,path", [(2048, 2304, "moe_permute 16-byte"), (100, 100, "moe_permute 2-byte"),
                                               (136, 140, "moe_permute 2-byte")], ids=["pitch", "odd_hidden", "odd_pitch"])
def test_rows_at_a_pitch_and_odd_sizes(hidden, pitch, path):
    xf, flat, order, counts, rows = routing(300, 8, 128, pitch, seed=3)
    xf = xf[:, :hidden]  # the tokens' rows inside wider ones: read in place, no copy
    got = gemm_ladder.moe_permute(xf, flat, order, counts, 8, rows)
    assert gemm_ladder.last_path() == path
    expect_torch_permute(got, xf, flat, order, counts, 8, rows, f"hidden {hidden} at pitch {pitch}")


def test_non_default_stream_orders_after_its_pending_work():
    # On a side stream: a long sleep, then the routing's real values, then the permute. Run on any other stream, the
    # kernel would read counts of zeros before the copy lands.
    xf, flat, order, counts, rows = routing(64, 8, 128, 2048, seed=5)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        work = torch.zeros_like(counts)
        torch.cuda._sleep(50_000_000)  # about 25 ms
        work.copy_(counts)
        got = gemm_ladder.moe_permute(xf, flat, order, work, 8, rows)
    side.synchronize()
    expect_torch_permute(got, xf, flat, order, counts, 8, rows, "on a side stream")


def test_compiled_fullgraph_is_eager():
    xf, flat, order, counts, rows = routing(64, 8, 128, 2048, seed=6)

    def step(xf, flat, order, counts):
        a, offsets, place = gemm_ladder.moe_permute(xf, flat, order, counts, 8, rows)
        return a, offsets, place

    got = torch.compile(step, fullgraph=True, dynamic=False)(xf, flat, order, counts)
    expect_torch_permute(got, xf, flat, order, counts, 8, rows, "compiled")


def test_captured_into_a_cuda_graph_and_replayed_on_a_new_routing():
    xf, flat, order, counts, rows = routing(64, 8, 128, 2048, seed=7)
    static = [t.clone() for t in (xf, flat, order, counts)]
    gemm_ladder.moe_permute(*static, 8, rows)  # warm-up outside the capture (the fast path's first call)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        got = gemm_ladder.moe_permute(*static, 8, rows)
    for seed in (8, 9):  # new tokens and a new routing copied in, the graph replayed: the results follow
        new = routing(64, 8, 128, 2048, seed=seed)
        for dst, src in zip(static, new[:4]):
            dst.copy_(src)
        graph.replay()
        torch.cuda.synchronize()
        expect_torch_permute(got, *new[:4], 8, rows, f"graph replay, routing {seed}")


def test_opcheck():
    # every expert's rows a whole number of 128-row tiles and `rows` their sum: no padding row, every row of a written,
    # so that the comparisons of the results (test_aot_dispatch_dynamic) see no unwritten memory
    tokens, k, experts = 256, 1, 2
    xf = torch.randn(tokens, 64, device="cuda").to(torch.bfloat16)
    flat = (torch.arange(tokens, device="cuda") % 2).to(torch.int64)
    order = flat.argsort(stable=True)
    counts = torch.bincount(flat, minlength=experts)
    torch.library.opcheck(torch.ops.gemm_ladder.moe_permute.default, (xf, flat, order, counts, k, tokens),
                          test_utils=("test_schema", "test_autograd_registration", "test_faketensor",
                                      "test_aot_dispatch_dynamic"))


def test_checks_before_a_launch_on_the_gpu():
    xf, flat, order, counts, rows = routing(5, 2, 8, 64)
    with pytest.raises(TypeError, match="counts is on cpu: gemm_ladder runs on CUDA tensors"):
        gemm_ladder.moe_permute(xf, flat, order, counts.cpu(), 2, rows)
    with pytest.raises(ValueError, match="rows = 9 is below the tokens·k = 10 routed rows"):
        gemm_ladder.moe_permute(xf, flat, order, counts, 2, 9)
    with pytest.raises(ValueError, match="order has shape"):
        gemm_ladder.moe_permute(xf, flat, order[:-1], counts, 2, rows)
