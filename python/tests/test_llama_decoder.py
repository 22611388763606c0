"""The example model of docs/use_the_kernels.md (python/examples/llama_decoder.py) at tiny shapes.

    PYTHONPATH=python python -m pytest python/tests/test_llama_decoder.py

Without torch every test is skipped; on a CPU the model's own logic runs (its KV cache, its grouped-
query attention against a plain one, the shapes its linear layers see, its CSV read by the page
checker, its one-line refusal without a GPU); with a GPU and gemm_ladder, our linear against torch's,
eager and under torch.compile(fullgraph=True), and the script end to end. The same for --moe (the
Qwen3-30B-A3B-shaped mixture of experts): on a CPU its routing against a float64 loop over tokens, its
padded layout against gemm_ladder.grouped_layout and stand-ins for grouped_mm and grouped_swiglu written from
the documented rules (the fused experts on the interleaved weights, the unfused path where the library would take
its decode tile), and a strict export (no graph break) holding the operators' fakes; on a GPU, its experts on our
kernels (fused and unfused) against a float64 reference, and the model eager, compiled and end to end, with and
without --unfused-swiglu.
"""

from __future__ import annotations

import csv
import dataclasses
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the example model needs it")
import torch.nn.functional as F  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "python" / "examples" / "llama_decoder.py"
sys.path.insert(0, str(REPO / "python"))
_spec = importlib.util.spec_from_file_location("llama_decoder", SCRIPT)
ld = importlib.util.module_from_spec(_spec)
sys.modules["llama_decoder"] = ld  # before it runs: its dataclasses look their module up there
_spec.loader.exec_module(ld)

HAS_GPU = torch.cuda.is_available()


def gemm_ladder_or_reason():
    """gemm_ladder's module, or the reason it cannot be used here."""
    if not HAS_GPU:
        return None, "no CUDA GPU"
    try:
        import gemm_ladder
    except Exception as e:  # ImportError, or OSError loading the library
        return None, f"gemm_ladder cannot be imported ({type(e).__name__}: {e})"
    return gemm_ladder, ""


def rel_diff(a: torch.Tensor, ref: torch.Tensor) -> float:
    """The script's measure: the largest |a - ref| over the largest |ref|."""
    return ((a.float() - ref.float()).abs().max() / ref.float().abs().max()).item()


def run_model(model, tokens, cache_len, split, cfg=None):
    """Prefill tokens[:, :split] then decode the rest one token at a time: every step's logits. `model` is a
    Decoder (its cfg) or a runner of make_runner (pass the cfg)."""
    cache = ld.KVCache(cfg or model.cfg, tokens.shape[0], cache_len, tokens.device)
    out = [model(tokens[:, :split], cache, 0)]
    for pos in range(split, tokens.shape[1]):
        out.append(model(tokens[:, pos:pos + 1], cache, pos))
    return out


def assert_compiled_steps_match(compiled, cfg, tokens, torch_steps, cache=None):
    """A compiled runner's prefill of tokens[:, :32] and its one decode step of tokens[:, 32:] (33 tokens,
    a cache of 40, a new one unless given) against torch's first two steps, within the script's tolerance."""
    cache = cache if cache is not None else ld.KVCache(cfg, tokens.shape[0], 40, "cuda")
    prefill = compiled(tokens[:, :32], cache, 0).clone()
    decode = compiled(tokens[:, 32:], cache, 32).clone()
    assert rel_diff(prefill, torch_steps[0]) <= ld.TOLERANCE_REL
    assert rel_diff(decode, torch_steps[1]) <= ld.TOLERANCE_REL


