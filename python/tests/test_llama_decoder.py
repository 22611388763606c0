"""The example model of docs/use_the_kernels.md (python/examples/llama_decoder.py) at tiny shapes.

    PYTHONPATH=python python -m pytest python/tests/test_llama_decoder.py

Without torch every test is skipped; on a CPU the model's own logic runs (its KV cache, its grouped-
query attention against a plain one, the shapes its linear layers see, its CSV read by the page
checker, its one-line refusal without a GPU); with a GPU and gemm_ladder, our linear against torch's,
eager and under torch.compile(fullgraph=True), and the script end to end.
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


def run_model(model, tokens, cache_len, split):
    """Prefill tokens[:, :split] then decode the rest one token at a time: every step's logits."""
    cache = ld.KVCache(model.cfg, tokens.shape[0], cache_len, tokens.device)
    out = [model(tokens[:, :split], cache, 0)]
    for pos in range(split, tokens.shape[1]):
        out.append(model(tokens[:, pos:pos + 1], cache, pos))
    return out


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
def test_without_gpu_one_line_and_exit_2():
    r = subprocess.run([sys.executable, str(SCRIPT), "--tiny"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "no CUDA GPU" in lines[0], r.stderr


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
    cache = ld.KVCache(ld.TINY, 2, 40, "cuda")
    prefill = compiled(tokens[:, :32], cache, 0).clone()
    decode = compiled(tokens[:, 32:], cache, 32).clone()
    assert rel_diff(prefill, torch_steps[0]) <= ld.TOLERANCE_REL
    assert rel_diff(decode, torch_steps[1]) <= ld.TOLERANCE_REL


@needs_gemm_ladder
def test_script_end_to_end(tmp_path):
    out = tmp_path / "model.csv"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "python"), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, str(SCRIPT), "--tiny", "--backends", "torch_eager,ours_eager",
                        "--prefill-tokens", "256", "--context", "64", "--reps", "3", "--warmup", "1", "--csv", str(out)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(out, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == ld.CSV_COLUMNS
        rows = list(reader)
    assert [(x["backend"], x["phase"], x["batch"]) for x in rows] == [
        (b, p, n) for b in ("torch_eager", "ours_eager") for p, n in (("prefill", "1"), ("decode", "1"), ("decode", "64"))]
    assert all(x["within_tolerance"] == "yes" and float(x["tokens_per_s"]) > 0 for x in rows)