def script_env():
    """The environment the example script runs in: this checkout's python/ first on PYTHONPATH."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "python"), os.environ.get("PYTHONPATH", "")]))


# --- CPU: the model's logic -------------------------------------------------------------------------

def test_config_is_llama3_8b():
    c = ld.LLAMA3_8B
    assert (c.hidden, c.heads, c.kv_heads, c.head_dim, c.ffn, c.vocab) == (4096, 32, 8, 128, 14336, 128256)
    assert c.qkv == 6144 and c.rope_theta == 500000.0


@torch.no_grad()
def test_decode_continues_prefill():
    """Prefill of 8 tokens then decode 3 gives the logits that prefills of 9, 10 and 11 tokens give:
    the KV cache holds what the prefill computed, and the decode step reads it at the right places."""
    model = ld.Decoder(ld.TINY, "cpu", seed=1)
    tokens = torch.randint(0, ld.TINY.vocab, (3, 11), generator=torch.Generator().manual_seed(0))
    steps = run_model(model, tokens, 16, 8)
    for i, logits in enumerate(steps[1:]):
        whole = model(tokens[:, :9 + i], ld.KVCache(ld.TINY, 3, 16, "cpu"), 0)
        assert rel_diff(logits, whole) <= 2 ** -7, f"decode step {i}"


@torch.no_grad()
def test_grouped_query_attention_matches_plain_attention():
    """The attention block against one written out: each group of heads//kv_heads query heads reads
    one key/value head, softmax in fp32, causal."""
    cfg = ld.TINY
    model = ld.Decoder(cfg, "cpu", seed=2)
    attn, T = model.blocks[0].attn, 7
    x = torch.randn(2, T, cfg.hidden, generator=torch.Generator().manual_seed(1)).to(torch.bfloat16)
    cache = ld.KVCache(cfg, 2, 8, "cpu")
    got = attn(x, cache.k[0], cache.v[0], 0, model.cos[:T], model.sin[:T], ld.torch_linear)

    H, KVH, D = cfg.heads, cfg.kv_heads, cfg.head_dim
    q, k, v = (x.float() @ attn.wqkv.float().T).split([H * D, KVH * D, KVH * D], dim=-1)
    def heads(t, n):
        return t.view(2, T, n, D).transpose(1, 2)
    q = ld.apply_rope(heads(q, H), model.cos[:T], model.sin[:T]).float()
    k = ld.apply_rope(heads(k, KVH), model.cos[:T], model.sin[:T]).float().repeat_interleave(H // KVH, dim=1)
    v = heads(v, KVH).float().repeat_interleave(H // KVH, dim=1)
    scores = (q @ k.transpose(-1, -2)) / D ** 0.5 + torch.full((T, T), float("-inf")).triu(1)
    o = (scores.softmax(-1) @ v).transpose(1, 2).reshape(2, T, H * D)
    want = o @ attn.wo.float().T
    assert rel_diff(got, want) <= 2 ** -6


@torch.no_grad()
def test_linear_layers_see_nn_linear_operands():
    """Every product goes through the pluggable linear, with a contiguous bf16 x (..., K) and an (N, K)
    weight: the five weights of a Llama layer and head, in the order a layer uses them."""
    cfg, seen = ld.TINY, []
    def recording(x, w):
        assert x.dtype == w.dtype == torch.bfloat16 and x.is_contiguous() and x.shape[-1] == w.shape[1]
        seen.append(tuple(w.shape))
        return ld.torch_linear(x, w)
    model = ld.Decoder(cfg, "cpu", seed=3, linear=recording)
    run_model(model, torch.randint(0, cfg.vocab, (2, 5)), 8, 4)
    layer = [(cfg.qkv, cfg.hidden), (cfg.hidden, cfg.heads * cfg.head_dim), (2 * cfg.ffn, cfg.hidden), (cfg.hidden, cfg.ffn)]
    step = layer * cfg.layers + [(cfg.vocab, cfg.hidden)]
    assert seen == step * 2  # the prefill and one decode step


def test_interleaved_timing_takes_turns(monkeypatch):
    """Every backend's warm-up first, then one turn of each in turn, the order reversed every other turn
    (and from the start with flip); each turn from an idle GPU (a synchronization before it), its steps
    between its own two events."""
    log = []

    class Event:
        def __init__(self, enable_timing=False):
            self.at = None

        def record(self):
            self.at = len(log)

        def elapsed_time(self, end):
            return float(end.at - self.at)

    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: log.append("sync"))
    steps = {name: (lambda name=name: log.append(name)) for name in ("a", "b", "c")}
    times = ld.interleaved_times_ms(steps, warmup=2, reps=3)
    timed = [x for name in ["a", "b", "c", "c", "b", "a", "a", "b", "c"] for x in ("sync", name)]
    assert log == ["a", "a", "b", "b", "c", "c"] + timed + ["sync"]
    assert times == {"a": [1.0] * 3, "b": [1.0] * 3, "c": [1.0] * 3}
    log.clear()
    ld.interleaved_times_ms(steps, warmup=0, reps=2, flip=True)
    assert [x for x in log if x != "sync"] == ["c", "b", "a", "a", "b", "c"]
    log.clear()  # three steps back to back a turn: one time per turn, theirs over three
    times = ld.interleaved_times_ms({"a": steps["a"], "b": steps["b"]}, warmup=0, reps=2, per_turn=3)
    assert log == ["sync", "a", "a", "a", "sync", "b", "b", "b", "sync", "b", "b", "b", "sync", "a", "a", "a", "sync"]
    assert times == {"a": [1.0, 1.0], "b": [1.0, 1.0]}


def test_csv_reads_as_the_page_checker_reads_it(tmp_path):
    """write_csv's file is a table the page checker can query (tools/check_page_numbers.py)."""
    spec = importlib.util.spec_from_file_location("check_page_numbers", REPO / "tools" / "check_page_numbers.py")
    checker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checker)
    row = {c: "" for c in ld.CSV_COLUMNS}
    rows = [dict(row, backend="torch_eager", phase="decode", batch=64, tokens_per_s=1234.5, pct_of_torch_eager=100.0),
            dict(row, backend="ours_eager", phase="decode", batch=64, tokens_per_s=1200.0, pct_of_torch_eager=97.2)]
    data = tmp_path / "plots" / "data" / "h200"
    data.mkdir(parents=True)
    ld.write_csv(str(data / "lib_model.csv"), rows)
    page = tmp_path / "page.md"
    page.write_text("ours 1,200<!-- n: lib_model backend=ours_eager phase=decode batch=64 tokens_per_s --> tokens/s, "
                    "97.2%<!-- n: lib_model backend=ours_eager phase=decode batch=64 pct_of_torch_eager -->\n", encoding="utf-8")
    assert checker.main(["--root", str(tmp_path), str(page)]) == 0


@pytest.mark.skipif(HAS_GPU, reason="checks the refusal on a machine without a CUDA GPU")
@pytest.mark.parametrize("flags", [["--tiny"], ["--tiny", "--moe"]])
def test_without_gpu_one_line_and_exit_2(flags):
    r = subprocess.run([sys.executable, str(SCRIPT), *flags], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "no CUDA GPU" in lines[0], r.stderr


# --- CPU: the mixture of experts (--moe) ------------------------------------------------------------

def test_moe_config_is_qwen3_30b_a3b():
    c = ld.QWEN3_30B_A3B
    assert (c.hidden, c.heads, c.kv_heads, c.head_dim, c.vocab) == (2048, 32, 4, 128, 151936)
    assert (c.experts, c.experts_per_token, c.expert_ffn, c.rope_theta) == (128, 8, 768, 1e6)
    for flags, cfg in (([], ld.LLAMA3_8B), (["--tiny"], ld.TINY), (["--moe"], ld.QWEN3_30B_A3B),
                       (["--moe", "--tiny"], ld.TINY_MOE)):
        assert ld.config_of(ld.parse_args(flags)) == cfg
    assert ld.config_of(ld.parse_args(["--moe", "--layers", "2"])).layers == 2


def routing(layer, xf):
    """The layer's own routing of xf (n, H), as MoE.forward computes it: (weights, chosen), (n, k) each."""
    probs = F.linear(xf, layer.w_router).float().softmax(dim=-1)
    weights, chosen = probs.topk(layer.cfg.experts_per_token, dim=-1)
    return weights / weights.sum(dim=-1, keepdim=True), chosen


def moe_float64(layer, x):
    """The MoE layer token by token in float64 (the bf16 weights upcast), on the layer's own routing."""
    xf = x.reshape(-1, x.shape[-1])
    weights, chosen = routing(layer, xf)
    out = torch.zeros(xf.shape, dtype=torch.float64, device=x.device)
    for t in range(xf.shape[0]):
        for w, e in zip(weights[t].tolist(), chosen[t].tolist()):
            gate, up = (layer.w_gate_up[e].double() @ xf[t].double()).chunk(2)
            out[t] += w * (layer.w_down[e].double() @ (F.silu(gate) * up))
    return out.view(x.shape)


@torch.no_grad()
def test_moe_layer_matches_float64_per_token():
    """The sort by expert, torch._grouped_mm's experts and the weighted sum give each token its top-k
    experts' outputs, weighted by the renormalized softmax."""
    cfg = ld.TINY_MOE
    layer = ld.Decoder(cfg, "cpu", seed=6).blocks[0].mlp
    x = torch.randn(3, 11, cfg.hidden, generator=torch.Generator().manual_seed(2)).to(torch.bfloat16)
    assert rel_diff(layer(x, ld.torch_experts), moe_float64(layer, x)) <= 2 ** -6


def test_padded_rows_hold_any_routing():
    """The rows known from the shapes hold the worst routing; at decode (tokens <= 128) at most 128·E,
    where the library picks its 64-row tile."""
    assert ld.padded_rows(8, 128, 1) == 1024 and ld.padded_rows(512, 128, 64) == 16384 == 128 * 128
    assert ld.padded_rows(32768, 128, 4096) == 49024
    gen = torch.Generator().manual_seed(3)
    for tokens, k, E in ((1, 8, 128), (64, 8, 128), (100, 2, 8), (4096, 8, 128), (300, 8, 128)):
        bound = ld.padded_rows(tokens * k, E, tokens)
        skewed = [tokens] * k + [0] * (E - k)                          # every token to the same k experts
        spread = [0] * E                                               # every expert busy, as evenly as can be
        for i in range(tokens * k):
            spread[i % E] += 1
        random = torch.stack([torch.randperm(E, generator=gen)[:k] for _ in range(tokens)]).flatten().bincount(minlength=E)
        for counts in (skewed, spread, random.tolist()):
            assert sum(counts) == tokens * k and max(counts) <= tokens
            assert gemm_ladder_layout(counts)[2] <= bound, (tokens, counts)


def gemm_ladder_layout(counts):
    from gemm_ladder import _core  # pure Python: needs neither the library nor a GPU
    return _core.grouped_layout(counts)


def test_contiguous_layout_is_the_librarys():
    """contiguous_layout (on the device, from the counts) gives gemm_ladder.grouped_layout's offsets, and
    puts the sorted rows of expert g at its first row onwards."""
    counts = [3, 0, 140, 1, 0, 128, 7]
    offsets, dest = ld.contiguous_layout(torch.tensor(counts), sum(counts))
    want_offsets, first, _ = gemm_ladder_layout(counts)
    assert offsets.tolist() == want_offsets
    want_dest = [f + r for f, c in zip(first, counts) for r in range(c)]
    assert dest.tolist() == want_dest


def test_torch_permute_puts_each_slot_in_its_experts_rows():
    """torch_permute: each token-major slot's row of A is its token's, inside its expert's rows of the layout,
    the experts' rows in the sorted order."""
    gen = torch.Generator().manual_seed(11)
    n, k, E = 37, 2, 8
    flat = torch.stack([torch.randperm(E, generator=gen)[:k] for _ in range(n)]).flatten()
    order = flat.argsort(stable=True)
    counts = torch.bincount(flat, minlength=E)
    xf = torch.randn(n, 64, generator=gen)
    a, offsets, place = ld.torch_permute(xf, flat, order, counts, k, ld.padded_rows(n * k, E, n))
    want_offsets, first, _ = gemm_ladder_layout(counts.tolist())
    assert offsets.tolist() == want_offsets
    assert torch.equal(a[place], xf[torch.arange(n * k) // k])
    for g in range(E):
        mine = place[flat == g]
        assert mine.tolist() == list(range(first[g], first[g] + int(counts[g])))


def stand_in_grouped_mm(a, w, offsets, out=None, zero_fill=True):
    """grouped_mm's documented rule in Python: expert g's rows are align_up(offsets[g], 128) ..
    offsets[g + 1] - 1 of a and the result, the rest zero (or out's)."""
    E, rows = w.shape[0], a.shape[0]
    assert offsets.dtype == torch.int64 and offsets.shape == (E + 1,) and offsets[0] == 0
    assert a.is_contiguous() and w.is_contiguous() and w.shape[1] % 256 == 0
    c = torch.zeros(rows, w.shape[1], dtype=a.dtype) if out is None else out
    for g in range(E):
        start, end = -(-int(offsets[g]) // 128) * 128, int(offsets[g + 1])
        assert end <= rows
        if end > start:
            c[start:end] = (a[start:end].float() @ w[g].float().T).to(a.dtype)
    return c


@torch.no_grad()
def test_moe_model_on_the_padded_layout():
    """The whole model with make_ladder_experts over the stand-in: the scatter into the padded layout and
    the gather back give torch_experts' logits, at prefill and at a decode step."""
    cfg = ld.TINY_MOE
    model = ld.Decoder(cfg, "cpu", seed=7)
    tokens = torch.randint(0, cfg.vocab, (4, 37), generator=torch.Generator().manual_seed(4))
    torch_steps = run_model(model, tokens, 40, 36)
    model.experts = ld.make_ladder_experts(stand_in_grouped_mm)
    for i, (ours, ref) in enumerate(zip(run_model(model, tokens, 40, 36), torch_steps)):
        assert rel_diff(ours, ref) <= ld.TOLERANCE_REL, f"step {i}"


def stand_in_grouped_swiglu(a, w, offsets, out=None, zero_fill=True):
    """grouped_swiglu's documented rule in Python: w (E, 2I, K) each expert's gate and up rows interleaved by 128;
    expert g's rows of the result are SiLU(a @ W_gate.T) * (a @ W_up.T), the rest zero (or out's)."""
    from gemm_ladder import _core  # pure Python: needs neither the library nor a GPU
    E, rows = w.shape[0], a.shape[0]
    assert offsets.dtype == torch.int64 and offsets.shape == (E + 1,) and offsets[0] == 0
    assert a.is_contiguous() and w.is_contiguous() and w.shape[1] % 256 == 0
    stacked = _core.deinterleave_gate_up(w)
    h = torch.zeros(rows, w.shape[1] // 2, dtype=a.dtype) if out is None else out
    for g in range(E):
        start, end = -(-int(offsets[g]) // 128) * 128, int(offsets[g + 1])
        if end > start:
            gate, up = (a[start:end].float() @ stacked[g].float().T).chunk(2, dim=-1)
            h[start:end] = (F.silu(gate) * up).to(a.dtype)
    return h


def test_decode_tile_rule_is_the_librarys():
    """takes_decode_tile mirrors chapter 13's choose_grouped_tile without a host copy: Qwen3's gate+up (N = 1536,
    K = 2048) at one token (1024 rows of buffer: 96 tiles of 64×256) on 132 SMs, not at 64 tokens (16384 rows) nor
    at prefill, nor with K below 1024 (the tiny model)."""
    gate_up = (2 * 768, 2048)
    assert ld.takes_decode_tile(ld.padded_rows(8, 128, 1), *gate_up, 132)
    assert not ld.takes_decode_tile(ld.padded_rows(8, 128, 1), *gate_up, 96)  # as many tiles as SMs: not fewer
    assert not ld.takes_decode_tile(ld.padded_rows(512, 128, 64), *gate_up, 132)
    assert not ld.takes_decode_tile(ld.padded_rows(32768, 128, 4096), *gate_up, 132)
    assert not ld.takes_decode_tile(ld.padded_rows(2, 8, 1), 512, 256, 132)
    experts = ld.make_ladder_experts(stand_in_grouped_mm, ld.torch_permute, stand_in_grouped_swiglu, sms=132)
    cfg = ld.QWEN3_30B_A3B
    at = [experts.fused(t, cfg.experts, cfg.experts_per_token, 2 * cfg.expert_ffn, cfg.hidden) for t in (1, 64, 4096)]
    assert at == [False, True, True]
    unfused = ld.make_ladder_experts(stand_in_grouped_mm, ld.torch_permute)
    assert not unfused.fused(4096, cfg.experts, cfg.experts_per_token, 2 * cfg.expert_ffn, cfg.hidden)


def test_interleaved_weights_are_made_once_beside_the_stacked_ones():
    """Decoder(interleave_gate_up=...) keeps each MoE layer's gate+up weights in grouped_swiglu's order too, as a
    buffer (not counted as parameters), the stacked ones and every other weight unchanged."""
    from gemm_ladder import _core
    cfg = ld.TINY_MOE
    plain = ld.Decoder(cfg, "cpu", seed=7)
    model = ld.Decoder(cfg, "cpu", seed=7, interleave_gate_up=_core.interleave_gate_up)
    assert sum(p.numel() for p in model.parameters()) == sum(p.numel() for p in plain.parameters())
    for (name, p), (_, q) in zip(model.named_parameters(), plain.named_parameters()):
        assert torch.equal(p, q), name
    for block, plain_block in zip(model.blocks, plain.blocks):
        assert plain_block.mlp.w_gate_up_interleaved is None
        w = block.mlp.w_gate_up_interleaved
        assert w.shape == block.mlp.w_gate_up.shape and not w.requires_grad
        assert torch.equal(_core.deinterleave_gate_up(w), block.mlp.w_gate_up)
        assert not torch.equal(w, block.mlp.w_gate_up)  # 2F = 512: two blocks of 128 gate and 128 up rows


@torch.no_grad()
def test_moe_model_on_the_fused_swiglu():
    """The whole model with make_ladder_experts over the stand-ins of grouped_swiglu (the interleaved weights) and
    grouped_mm gives torch_experts' logits (which read the stacked weights), at prefill and at decode steps; the
    fused path without interleaved weights is refused with one line."""
    from gemm_ladder import _core
    cfg = ld.TINY_MOE
    model = ld.Decoder(cfg, "cpu", seed=7, interleave_gate_up=_core.interleave_gate_up)
    tokens = torch.randint(0, cfg.vocab, (4, 37), generator=torch.Generator().manual_seed(4))
    torch_steps = run_model(model, tokens, 40, 36)
    calls = []

    def counting_swiglu(*args, **kwargs):
        calls.append(args[0].shape)
        return stand_in_grouped_swiglu(*args, **kwargs)
    model.experts = ld.make_ladder_experts(stand_in_grouped_mm, ld.torch_permute, counting_swiglu, sms=132)
    for i, (ours, ref) in enumerate(zip(run_model(model, tokens, 40, 36), torch_steps)):
        assert rel_diff(ours, ref) <= ld.TOLERANCE_REL, f"step {i}"
    assert len(calls) == 2 * cfg.layers, calls  # every layer of both steps fused (K = 256: never the decode tile)
    plain = ld.Decoder(cfg, "cpu", seed=7)
    plain.experts = model.experts
    with pytest.raises(ValueError, match="the fused experts \\(grouped_swiglu\\) read the gate\\+up weights interleaved"):
        plain(tokens[:, :4], ld.KVCache(cfg, 4, 8, "cpu"), 0)


def _stand_in_ops():
    """stand_in_grouped_mm and stand_in_grouped_swiglu as torch custom operators (CPU kernels and fakes, in a test
    namespace), so that dynamo traces them as it traces gemm_ladder's: each an opaque call of known shape."""
    if not hasattr(torch.ops.llama_decoder_test, "grouped_swiglu"):
        @torch.library.custom_op("llama_decoder_test::grouped_mm", mutates_args=())
        def grouped_mm(a: torch.Tensor, w: torch.Tensor, offsets: torch.Tensor, zero_fill: bool = True) -> torch.Tensor:
            return stand_in_grouped_mm(a, w, offsets)

        @grouped_mm.register_fake
        def _(a, w, offsets, zero_fill=True):
            return a.new_empty(a.shape[0], w.shape[1])

        @torch.library.custom_op("llama_decoder_test::grouped_swiglu", mutates_args=())
        def grouped_swiglu(a: torch.Tensor, w: torch.Tensor, offsets: torch.Tensor, zero_fill: bool = True) -> torch.Tensor:
            return stand_in_grouped_swiglu(a, w, offsets)

        @grouped_swiglu.register_fake
        def _(a, w, offsets, zero_fill=True):
            return a.new_empty(a.shape[0], w.shape[1] // 2)
    ops = torch.ops.llama_decoder_test
    return (lambda a, w, offsets, zero_fill=True: ops.grouped_mm(a, w, offsets, zero_fill),
            lambda a, w, offsets, zero_fill=True: ops.grouped_swiglu(a, w, offsets, zero_fill))


@torch.no_grad()
def test_fused_moe_model_compiles_in_one_graph(monkeypatch):
    """make_runner's torch.compile(fullgraph=True) of the whole MoE model with the fused experts (the stand-ins as
    custom operators; dynamo's trace run by its eager backend, since inductor would need a GPU or a long CPU build):
    no graph break through the interleaved buffer and the fused/unfused choice, and torch's logits, at prefill and
    at a decode step."""
    from gemm_ladder import _core
    cfg = ld.TINY_MOE
    model = ld.Decoder(cfg, "cpu", seed=7, interleave_gate_up=_core.interleave_gate_up)
    tokens = torch.randint(0, cfg.vocab, (2, 33), generator=torch.Generator().manual_seed(4))
    torch_steps = run_model(model, tokens, 40, 32)
    grouped_mm, grouped_swiglu = _stand_in_ops()
    traced = []

    def counting_swiglu(*args, **kwargs):  # runs while dynamo traces: once per layer and graph
        traced.append(args[0].shape)
        return grouped_swiglu(*args, **kwargs)
    compile_ = torch.compile
    monkeypatch.setattr(torch, "compile", lambda m, **kw: compile_(m, **dict(kw, mode=None, backend="eager")))
    runner = ld.make_runner(model, ld.Backend("ours_compile", "gemm_ladder", "default"),
                            {"torch": ld.torch_linear, "gemm_ladder": ld.torch_linear},
                            {"torch": ld.torch_experts,
                             "gemm_ladder": ld.make_ladder_experts(grouped_mm, ld.torch_permute, counting_swiglu, sms=132)})
    cache = ld.KVCache(cfg, 2, 40, "cpu")
    assert rel_diff(runner(tokens[:, :32], cache, 0), torch_steps[0]) <= ld.TOLERANCE_REL
    assert rel_diff(runner(tokens[:, 32:], cache, 32), torch_steps[1]) <= ld.TOLERANCE_REL
    assert len(traced) == 2 * cfg.layers, traced  # traced once per layer in each of the two graphs, then replayed


def test_unfused_swiglu_flag():
    assert not ld.parse_args(["--moe"]).unfused_swiglu
    assert ld.parse_args(["--moe", "--unfused-swiglu"]).unfused_swiglu
    assert ld.CSV_COLUMNS[-2] == "moe_swiglu"


def test_triton_permute_flag_and_the_permute_chosen():
    """--triton-permute (the A/B of the permute): the flag, the CSV's moe_permute column, and choose_permute's order:
    gemm_ladder.moe_permute where given and on a GPU, else Triton on a GPU, else torch's ops (this CPU tensor)."""
    assert not ld.parse_args(["--moe"]).triton_permute
    assert ld.parse_args(["--moe", "--triton-permute"]).triton_permute
    assert ld.CSV_COLUMNS[-1] == "moe_permute"

    def library_permute(*args):
        raise AssertionError("not on a CPU tensor")
    xf = torch.zeros(3, 64, dtype=torch.bfloat16)
    assert ld.choose_permute(xf, library_permute) is ld.torch_permute
    assert ld.choose_permute(xf) is ld.torch_permute
    experts = ld.make_ladder_experts(lambda *a, **kw: None, moe_permute=library_permute)
    assert experts.permute_of(xf) is ld.torch_permute
    assert ld.make_ladder_experts(lambda *a, **kw: None, ld.torch_permute).permute_of(xf) is ld.torch_permute
    assert [ld.permute_name(f) for f in (ld.torch_permute, library_permute)] == ["torch", "gemm_ladder"]
    if ld.triton is not None:
        assert ld.permute_name(ld.triton_permute) == "triton"


def test_moe_traces_with_the_fake_grouped_mm_without_a_graph_break():
    """The MoE layer on fake CUDA tensors, exported strictly (a graph break fails it, as fullgraph=True
    does): the two grouped GEMMs are gemm_ladder's operator, shaped by its fake."""
    gemm_ladder = pytest.importorskip("gemm_ladder", reason="gemm_ladder is not importable")
    from torch._subclasses.fake_tensor import FakeTensorMode
    experts = ld.make_ladder_experts(gemm_ladder.grouped_mm, ld.torch_permute)  # the Triton permute needs a GPU

    class Layer(torch.nn.Module):  # MoE.forward's function on the weights given (a module made in forward breaks the graph)
        def forward(self, x, w_router, w_gate_up, w_down):
            return ld.moe_forward(ld.TINY_MOE, x, w_router, w_gate_up, w_down, experts)

    cfg = ld.TINY_MOE
    with FakeTensorMode():
        bf16 = dict(device="cuda", dtype=torch.bfloat16)
        args = (torch.empty(2, 5, cfg.hidden, **bf16), torch.empty(cfg.experts, cfg.hidden, **bf16),
                torch.empty(cfg.experts, 2 * cfg.expert_ffn, cfg.hidden, **bf16),
                torch.empty(cfg.experts, cfg.hidden, cfg.expert_ffn, **bf16))
        exported = torch.export.export(Layer(), args, strict=True)
    targets = [str(n.target) for n in exported.graph.nodes if n.op == "call_function"]
    assert targets.count("gemm_ladder.grouped_mm.default") == 2, targets
    out = [n for n in exported.graph.nodes if n.op == "output"][0].args[0][0].meta["val"]
    assert tuple(out.shape) == (2, 5, cfg.hidden) and out.dtype == torch.bfloat16


# --- GPU: our linear against torch's ----------------------------------------------------------------

gemm_ladder, WHY_NOT = gemm_ladder_or_reason()
needs_gemm_ladder = pytest.mark.skipif(gemm_ladder is None, reason=WHY_NOT)


@needs_gemm_ladder
@torch.no_grad()
def test_ours_matches_torch_eager():
    model = ld.Decoder(ld.TINY, "cuda", seed=4)
    tokens = torch.randint(0, ld.TINY.vocab, (5, 70), device="cuda")
    torch_steps = run_model(model, tokens, 80, 64)
    model.linear = gemm_ladder.linear
    ours_steps = run_model(model, tokens, 80, 64)
    for i, (ours, ref) in enumerate(zip(ours_steps, torch_steps)):
        assert rel_diff(ours, ref) <= ld.TOLERANCE_REL, f"step {i}"


@needs_gemm_ladder
@torch.no_grad()
def test_ours_under_torch_compile_fullgraph():
    """The whole model with gemm_ladder.linear in one graph (fullgraph=True fails on a graph break)."""
    model = ld.Decoder(ld.TINY, "cuda", seed=5)
    tokens = torch.randint(0, ld.TINY.vocab, (2, 33), device="cuda")
    torch_steps = run_model(model, tokens, 40, 32)
    compiled = ld.make_runner(model, ld.Backend("ours_compile", "gemm_ladder", "default"),
                              {"torch": ld.torch_linear, "gemm_ladder": gemm_ladder.linear})
    assert_compiled_steps_match(compiled, ld.TINY, tokens, torch_steps)


@needs_gemm_ladder
@torch.no_grad()
def test_ours_under_reduce_overhead():
    """The model compiled with mode="reduce-overhead": gemm_ladder's launches captured into CUDA graphs,
    replayed for the prefill and the decode step."""
    model = ld.Decoder(ld.TINY, "cuda", seed=6)
    tokens = torch.randint(0, ld.TINY.vocab, (2, 33), device="cuda")
    torch_steps = run_model(model, tokens, 40, 32)
    compiled = ld.make_runner(model, ld.Backend("ours_reduce_overhead", "gemm_ladder", "reduce-overhead"),
                              {"torch": ld.torch_linear, "gemm_ladder": gemm_ladder.linear})
    pinned = gemm_ladder.cache_stats()["pinned"]
    cache = ld.KVCache(ld.TINY, tokens.shape[0], 40, "cuda")  # one cache, as the script's steps have
    for _ in range(3):  # the first calls record the graphs; the last replays them
        assert_compiled_steps_match(compiled, ld.TINY, tokens, torch_steps, cache)
    assert gemm_ladder.cache_stats()["pinned"] > pinned  # our GEMMs were captured, not run beside the graphs


@needs_gemm_ladder
def test_script_end_to_end(tmp_path):
    out = tmp_path / "model.csv"
    env = script_env()
    r = subprocess.run([sys.executable, str(SCRIPT), "--tiny", "--backends", "torch_eager,ours_eager",
                        "--prefill-tokens", "256", "--context", "64", "--reps", "3", "--rounds", "2", "--warmup", "1",
                        "--csv", str(out)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(out, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == ld.CSV_COLUMNS
        rows = list(reader)
    assert [(x["backend"], x["phase"], x["batch"]) for x in rows] == [
        (b, p, n) for b in ("torch_eager", "ours_eager") for p, n in (("prefill", "1"), ("decode", "1"), ("decode", "64"))]
    assert all(x["within_tolerance"] == "yes" and float(x["tokens_per_s"]) > 0 for x in rows)
    # two rounds of 3 steps each: the median of all 6 lies between the two rounds' medians
    assert all(x["rounds"] == "2" and float(x["round_min_ms"]) <= float(x["median_ms"]) <= float(x["round_max_ms"])
               for x in rows)


# --- GPU: the mixture of experts on grouped_mm ------------------------------------------------------

def ladder_experts(fused):
    """The script's experts on our kernels: grouped_swiglu and grouped_mm (fused), or grouped_mm and F.silu."""
    return ld.make_ladder_experts(gemm_ladder.grouped_mm, grouped_swiglu=gemm_ladder.grouped_swiglu if fused else None)


@needs_gemm_ladder
@torch.no_grad()
@pytest.mark.parametrize("fused", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("cfg,tokens", [(ld.TINY_MOE, 300), (dataclasses.replace(ld.QWEN3_30B_A3B, layers=1), 64),
                                        (dataclasses.replace(ld.QWEN3_30B_A3B, layers=1), 1)])
def test_moe_layer_on_grouped_mm_matches_float64(cfg, tokens, fused):
    """One MoE layer with its experts on gemm_ladder (grouped_swiglu then grouped_mm, or grouped_mm, F.silu and
    grouped_mm) against the float64 loop over tokens, on the same routing: Qwen3-30B-A3B's 128 experts at decode
    sizes (one token: the fused experts take the unfused path, the library's decode tile), the tiny one with experts
    past a 128-row tile."""
    g = torch.Generator(device="cuda").manual_seed(8)
    layer = ld.MoE(cfg, "cuda", g, interleave_gate_up=gemm_ladder.interleave_gate_up if fused else None)
    x = torch.randn(1, tokens, cfg.hidden, device="cuda", generator=g).to(torch.bfloat16)
    experts = ladder_experts(fused)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert experts.fused(tokens, cfg.experts, cfg.experts_per_token, 2 * cfg.expert_ffn, cfg.hidden) == (
        fused and not ld.takes_decode_tile(ld.padded_rows(tokens * cfg.experts_per_token, cfg.experts, tokens),
                                           2 * cfg.expert_ffn, cfg.hidden, sms))
    got = layer(x, experts)
    assert rel_diff(got, moe_float64(layer, x)) <= 2 ** -6


@needs_gemm_ladder
@pytest.mark.skipif(ld.triton is None, reason="Triton is not installed")
@pytest.mark.parametrize("tokens,k,E", [(1, 8, 128), (64, 8, 128), (300, 2, 8), (4096, 8, 128)])
def test_triton_permute_is_torch_permute(tokens, k, E):
    """The one-kernel permute gives torch_permute's offsets and places, and the same rows at those places."""
    gen = torch.Generator(device="cuda").manual_seed(12)
    scores = torch.rand(tokens, E, device="cuda", generator=gen)
    scores[: tokens // 2, 0] += 1  # one expert busier than a 128-row tile where there are tokens enough
    flat = scores.topk(k, dim=-1).indices.flatten()
    order = flat.argsort(stable=True)
    counts = torch.zeros(E, dtype=torch.int64, device="cuda").scatter_add_(0, flat, torch.ones_like(flat))
    xf = torch.randn(tokens, 2048 if E == 128 else 256, device="cuda", generator=gen).to(torch.bfloat16)
    rows = ld.padded_rows(tokens * k, E, tokens)
    a, offsets, place = ld.triton_permute(xf, flat, order, counts, k, rows)
    a_ref, offsets_ref, place_ref = ld.torch_permute(xf, flat, order, counts, k, rows)
    assert torch.equal(offsets, offsets_ref) and torch.equal(place, place_ref)
    assert torch.equal(a[place], a_ref[place_ref])
    # the library's kernel, which the model runs unless --triton-permute: the same three results
    a_lib, offsets_lib, place_lib = gemm_ladder.moe_permute(xf, flat, order, counts, k, rows)
    assert torch.equal(offsets_lib, offsets) and torch.equal(place_lib, place)
    assert torch.equal(a_lib[place_lib], a[place])


@needs_gemm_ladder
@torch.no_grad()
@pytest.mark.parametrize("fused", [True, False], ids=["fused", "unfused"])
def test_moe_model_eager_and_compiled_match_torch(fused):
    """The tiny MoE model on our kernels, eager and under torch.compile(fullgraph=True), against torch's (which
    reads the stacked gate+up weights; the fused experts their interleaved copy)."""
    cfg = ld.TINY_MOE
    model = ld.Decoder(cfg, "cuda", seed=9, interleave_gate_up=gemm_ladder.interleave_gate_up if fused else None)
    tokens = torch.randint(0, cfg.vocab, (2, 33), device="cuda", generator=torch.Generator(device="cuda").manual_seed(5))
    torch_steps = run_model(model, tokens, 40, 32)
    kernels = ({"torch": ld.torch_linear, "gemm_ladder": gemm_ladder.linear},
               {"torch": ld.torch_experts, "gemm_ladder": ladder_experts(fused)})
    eager = ld.make_runner(model, ld.Backend("ours_eager", "gemm_ladder", "eager"), *kernels)
    for i, (ours, ref) in enumerate(zip(run_model(eager, tokens, 40, 32, cfg), torch_steps)):
        assert rel_diff(ours, ref) <= ld.TOLERANCE_REL, f"eager step {i}"
    compiled = ld.make_runner(model, ld.Backend("ours_compile", "gemm_ladder", "default"), *kernels)
    assert_compiled_steps_match(compiled, cfg, tokens, torch_steps)


@needs_gemm_ladder
@pytest.mark.parametrize("flags,ours", [([], "fused"), (["--unfused-swiglu"], "unfused"),
                                         pytest.param(["--triton-permute"], "fused", marks=pytest.mark.skipif(
                                             ld.triton is None, reason="Triton is not installed"))],
                         ids=["fused", "unfused", "triton_permute"])
def test_moe_script_end_to_end(tmp_path, flags, ours):
    out = tmp_path / "moe.csv"
    env = script_env()
    r = subprocess.run([sys.executable, str(SCRIPT), "--moe", "--tiny", "--backends", "torch_eager,ours_eager",
                        "--prefill-tokens", "256", "--context", "64", "--reps", "3", "--warmup", "1", "--csv", str(out),
                        *flags],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(out, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(x["backend"], x["phase"], x["batch"]) for x in rows] == [
        (b, p, n) for b in ("torch_eager", "ours_eager") for p, n in (("prefill", "1"), ("decode", "1"), ("decode", "64"))]
    assert all(x["within_tolerance"] == "yes" and float(x["tokens_per_s"]) > 0 for x in rows)
    # the tiny model's K = 256: never the decode tile, so every step of ours is fused unless told not to be
    assert [x["moe_swiglu"] for x in rows] == [""] * 3 + [ours] * 3
    permute = "triton" if "--triton-permute" in flags else "gemm_ladder"
    assert [x["moe_permute"] for x in rows] == [""] * 3 + [permute] * 3


def _export_fused_moe_layer(experts):
    """The MoE layer (TINY_MOE) on `experts` with the interleaved gate+up weight, on fake CUDA tensors, exported
    strictly (a graph break fails it, as fullgraph=True does): the exported program and its call targets."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    class Layer(torch.nn.Module):
        def forward(self, x, w_router, w_gate_up, w_down, w_gate_up_interleaved):
            return ld.moe_forward(ld.TINY_MOE, x, w_router, w_gate_up, w_down, experts, w_gate_up_interleaved)

    cfg = ld.TINY_MOE
    with FakeTensorMode():
        bf16 = dict(device="cuda", dtype=torch.bfloat16)
        w_gate_up = torch.empty(cfg.experts, 2 * cfg.expert_ffn, cfg.hidden, **bf16)
        args = (torch.empty(2, 5, cfg.hidden, **bf16), torch.empty(cfg.experts, cfg.hidden, **bf16), w_gate_up,
                torch.empty(cfg.experts, cfg.hidden, cfg.expert_ffn, **bf16), torch.empty_like(w_gate_up))
        exported = torch.export.export(Layer(), args, strict=True)
    return exported, [str(n.target) for n in exported.graph.nodes if n.op == "call_function"]


def test_moe_traces_with_the_fake_grouped_swiglu_without_a_graph_break():
    """The MoE layer with the fused experts on fake CUDA tensors, exported strictly: grouped_swiglu on the
    interleaved weights, then grouped_mm for the down projection, no F.silu between them."""
    gemm_ladder = pytest.importorskip("gemm_ladder", reason="gemm_ladder is not importable")
    experts = ld.make_ladder_experts(gemm_ladder.grouped_mm, ld.torch_permute, gemm_ladder.grouped_swiglu, sms=132)

    exported, targets = _export_fused_moe_layer(experts)
    assert targets.count("gemm_ladder.grouped_swiglu.default") == 1, targets
    assert targets.count("gemm_ladder.grouped_mm.default") == 1, targets
    assert not any("silu" in t for t in targets), targets
    out = [n for n in exported.graph.nodes if n.op == "output"][0].args[0][0].meta["val"]
    assert tuple(out.shape) == (2, 5, ld.TINY_MOE.hidden) and out.dtype == torch.bfloat16


def test_moe_traces_with_the_fake_moe_permute_without_a_graph_break():
    """The MoE layer as the script builds it (load_ladder_experts: gemm_ladder.moe_permute on CUDA tensors) on fake
    CUDA tensors, exported strictly: the permute is the library's one operator, no Triton kernel, no torch_permute."""
    gemm_ladder = pytest.importorskip("gemm_ladder", reason="gemm_ladder is not importable")
    experts = ld.make_ladder_experts(gemm_ladder.grouped_mm, grouped_swiglu=gemm_ladder.grouped_swiglu, sms=132,
                                     moe_permute=gemm_ladder.moe_permute)

    exported, targets = _export_fused_moe_layer(experts)
    assert targets.count("gemm_ladder.moe_permute.default") == 1, targets
    assert not any("triton" in t or "index_put" in t for t in targets), targets  # torch_permute scatters by index_put
    out = [n for n in exported.graph.nodes if n.op == "output"][0].args[0][0].meta["val"]
    assert tuple(out.shape) == (2, 5, ld.TINY_MOE.hidden) and out.dtype == torch.bfloat16
