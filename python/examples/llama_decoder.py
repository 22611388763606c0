#!/usr/bin/env python3
"""A decoder at Llama-3-8B's layer shapes whose every linear layer runs on the ladder's kernel.

    cmake --preset default && cmake --build build --target gemm_ladder
    PYTHONPATH=python python python/examples/llama_decoder.py --csv plots/data/h200/lib_model.csv

The model is built here from seeded random weights (nothing is downloaded): hidden 4096, 32 query
heads and 8 key/value heads of 128 (grouped-query attention), RMSNorm, RoPE (theta 500000), a SwiGLU
MLP of 14336 with gate and up in one 28672×4096 weight, q, k and v in one 6144×4096 weight, a
128256-token vocabulary, bf16, `--layers` layers (4 unless told; Llama-3-8B has 32). Attention is
torch's `scaled_dot_product_attention` for every backend; only the linear layers change:

    torch_eager            torch.nn.functional.linear (cuBLAS), eager
    ours_eager             gemm_ladder.linear (chapter 11's every_shape), eager
    torch_compile          torch.nn.functional.linear under torch.compile(fullgraph=True)
    ours_compile           gemm_ladder.linear under torch.compile(fullgraph=True): a custom op, no graph break
    torch_reduce_overhead  torch.compile(mode="reduce-overhead"): compiled, then replayed as CUDA graphs
    ours_reduce_overhead   the same with gemm_ladder.linear (its launches captured into the graphs): both
                           without the host's cost per launch, the GPU's time alone
    torch_max_autotune     torch.compile(mode="max-autotune"): Triton's GEMM templates against cuBLAS per
                           shape, and CUDA graphs (--skip-autotune leaves it out: it compiles for minutes)

Measured with CUDA events, after warm-up, --reps turns of every backend in each of --rounds rounds, the
backends taking turns (one turn of each, then the next: a host whose speed swings for seconds at a time
then swings under all alike), each turn from an idle GPU and one step long unless --steps-per-turn says
more (interleaved_times_ms), the median of all turns' step times: prefill of
--prefill-tokens tokens (4096) in one sequence, and decode steps at batch 1 and 64 (one new token per sequence, after
--context tokens already in the KV cache: 512). Prefill computes the logits of the last position
only, as a server does. Every backend's logits are compared with torch_eager's on the same weights,
inputs and cache. Writes --csv (schema: CSV_COLUMNS below) and prints a table. Compiling takes most
of the run: each compiled backend compiles once per step (prefill, each decode batch), and the CSV's
compile_s has each first call's time; max-autotune's runs to minutes (--skip-autotune).

--moe swaps the model for Qwen3-30B-A3B's layers (hidden 2048, 32 query and 4 key/value heads of 128,
vocabulary 151936) whose MLP is a mixture of 128 experts of 768, top 8 (QWEN3_30B_A3B below):

    PYTHONPATH=python python python/examples/llama_decoder.py --moe --skip-autotune --csv plots/data/h200/lib_model_moe.csv

The router (softmax, top 8, renormalized), the sort of the routed tokens by expert and the weighted sum
are torch's for every backend; the experts' gate+up and down GEMMs run on gemm_ladder (chapter 13's
grouped kernels, the tokens permuted into their layout padded to 128 per expert by one kernel: the library's,
gemm_ladder.moe_permute, a C++ operator with an eager fast path; --triton-permute takes the Triton kernel it
replaced, triton_permute, for an A/B; the CSV's moe_permute says which ran) or, for the torch backends, on
torch._grouped_mm (torch's own grouped GEMM, unpadded rows, then F.silu(gate) * up). Ours computes gate+up and the activation in one launch,
gemm_ladder.grouped_swiglu (chapter 13's step 3: SiLU(gate)·up in the epilogue, on the gate and up weights
interleaved by 128 rows once when the model is built; torch's backends keep the stacked ones), then the
down projection on grouped_mm; where the library would take its decode tile for gate+up (one token on the
H200: fewer 64-row tiles than SMs), which the fused epilogue lacks, grouped_mm and F.silu(gate) * up as
before. --unfused-swiglu keeps grouped_mm and F.silu(gate) * up everywhere (the A/B); the CSV's moe_swiglu
says which ran. Each row then also
has moe_layer_rel_diff: the first MoE layer on a shared input, which the tolerance judges (see
TOLERANCE_REL: a near-tie in the router makes the logits of two roundings differ by a whole expert).

Exit status 0; 1 when a backend's logits (with --moe, its first MoE layer's output) are outside the
bf16 tolerance (the CSV is written first);
2 with one line when it cannot run: no torch, no CUDA GPU, gemm_ladder not importable or refusing.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import datetime
import math
import statistics
import sys
import time
from dataclasses import dataclass

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError as e:  # the one line of the docstring's promise; the test imports this file too
    if __name__ == "__main__":
        print(f"llama_decoder: cannot import torch ({e}): install PyTorch 2.5 or newer", file=sys.stderr)
        sys.exit(2)
    raise


# --- The model --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Config:
    hidden: int = 4096
    heads: int = 32
    kv_heads: int = 8
    head_dim: int = 128
    ffn: int = 14336
    vocab: int = 128256
    layers: int = 4
    rope_theta: float = 500000.0
    norm_eps: float = 1e-5
    max_positions: int = 8192
    experts: int = 0            # 0: a dense SwiGLU MLP of `ffn`; else a mixture of this many experts
    experts_per_token: int = 0  # top-k of the router
    expert_ffn: int = 0         # each expert's SwiGLU width

    @property
    def qkv(self) -> int:
        """Rows of the fused q, k, v weight: 32·128 + 2·8·128 = 6144."""
        return (self.heads + 2 * self.kv_heads) * self.head_dim


LLAMA3_8B = Config()
# Small enough for a CPU in a test; every GEMM dimension still a multiple of 64.
TINY = Config(hidden=256, heads=4, kv_heads=2, head_dim=64, ffn=512, vocab=1024, layers=2, max_positions=1024)
# --moe: Qwen3-30B-A3B's layer (hidden 2048, 32 query and 4 key/value heads of 128, 128 experts of 768,
# top 8, vocabulary 151936, RoPE theta 10^6) without its q/k RMSNorm, which changes no GEMM.
QWEN3_30B_A3B = Config(hidden=2048, heads=32, kv_heads=4, head_dim=128, ffn=0, vocab=151936, rope_theta=1e6,
                       norm_eps=1e-6, experts=128, experts_per_token=8, expert_ffn=768)
# --moe --tiny: 8 experts of 256, top 2; grouped_mm's N (512 and 256) still multiples of 256.
TINY_MOE = dataclasses.replace(TINY, ffn=0, experts=8, experts_per_token=2, expert_ffn=256)


def torch_linear(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """x (..., K) @ weight (N, K).T -> (..., N): nn.Linear without bias, on cuBLAS."""
    return F.linear(x, weight)


class KVCache:
    """Every layer's keys and values for `batch` sequences of up to `length` positions."""

    def __init__(self, cfg: Config, batch: int, length: int, device, dtype=torch.bfloat16):
        shape = (cfg.layers, batch, cfg.kv_heads, length, cfg.head_dim)
        self.k = torch.zeros(shape, device=device, dtype=dtype)  # (layers, B, KVH, length, D)
        self.v = torch.zeros(shape, device=device, dtype=dtype)  # (layers, B, KVH, length, D)
        if hasattr(torch, "_dynamo"):  # one buffer for the whole run: CUDA graphs may keep its address
            torch._dynamo.mark_static_address(self.k)
            torch._dynamo.mark_static_address(self.v)


def rope_tables(cfg: Config, device) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of every position's rotation angles, (max_positions, head_dim) each, fp32."""
    inv_freq = cfg.rope_theta ** (-torch.arange(0, cfg.head_dim, 2, dtype=torch.float32, device=device) / cfg.head_dim)
    angles = torch.outer(torch.arange(cfg.max_positions, dtype=torch.float32, device=device), inv_freq)
    angles = torch.cat([angles, angles], dim=-1)  # (positions, D): the two halves rotate together
    return angles.cos(), angles.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x (B, heads, T, D) rotated by position, in fp32 (cos, sin: (T, D)), as Llama's rotate_half."""
    xf = x.float()
    x1, x2 = xf.chunk(2, dim=-1)
    return (xf * cos + torch.cat([-x2, x1], dim=-1) * sin).to(x.dtype)


class RMSNorm(nn.Module):
    def __init__(self, cfg: Config, device):
        super().__init__()
        self.eps = cfg.norm_eps
        self.weight = nn.Parameter(torch.ones(cfg.hidden, device=device, dtype=torch.bfloat16), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


def random_weight(n: int, k: int, device, generator, experts: int = 0) -> nn.Parameter:
    """An (N, K) bf16 weight, nn.Linear's layout, with variance 1/K: activations keep their scale.
    With `experts`, that many stacked: (E, N, K)."""
    shape = (experts, n, k) if experts else (n, k)
    w = torch.empty(shape, device=device, dtype=torch.bfloat16).normal_(0.0, k ** -0.5, generator=generator)
    return nn.Parameter(w, requires_grad=False)


class Attention(nn.Module):
    def __init__(self, cfg: Config, device, generator):
        super().__init__()
        self.cfg = cfg
        self.wqkv = random_weight(cfg.qkv, cfg.hidden, device, generator)               # (6144, 4096)
        self.wo = random_weight(cfg.hidden, cfg.heads * cfg.head_dim, device, generator)  # (4096, 4096)

    def forward(self, x, k_cache, v_cache, pos: int, cos, sin, linear):
        cfg, (B, T, _) = self.cfg, x.shape
        H, KVH, D = cfg.heads, cfg.kv_heads, cfg.head_dim
        q, k, v = linear(x, self.wqkv).split([H * D, KVH * D, KVH * D], dim=-1)
        q = apply_rope(q.view(B, T, H, D).transpose(1, 2), cos, sin)    # (B, H, T, D)
        k = apply_rope(k.view(B, T, KVH, D).transpose(1, 2), cos, sin)  # (B, KVH, T, D)
        v = v.view(B, T, KVH, D).transpose(1, 2)                        # (B, KVH, T, D)
        k_cache[:, :, pos:pos + T] = k                                  # (B, KVH, length, D)
        v_cache[:, :, pos:pos + T] = v
        if pos == 0:  # prefill: the tokens attend to each other, causally
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        else:         # decode: one new token attends to every position so far, its own included
            assert T == 1, "after position 0 the model takes one token per sequence (no chunked prefill)"
            o = F.scaled_dot_product_attention(q, k_cache[:, :, :pos + 1], v_cache[:, :, :pos + 1], enable_gqa=True)
        return linear(o.transpose(1, 2).reshape(B, T, H * D), self.wo)  # (B, T, hidden)


class MLP(nn.Module):
    def __init__(self, cfg: Config, device, generator):
        super().__init__()
        self.w_gate_up = random_weight(2 * cfg.ffn, cfg.hidden, device, generator)  # (28672, 4096)
        self.w_down = random_weight(cfg.hidden, cfg.ffn, device, generator)          # (4096, 14336)

    def forward(self, x, linear):
        gate, up = linear(x, self.w_gate_up).chunk(2, dim=-1)  # (B, T, ffn) each
        return linear(F.silu(gate) * up, self.w_down)          # (B, T, hidden)


# --- The mixture of experts (--moe) -------------------------------------------------------------------
#
# The router and the weighted sum stay torch's for every backend; what changes is
# `experts(xf, flat, order, counts, w_gate_up, w_down, k, w_gate_up_interleaved)`: the tokens xf (n, hidden), each
# token's k experts flat (n·k,) token-major (slot t·k + j is token t's j-th expert), order (n·k,) the slots sorted
# by expert (stable) and counts (E,) the slots per expert -> each slot's expert output (n·k, hidden), token-major.
# w_gate_up is (E, 2F, hidden), [W_gate; W_up] stacked; w_gate_up_interleaved the same rows in grouped_swiglu's
# order (gemm_ladder.interleave_gate_up), or None where the model was built without it.

def torch_experts(xf, flat, order, counts, w_gate_up, w_down, k, w_gate_up_interleaved=None):
    """torch's grouped GEMM (torch._grouped_mm: the rows unpadded, int32 ends; CUTLASS on sm_90) on the
    tokens gathered in expert order, the outputs scattered back to the slots. The stacked [gate; up] weights:
    w_gate_up_interleaved (grouped_swiglu's order) is not read."""
    xs = xf[order // k]                                                                  # (n·k, H) sorted
    ends = counts.cumsum(0).to(torch.int32)                                              # (E,)
    gate, up = torch._grouped_mm(xs, w_gate_up.transpose(-2, -1), offs=ends).chunk(2, dim=-1)  # (rows, F) each
    ys = torch._grouped_mm(F.silu(gate) * up, w_down.transpose(-2, -1), offs=ends)      # (n·k, H) sorted
    y = torch.empty_like(ys)
    y[order] = ys                                                                        # (n·k, H) token-major
    return y


GROUPED_ALIGN = 128  # grouped_mm's contiguous layout: each expert's rows start on a multiple of 128


def padded_rows(routed: int, experts: int, tokens: int) -> int:
    """Rows of grouped_mm's A that hold any routing of `routed` rows over `experts` experts, no expert
    getting more than `tokens` (a token picks distinct experts): each expert that gets rows pads them to a
    multiple of 128. Known from the shapes alone, so the step needs no host sync (torch.compile, graphs)."""
    busy = min(experts, routed)
    per_expert = -(-tokens // GROUPED_ALIGN) * GROUPED_ALIGN
    unpadded = -(-(routed + busy * (GROUPED_ALIGN - 1)) // GROUPED_ALIGN) * GROUPED_ALIGN
    return max(GROUPED_ALIGN, min(unpadded, busy * per_expert))


def contiguous_layout(counts: torch.Tensor, routed: int):
    """On the device, from counts (E,) int64 summing to `routed`: grouped_mm's offsets (E + 1,) and where
    each sorted row goes (routed,): expert g's rows start at first[g], the experts before it padded to 128."""
    padded = (counts + GROUPED_ALIGN - 1) // GROUPED_ALIGN * GROUPED_ALIGN
    first = padded.cumsum(0) - padded                                # (E,) multiples of 128
    offsets = F.pad(first + counts, (1, 0))                          # (E + 1,): offsets[g + 1] = expert g's end
    expert = torch.repeat_interleave(torch.arange(counts.numel(), device=counts.device), counts, output_size=routed)
    rank = torch.arange(routed, device=counts.device) - (counts.cumsum(0) - counts)[expert]
    return offsets, first[expert] + rank                             # (E + 1,), (rows,)


def torch_permute(xf, flat, order, counts, k, rows):
    """grouped_mm's A (rows, hidden) in the contiguous layout, its offsets (E + 1,) and each slot's row in it
    (n·k,), token-major, in torch's ops: about fifteen kernels (contiguous_layout's, the gather, the scatter).
    The rows of A outside the experts' rows are left as allocated: never read back."""
    offsets, dest = contiguous_layout(counts, flat.numel())          # dest: the sorted rows' places
    a = xf.new_empty(rows, xf.shape[1])
    a[dest] = xf[order // k]
    place = torch.empty_like(dest)
    place[order] = dest
    return a, offsets, place


try:  # the permute as one kernel (Triton: torch.compile's own compiler, installed with torch on Linux)
    import triton
    import triton.language as tl
except ImportError:
    triton = None

if triton is not None:
    @triton.jit
    def _permute_kernel(x_ptr, x_pitch, flat_ptr, order_ptr, counts_ptr, a_ptr, offsets_ptr, place_ptr, routed,
                        hidden, E: tl.constexpr, E_POW2: tl.constexpr, TOP_K: tl.constexpr, ALIGN: tl.constexpr,
                        BLOCK_R: tl.constexpr, BLOCK_H: tl.constexpr):
        # Program p: sorted rows p·BLOCK_R ..; each program reads the E counts and computes the padding before
        # each expert itself (E = 128: a few hundred operations), so that one launch does all of it.
        g = tl.arange(0, E_POW2)
        counts = tl.load(counts_ptr + g, mask=g < E, other=0)
        pad = (ALIGN - counts % ALIGN) % ALIGN                                 # expert g's padding rows
        pad_through = tl.cumsum(pad, 0)                                        # padding up to g's, inclusive
        if tl.program_id(0) == 0:  # offsets[g + 1] = expert g's end: its rows and the padding before it
            tl.store(offsets_ptr + 1 + g, tl.cumsum(counts, 0) + pad_through - pad, mask=g < E)
            tl.store(offsets_ptr + g, tl.zeros_like(g), mask=g == 0)
        i = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)                # sorted rows
        live = i < routed
        slot = tl.load(order_ptr + i, mask=live, other=0)                      # token-major slot t·k + j
        expert = tl.load(flat_ptr + slot, mask=live, other=0)
        before = tl.sum(tl.where(g[None, :] < expert[:, None], pad[None, :], 0), axis=1)  # padding before it
        dest = i + before                                                      # the sorted row's place in A
        tl.store(place_ptr + slot, dest, mask=live)
        token = slot // TOP_K
        for h in range(0, hidden, BLOCK_H):
            cols = h + tl.arange(0, BLOCK_H)
            m = live[:, None] & (cols[None, :] < hidden)
            row = tl.load(x_ptr + token[:, None] * x_pitch + cols[None, :], mask=m)
            tl.store(a_ptr + dest[:, None] * hidden + cols[None, :], row, mask=m)


def triton_permute(xf, flat, order, counts, k, rows):
    """torch_permute's three results from one kernel (_permute_kernel): each sorted row's place is its rank
    plus the padding of the experts before its own, and the token's row is copied there. CUDA tensors; xf's rows
    dense (any pitch), flat, order and counts contiguous (as topk, argsort and scatter_add_ give them)."""
    routed, hidden, experts = flat.numel(), xf.shape[1], counts.numel()
    a = xf.new_empty(rows, hidden)
    offsets = counts.new_empty(experts + 1)
    place = counts.new_empty(routed)
    _permute_kernel[(triton.cdiv(routed, 16),)](
        xf, xf.stride(0), flat, order, counts, a, offsets, place, routed, hidden, E=experts,
        E_POW2=triton.next_power_of_2(experts), TOP_K=k, ALIGN=GROUPED_ALIGN, BLOCK_R=16, BLOCK_H=256)
    return a, offsets, place


def choose_permute(xf, moe_permute=None):
    """The permute a step runs where make_ladder_experts was given none: `moe_permute` (gemm_ladder.moe_permute: the
    library's kernel behind a C++ operator, whose eager call skips the dispatcher; the Triton launch cost ~50 µs of
    host time a call in eager mode) where given and xf is on a GPU; else triton_permute where Triton is installed, xf
    is on a GPU and its rows are dense; else torch_permute."""
    if moe_permute is not None and xf.is_cuda:
        return moe_permute
    if triton is not None and xf.is_cuda and xf.stride(1) == 1:
        return triton_permute
    return torch_permute


def permute_name(fn) -> str:
    """The CSV's moe_permute: "gemm_ladder", "triton" or "torch" for the permute a step runs."""
    return {triton_permute if triton is not None else None: "triton", torch_permute: "torch"}.get(fn, "gemm_ladder")


def takes_decode_tile(rows: int, n: int, k: int, sms: int) -> bool:
    """Whether the library's rule (chapter 13's choose_grouped_tile, no host copy of the layout) takes its 16-row
    decode tile for a grouped GEMM of `rows` rows of buffer, N and K on `sms` SMs: K >= 1024 and fewer 64-row
    tiles than SMs (at most rows/64 · N/256 of them). grouped_swiglu has no such tile (it takes 64 rows there)."""
    return k >= 1024 and -(-rows // 64) * (n // 256) < sms


def make_ladder_experts(grouped_mm, permute=None, grouped_swiglu=None, sms=None, moe_permute=None):
    """The experts on gemm_ladder (chapter 13's kernels): the tokens permuted into the padded layout
    (`permute`, or where None choose_permute's: `moe_permute` (gemm_ladder.moe_permute) on a GPU where given, else
    triton_permute where Triton is installed and the tensors are on a GPU, else torch_permute),
    gate+up and SiLU(gate)·up, the down projection on grouped_mm, each slot's output gathered back in one
    index_select. grouped_mm(a, w, offsets, zero_fill=False).

    With `grouped_swiglu` (grouped_swiglu(a, w_interleaved, offsets, zero_fill=False)), gate+up and the activation
    are one launch on the model's interleaved weights (w_gate_up_interleaved: ValueError without them), except
    where the library would run gate+up on its decode tile (takes_decode_tile on `sms` SMs, by default the
    current GPU's): there, and without `grouped_swiglu`, grouped_mm writes gate and up (2F columns) and
    F.silu(gate) * up reads them back (ladder_experts). The returned function's fused(tokens, experts, k, n,
    hidden) says which path a step of that many tokens takes (known from the shapes: a compiled graph holds one), its
    permute_of(xf) which permute a step on xf runs."""
    if grouped_swiglu is not None and sms is None:
        sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count

    def fused(tokens: int, experts: int, k: int, n: int, hidden: int) -> bool:
        rows = padded_rows(tokens * k, experts, tokens)
        return grouped_swiglu is not None and not takes_decode_tile(rows, n, hidden, sms)

    def ladder_experts(xf, flat, order, counts, w_gate_up, w_down, k):
        rows = padded_rows(flat.numel(), w_down.shape[0], xf.shape[0])
        fn = permute_of(xf)
        a, offsets, place = fn(xf, flat, order, counts, k, rows)          # (rows, hidden), (E + 1,), (n·k,)
        gate, up = grouped(a, w_gate_up, offsets).chunk(2, dim=-1)   # (rows, F) each
        return grouped(F.silu(gate) * up, w_down, offsets).index_select(0, place)  # (n·k, hidden) token-major

    def experts(xf, flat, order, counts, w_gate_up, w_down, k, w_gate_up_interleaved=None):
        if not fused(xf.shape[0], w_down.shape[0], k, w_gate_up.shape[1], xf.shape[1]):
            return ladder_experts(xf, flat, order, counts, w_gate_up, w_down, k)
        if w_gate_up_interleaved is None:
            raise ValueError("the fused experts (grouped_swiglu) read the gate+up weights interleaved by 128: build "
                             "the model with Decoder(..., interleave_gate_up=gemm_ladder.interleave_gate_up)")
        rows = padded_rows(flat.numel(), w_down.shape[0], xf.shape[0])
        fn = permute_of(xf)
        a, offsets, place = fn(xf, flat, order, counts, k, rows)                  # (rows, hidden), (E + 1,), (n·k,)
        h = grouped_swiglu(a, w_gate_up_interleaved, offsets, zero_fill=False)    # (rows, F): SiLU(gate)·up
        return grouped(h, w_down, offsets).index_select(0, place)                 # (n·k, hidden) token-major

    def grouped(a, w, offsets):  # rows outside the experts' tiles are never read back: no memset of them
        return grouped_mm(a, w, offsets, zero_fill=False)

    def permute_of(xf):
        return permute or choose_permute(xf, moe_permute)

    experts.fused = fused
    experts.permute_of = permute_of
    return experts


class MoE(nn.Module):
    """Qwen3-MoE's sparse block: a softmax router over E experts, the top k renormalized, each expert a
    SwiGLU of expert_ffn; the tokens' outputs are their experts' weighted sum."""

    def __init__(self, cfg: Config, device, generator, interleave_gate_up=None):
        super().__init__()
        self.cfg, E, F_, H = cfg, cfg.experts, cfg.expert_ffn, cfg.hidden
        self.w_router = random_weight(E, H, device, generator)                          # (128, 2048)
        self.w_gate_up = random_weight(2 * F_, H, device, generator, experts=E)          # (128, 1536, 2048)
        self.w_down = random_weight(H, F_, device, generator, experts=E)                # (128, 2048, 768)
        # grouped_swiglu's order of w_gate_up (interleave_gate_up: gemm_ladder's), made once here, or None; a
        # buffer, not a parameter: the same weights, counted once
        interleaved = None if interleave_gate_up is None else interleave_gate_up(self.w_gate_up.detach())
        self.register_buffer("w_gate_up_interleaved", interleaved, persistent=False)  # (128, 1536, 2048)

    def forward(self, x, experts):
        return moe_forward(self.cfg, x, self.w_router, self.w_gate_up, self.w_down, experts, self.w_gate_up_interleaved)


def moe_forward(cfg: Config, x, w_router, w_gate_up, w_down, experts, w_gate_up_interleaved=None):
    """MoE.forward on given weights (a function of tensors, so that a test can export it alone)."""
    B, T, H = x.shape
    k, xf = cfg.experts_per_token, x.reshape(B * T, H)                                # (n, H)
    probs = F.linear(xf, w_router).float().softmax(dim=-1)                            # (n, E), torch's always
    weights, chosen = probs.topk(k, dim=-1)                                           # (n, k)
    weights = weights / weights.sum(dim=-1, keepdim=True)
    flat = chosen.flatten()                                                           # (n·k,) row t·k + j
    order = flat.argsort(stable=True)                                                 # (n·k,) sorted by expert
    counts = torch.zeros(cfg.experts, dtype=torch.int64, device=x.device).scatter_add_(
        0, flat, torch.ones_like(flat))                                               # (E,)
    y = experts(xf, flat, order, counts, w_gate_up, w_down, k, w_gate_up_interleaved)  # (n·k, H) token-major
    y = (y.view(B * T, k, H).float() * weights.unsqueeze(-1)).sum(dim=1)              # (n, H)
    return y.to(x.dtype).view(B, T, H)

class Block(nn.Module):
    def __init__(self, cfg: Config, device, generator, interleave_gate_up=None):
        super().__init__()
        self.attn_norm, self.attn = RMSNorm(cfg, device), Attention(cfg, device, generator)
        self.mlp_norm = RMSNorm(cfg, device)
        self.mlp = MoE(cfg, device, generator, interleave_gate_up) if cfg.experts else MLP(cfg, device, generator)

    def forward(self, x, k_cache, v_cache, pos, cos, sin, linear, experts=torch_experts):
        x = x + self.attn(self.attn_norm(x), k_cache, v_cache, pos, cos, sin, linear)
        if isinstance(self.mlp, MoE):
            return x + self.mlp(self.mlp_norm(x), experts)
        return x + self.mlp(self.mlp_norm(x), linear)


class Decoder(nn.Module):
    """tokens (B, T) at positions pos .. pos+T-1 -> the last position's logits (B, vocab); writes
    the tokens' keys and values into the cache. `linear(x, weight)` computes every linear layer and,
    with cfg.experts, `experts(...)` the experts' GEMMs (torch_experts, or make_ladder_experts').
    `interleave_gate_up` (gemm_ladder.interleave_gate_up), with cfg.experts: each MoE layer also keeps its
    gate+up weights in grouped_swiglu's order, made once here (the fused experts read them)."""

    def __init__(self, cfg: Config, device, seed: int = 0, linear=torch_linear, experts=torch_experts,
                 interleave_gate_up=None):
        super().__init__()
        g = torch.Generator(device=device).manual_seed(seed)
        self.cfg, self.linear, self.experts = cfg, linear, experts
        self.embed = nn.Parameter(torch.empty(cfg.vocab, cfg.hidden, device=device, dtype=torch.bfloat16)
                                  .normal_(0.0, 1.0, generator=g), requires_grad=False)
        self.blocks = nn.ModuleList(Block(cfg, device, g, interleave_gate_up) for _ in range(cfg.layers))
        self.norm = RMSNorm(cfg, device)
        self.lm_head = random_weight(cfg.vocab, cfg.hidden, device, g)  # (128256, 4096)
        cos, sin = rope_tables(cfg, device)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, tokens: torch.Tensor, cache: KVCache, pos: int) -> torch.Tensor:
        T = tokens.shape[1]
        cos, sin = self.cos[pos:pos + T], self.sin[pos:pos + T]  # (T, D)
        x = F.embedding(tokens, self.embed)                      # (B, T, hidden)
        for i, block in enumerate(self.blocks):
            x = block(x, cache.k[i], cache.v[i], pos, cos, sin, self.linear, self.experts)
        x = self.norm(x[:, -1:])                                 # (B, 1, hidden): the last position only
        return self.linear(x, self.lm_head)[:, 0]                # (B, vocab)


# --- The backends and the measurement ---------------------------------------------------------------

@dataclass(frozen=True)
class Backend:
    name: str
    linear: str        # "torch" or "gemm_ladder"
    compile_mode: str  # "eager", "default", "reduce-overhead" or "max-autotune"


BACKENDS = [Backend("torch_eager", "torch", "eager"), Backend("ours_eager", "gemm_ladder", "eager"),
            Backend("torch_compile", "torch", "default"), Backend("ours_compile", "gemm_ladder", "default"),
            Backend("torch_reduce_overhead", "torch", "reduce-overhead"),
            Backend("ours_reduce_overhead", "gemm_ladder", "reduce-overhead"),
            Backend("torch_max_autotune", "torch", "max-autotune")]
PEERS = ("torch_eager", "torch_compile", "torch_reduce_overhead")  # the CSV's pct_of_<peer> columns
REFERENCE = "torch_eager"

# One row per backend and phase. tokens: tokens per step (the prefill's length, or the decode batch);
# context: tokens already in the KV cache; ms: a step's median; pct_of_*: tokens/s as % of that torch
# backend's in the same phase and batch; max_abs_diff: the largest |logit - torch_eager's logit|,
# max_rel_diff: that over the largest |torch_eager's logit|; compile_s: the first call's wall time
# (tracing, compiling, autotuning) of a compiled backend. moe_layer_rel_diff (--moe only): the first MoE
# layer on the step's own tokens, the same input and so the same routing for every backend, against
# torch_eager's experts, over the largest |output|; with --moe, within_tolerance judges it, not the logits.
# rounds: how many rounds timed the row (--reps turns each); steps_per_turn: the steps a turn ran back to back
# (a turn's time is theirs over this many: 1, a step's own time from an idle GPU; more, throughput);
# median_ms and min_ms are over all the turns' times, round_min_ms and round_max_ms the fastest and slowest
# round's median (the spread of the run). moe_swiglu (--moe, gemm_ladder's rows): "fused" where gate+up and
# SiLU(gate)·up ran as one grouped_swiglu, "unfused" where grouped_mm and F.silu(gate) * up did (--unfused-swiglu,
# or the decode tile's steps). moe_permute (--moe, gemm_ladder's rows): the permute that ran, "gemm_ladder"
# (gemm_ladder.moe_permute), "triton" (--triton-permute: triton_permute) or "torch" (torch_permute).
CSV_COLUMNS = ["backend", "linear", "compile_mode", "phase", "batch", "tokens", "context", "layers",
               "median_ms", "min_ms", "tokens_per_s", "pct_of_torch_eager", "pct_of_torch_compile",
               "pct_of_torch_reduce_overhead",
               "max_abs_diff", "max_rel_diff", "tolerance_rel", "within_tolerance", "compile_s",
               "gpu", "torch_version", "timestamp", "moe_layer_rel_diff", "rounds", "round_min_ms", "round_max_ms",
               "steps_per_turn", "moe_swiglu", "moe_permute"]

# bf16 keeps 8 significant bits: one rounding moves a value by up to 2^-8 of it. The logits pass
# through 4·layers + 1 GEMMs, each rounded to bf16, whose K cuBLAS and every_shape may sum in other
# orders: on a CPU, this model's 4 layers summed in two orders differ by 0.0098 of the largest logit.
# 2^-5 (0.031) leaves three times that; a wrong tile or a lost K slice is far beyond it.
# An MoE model's logits are no such test: where a token's 8th and 9th experts score within a rounding
# of each other, a backend's bf16 rounding picks the other one, and the token's output moves by a whole
# expert's share (torch's own compiled model differs from its eager one by 0.13 of the largest logit).
# So with --moe the tolerance is applied to one MoE layer on a shared input (moe_layer_rel_diff), and the
# logits' difference is reported beside it.
TOLERANCE_REL = 2.0 ** -5


@dataclass(frozen=True)
class Phase:
    name: str     # "prefill" or "decode"
    batch: int
    tokens: int   # per step
    context: int  # already in the cache


def phases_of(args) -> list[Phase]:
    return ([Phase("prefill", 1, args.prefill_tokens, 0)]
            + [Phase("decode", b, b, args.context) for b in args.decode_batches])


class Workload:
    """One phase's inputs and cache, the same for every backend: random tokens; for decode, a cache
    filled once with the keys and values of `context` random tokens (by torch_eager's prefill)."""

    def __init__(self, model: Decoder, phase: Phase, seed: int, device):
        cfg, g = model.cfg, torch.Generator(device=device).manual_seed(seed + 1000 * phase.batch + phase.context)
        self.phase = phase
        if phase.name == "prefill":
            self.cache = KVCache(cfg, 1, phase.tokens, device)
            self.tokens = torch.randint(0, cfg.vocab, (1, phase.tokens), device=device, generator=g)
            self.pos = 0
        else:
            self.cache = KVCache(cfg, phase.batch, phase.context + 1, device)
            context = torch.randint(0, cfg.vocab, (phase.batch, phase.context), device=device, generator=g)
            with torch.no_grad():
                kernels = model.linear, model.experts
                model.linear, model.experts = torch_linear, torch_experts
                model(context, self.cache, 0)
                model.linear, model.experts = kernels
            self.tokens = torch.randint(0, cfg.vocab, (phase.batch, 1), device=device, generator=g)
            self.pos = phase.context  # every step writes and reads the same position: all steps alike

    def step(self, fn) -> torch.Tensor:
        return fn(self.tokens, self.cache, self.pos)


def interleaved_times_ms(steps: dict, warmup: int, reps: int, flip: bool = False, per_turn: int = 1) -> dict:
    """{name: `reps` times in ms} for each of `steps` (name -> a callable running one step), on the GPU's
    stream by CUDA events, after `warmup` steps of each. The backends take turns: turn i runs every
    backend once, in the given order for even i and reversed for odd (`flip` swaps the two), so that a host
    whose speed swings for seconds at a time swings under every backend alike (a compiled decode step at
    batch 1 took 1.1 ms in one block of 30 and 1.6 ms in the next, with the same code: the profile of
    session 2026-11-30m). A turn starts on an idle GPU (synchronized before it) and runs `per_turn` steps
    back to back; its time is theirs divided by `per_turn`, waits for the host included. With one step a
    turn (the default), a host-bound step costs all its host time; with several, the later steps' launches
    overlap the earlier ones' kernels as in a serving loop (throughput). Either way no turn is shortened by
    the previous backend's work still queued ahead of it (back to back across backends, an eager step
    issued behind a compiled one's queued kernels has launches queued before its start event runs: torch's
    eager decode at batch 64 timed 1.55 ms that way, 3.98 ms in blocks of its own steps)."""
    for step in steps.values():
        for _ in range(warmup):
            step()
    names = list(steps)
    events = {name: [] for name in names}
    for i in range(reps):
        for name in (names if (i % 2 == 0) != flip else names[::-1]):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            for _ in range(per_turn):
                steps[name]()
            end.record()
            events[name].append((start, end))
    torch.cuda.synchronize()
    return {name: [start.elapsed_time(end) / per_turn for start, end in pairs] for name, pairs in events.items()}


def load_gemm_ladder():
    """gemm_ladder's linear, checked once on a small product; SystemExit with one line if it cannot run."""
    try:
        import gemm_ladder
    except Exception as e:  # ImportError, or OSError from loading the library
        raise SystemExit(f"llama_decoder: cannot load gemm_ladder ({type(e).__name__}: {e}); build the library "
                         "and run from the repository root with PYTHONPATH=python (docs/use_the_kernels.md)")
    try:
        x = torch.randn(16, 256, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(128, 256, device="cuda", dtype=torch.bfloat16)
        ref = F.linear(x, w).float()
        err = ((gemm_ladder.linear(x, w).float() - ref).abs().max() / ref.abs().max()).item()
    except Exception as e:
        raise SystemExit(f"llama_decoder: gemm_ladder.linear cannot run here ({type(e).__name__}: {e})")
    if not err <= 2.0 ** -6:  # a few bf16 roundings of the largest value; NaN fails too
        raise SystemExit(f"llama_decoder: gemm_ladder.linear differs from torch by {err:.3g} of the largest value "
                         "on a 16×128×256 product")
    return gemm_ladder.linear


def load_ladder_experts(fused: bool = True, use_triton_permute: bool = False):
    """The experts on gemm_ladder (make_ladder_experts: grouped_swiglu and grouped_mm, or with fused=False grouped_mm
    and F.silu(gate) * up; the permute gemm_ladder.moe_permute, or with use_triton_permute (or a package without it)
    choose_permute's other choices: the Triton kernel where installed), checked once against torch_experts on 8 experts of 256 and 150 tokens routed to 2 each
    (expert 0 over a 128-row tile, expert 1 without rows), the unfused path too when fused (a decode step may take
    it); SystemExit with one line if it cannot run (load_gemm_ladder has imported the package)."""
    import gemm_ladder
    permute = None if use_triton_permute else getattr(gemm_ladder, "moe_permute", None)
    experts = make_ladder_experts(gemm_ladder.grouped_mm, grouped_swiglu=gemm_ladder.grouped_swiglu if fused else None,
                                  moe_permute=permute)
    checked = [("grouped_swiglu and grouped_mm", experts)] if fused else []
    checked.append(("grouped_mm", make_ladder_experts(gemm_ladder.grouped_mm, moe_permute=permute)))
    for what, fn in checked:
        try:
            g = torch.Generator(device="cuda").manual_seed(7)
            t = torch.arange(150, device="cuda")
            chosen = torch.stack([torch.where(t < 130, 0, 2 + t % 6), 2 + (t + 1) % 6], dim=1)  # (150, 2), distinct
            flat = chosen.flatten()
            order = flat.argsort(stable=True)
            counts = torch.bincount(flat, minlength=8)
            xf = torch.randn(150, 256, device="cuda", dtype=torch.bfloat16, generator=g)
            w_gate_up = torch.randn(8, 512, 256, device="cuda", dtype=torch.bfloat16, generator=g) / 16
            w_down = torch.randn(8, 256, 256, device="cuda", dtype=torch.bfloat16, generator=g) / 16
            ref = torch_experts(xf, flat, order, counts, w_gate_up, w_down, 2).float()
            got = fn(xf, flat, order, counts, w_gate_up, w_down, 2, gemm_ladder.interleave_gate_up(w_gate_up)).float()
            err = ((got - ref).abs().max() / ref.abs().max()).item()
        except Exception as e:
            raise SystemExit(f"llama_decoder: the experts on gemm_ladder ({what}) cannot run here ({type(e).__name__}: {e})")
        if not err <= 2.0 ** -5:  # two GEMMs and a SwiGLU rounded to bf16; NaN fails too
            raise SystemExit(f"llama_decoder: the experts on gemm_ladder ({what}) differ from torch's by {err:.3g} of "
                             "the largest value on 8 experts of 256")
    return experts


def make_runner(model: Decoder, backend: Backend, linears: dict, experts: dict | None = None):
    """The callable that runs a step for `backend`: the model itself, or torch.compile of it. Every call
    first puts the backend's linear (and experts) into the model, so that the backends' runners can take
    turns: a compiled one's graph guards on them, and dynamo keeps one graph per backend and step."""
    linear = linears[backend.linear]
    expert_fn = None if experts is None else experts[backend.linear]

    def bind():
        model.linear = linear
        if expert_fn is not None:
            model.experts = expert_fn
    bind()
    if backend.compile_mode == "eager":
        def run_eager(tokens, cache, pos):
            bind()
            return model(tokens, cache, pos)
        return run_eager
    mode = None if backend.compile_mode == "default" else backend.compile_mode
    compiled = torch.compile(model, fullgraph=True, dynamic=False, mode=mode)

    def run(tokens, cache, pos):
        bind()
        torch.compiler.cudagraph_mark_step_begin()  # a new step: outputs of the last may be reused
        return compiled(tokens, cache, pos)
    return run


def moe_layer_check(model: Decoder, backend: Backend, experts: dict):
    """check(workload) -> the first MoE layer's output (float) on the workload's tokens, embedded and
    normalized (the same input for every backend, hence the same routing), computed as `backend` runs it:
    eager, or compiled as its own graph."""
    layer, norm, fn = model.blocks[0].mlp, model.blocks[0].mlp_norm, experts[backend.linear]

    def run(x):
        return layer(x, fn)
    if backend.compile_mode != "eager":
        run = torch.compile(run, fullgraph=True, dynamic=False,
                            mode=None if backend.compile_mode == "default" else backend.compile_mode)

    def check(w: Workload) -> torch.Tensor:
        x = norm(F.embedding(w.tokens, model.embed))  # (B, T, hidden)
        return run(x).float()
    return check


def add_comparisons(rows: list[dict]) -> None:
    """Each row's tokens/s as % of each peer's (PEERS) at the same phase and batch."""
    for r in rows:
        for peer in PEERS:
            base = next((b for b in rows if b["backend"] == peer and (b["phase"], b["batch"]) == (r["phase"], r["batch"])), None)
            r[f"pct_of_{peer}"] = None if base is None else 100.0 * r["tokens_per_s"] / base["tokens_per_s"]


def measure(args, cfg: Config, device, after_round=lambda rows: None) -> list[dict]:
    """Every backend at every phase: the CSV's rows. First each backend's first call (its compile) and its
    logits' difference; then --rounds rounds in which every phase times every backend, the backends taking
    turns (interleaved_times_ms; the order reversed every other round), so that a drift of the host or the
    GPU during the run falls on all backends alike. A row's median_ms is the median of its turns' step
    times over all rounds, round_min_ms and round_max_ms the fastest and slowest round's median. after_round(rows) runs after each round (the
    script writes the CSV there, so that a stopped run keeps what it measured)."""
    import torch._dynamo
    for name in ("recompile_limit", "cache_size_limit"):  # one graph per compiled backend and phase
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, max(64, getattr(torch._dynamo.config, name)))
    linears, experts = {"torch": torch_linear}, ({"torch": torch_experts} if cfg.experts else None)
    backends = [b for b in BACKENDS if b.name in args.backends]
    interleave = None  # gemm_ladder.interleave_gate_up where the fused experts run
    if any(b.linear == "gemm_ladder" for b in backends):
        linears["gemm_ladder"] = load_gemm_ladder()
        if cfg.experts:
            experts["gemm_ladder"] = load_ladder_experts(fused=not args.unfused_swiglu,
                                                         use_triton_permute=args.triton_permute)
            if not args.unfused_swiglu:
                import gemm_ladder
                interleave = gemm_ladder.interleave_gate_up
    t0 = time.perf_counter()
    model = Decoder(cfg, device, seed=args.seed, interleave_gate_up=interleave)
    workloads = [Workload(model, p, args.seed, device) for p in phases_of(args)]
    torch.cuda.synchronize()
    log(f"model: {cfg.layers} layers at hidden {cfg.hidden}, "
        f"{sum(p.numel() for p in model.parameters()) / 1e9:.2f} B parameters, built in {time.perf_counter() - t0:.1f} s")
    gpu, version = torch.cuda.get_device_name(), torch.__version__
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    reference, layer_reference, first = {}, {}, {}
    runners = {}
    for backend in backends:  # the first calls: compile, then check against torch_eager
        fn = runners[backend.name] = make_runner(model, backend, linears, experts)
        layer_check = moe_layer_check(model, backend, experts) if cfg.experts else None
        for w in workloads:
            p = w.phase
            t = time.perf_counter()
            logits = w.step(fn).float()  # the first call: compiles, for a compiled backend
            torch.cuda.synchronize()
            first_s = time.perf_counter() - t
            key = (p.name, p.batch)
            if backend.name == REFERENCE:
                reference[key] = logits
            ref = reference.get(key)
            abs_diff = rel_diff = None
            if ref is not None:
                abs_diff = (logits - ref).abs().max().item()
                rel_diff = abs_diff / ref.abs().max().item()
            layer_diff = None
            if layer_check is not None:
                out = layer_check(w)
                if backend.name == REFERENCE:
                    layer_reference[key] = out
                if key in layer_reference:
                    ref_out = layer_reference[key]
                    layer_diff = ((out - ref_out).abs().max() / ref_out.abs().max()).item()
            first[(backend.name, key)] = (first_s, abs_diff, rel_diff, layer_diff)
            log(f"{backend.name:>18} {p.name:>7} batch {p.batch:>3}: first call {first_s:.1f} s")
            del logits
    times = {k: [] for k in first}  # (backend, phase key) -> each round's turns' step times
    rows = []
    for r in range(args.rounds):
        for w in workloads:
            steps = {b.name: (lambda fn=runners[b.name], w=w: w.step(fn)) for b in backends}
            timed = interleaved_times_ms(steps, args.warmup, args.reps, r % 2 == 1, args.steps_per_turn)
            for name, ms in timed.items():
                times[(name, (w.phase.name, w.phase.batch))].append(ms)
        rows = []
        for backend in backends:
            for w in workloads:
                p, key = w.phase, (w.phase.name, w.phase.batch)
                first_s, abs_diff, rel_diff, layer_diff = first[(backend.name, key)]
                rounds = times[(backend.name, key)]
                ms = statistics.median([t for steps in rounds for t in steps])
                judged = rel_diff if not cfg.experts else layer_diff
                swiglu = permute = None
                if cfg.experts and backend.linear == "gemm_ladder":
                    permute = permute_name(experts["gemm_ladder"].permute_of(w.tokens))  # a CUDA tensor, as xf is
                    fused = experts["gemm_ladder"].fused(p.tokens, cfg.experts, cfg.experts_per_token, 2 * cfg.expert_ffn,
                                                         cfg.hidden)
                    swiglu = "fused" if fused else "unfused"
                rows.append(dict(
                    backend=backend.name, linear=backend.linear, compile_mode=backend.compile_mode, phase=p.name,
                    batch=p.batch, tokens=p.tokens, context=p.context, layers=cfg.layers, median_ms=ms,
                    min_ms=min(t for steps in rounds for t in steps), tokens_per_s=p.tokens / (ms / 1e3),
                    max_abs_diff=abs_diff, max_rel_diff=rel_diff, tolerance_rel=TOLERANCE_REL,
                    within_tolerance=None if judged is None else ("yes" if judged <= TOLERANCE_REL else "no"),
                    compile_s=None if backend.compile_mode == "eager" else first_s,
                    gpu=gpu, torch_version=version, timestamp=stamp, moe_layer_rel_diff=layer_diff,
                    rounds=len(rounds), round_min_ms=min(statistics.median(s) for s in rounds),
                    round_max_ms=max(statistics.median(s) for s in rounds), steps_per_turn=args.steps_per_turn,
                    moe_swiglu=swiglu, moe_permute=permute))
        add_comparisons(rows)
        log(f"round {r + 1} of {args.rounds}: " + ", ".join(
            f"{x['backend']} {x['phase']} b{x['batch']} {x['median_ms']:.3f} ms" for x in rows))
        after_round(rows)
    model.linear, model.experts = torch_linear, torch_experts
    return rows


# --- Output -----------------------------------------------------------------------------------------

def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def csv_value(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def write_csv(path: str, rows: list[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(CSV_COLUMNS)
        for r in rows:
            out.writerow([csv_value(r.get(c)) for c in CSV_COLUMNS])


def table(rows: list[dict]) -> str:
    def pct(v):
        return "–" if v is None else f"{v:.1f}%"
    head = ["backend", "phase", "batch", "ms/step", "tokens/s", "% torch eager", "% torch compile",
            "% torch graphs", "max |Δ logit|", "rel", "compile s"]
    body = [[r["backend"], r["phase"], str(r["batch"]), f"{r['median_ms']:.3f}", f"{r['tokens_per_s']:,.0f}",
             *(pct(r.get(f"pct_of_{peer}")) for peer in PEERS),
             "–" if r["max_abs_diff"] is None else f"{r['max_abs_diff']:.3g}",
             "–" if r["max_rel_diff"] is None else f"{r['max_rel_diff']:.2g}",
             "–" if r["compile_s"] is None else f"{r['compile_s']:.1f}"] for r in rows]
    if any(r.get("moe_layer_rel_diff") is not None for r in rows):
        head.append("MoE layer rel")
        for line, r in zip(body, rows):
            line.append("–" if r.get("moe_layer_rel_diff") is None else f"{r['moe_layer_rel_diff']:.2g}")
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = ["  ".join(x.rjust(w) for x, w in zip(line, widths)) for line in [head] + body]
    return "\n".join(lines)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="A Llama-3-8B-shaped decoder on gemm_ladder's kernels against torch's "
                                            "matmul: prefill and decode tokens/s, and the logits' difference.")
    p.add_argument("--layers", type=int, help="decoder layers (default 4, 2 with --tiny; Llama-3-8B has 32)")
    p.add_argument("--prefill-tokens", type=int, default=4096, help="tokens of the prefill, batch 1 (default 4096)")
    p.add_argument("--decode-batches", type=lambda s: [int(x) for x in s.split(",")], default=[1, 64],
                   help="decode batch sizes, comma-separated (default 1,64)")
    p.add_argument("--context", type=int, default=512, help="tokens in the KV cache before a decode step (default 512)")
    p.add_argument("--backends", type=lambda s: s.split(","), default=[b.name for b in BACKENDS],
                   help="comma-separated subset of " + ", ".join(b.name for b in BACKENDS) + f" ({REFERENCE} always runs)")
    p.add_argument("--skip-autotune", action="store_true", help="leave out torch_max_autotune (minutes of compiling)")
    p.add_argument("--warmup", type=int, default=5, help="steps before timing (default 5)")
    p.add_argument("--reps", type=int, default=30, help="timed turns of each backend a round (default 30)")
    p.add_argument("--steps-per-turn", type=int, default=1,
                   help="steps a backend runs back to back in its turn, from an idle GPU (default 1: each step's own "
                        "time, host included; more: throughput, the host's launches overlapping the kernels); each "
                        "of --reps turns gives one time, theirs over this many")
    p.add_argument("--rounds", type=int, default=3,
                   help="rounds, each timing every backend in turn (default 3); the median of all steps is reported")
    p.add_argument("--seed", type=int, default=0, help="weights' and tokens' seed (default 0)")
    p.add_argument("--tiny", action="store_true", help="hidden 256, 2 layers, vocabulary 1024: a smoke run")
    p.add_argument("--moe", action="store_true",
                   help="Qwen3-30B-A3B's layers instead: 128 experts of 768, top 8, hidden 2048, the experts on "
                        "gemm_ladder.grouped_swiglu and grouped_mm against torch._grouped_mm (with --tiny: 8 experts "
                        "of 256, top 2)")
    p.add_argument("--unfused-swiglu", action="store_true",
                   help="with --moe: our experts' gate+up on grouped_mm, then F.silu(gate) * up (the path before "
                        "grouped_swiglu, for an A/B), instead of grouped_swiglu's one launch")
    p.add_argument("--triton-permute", action="store_true",
                   help="with --moe: our experts permute the tokens with the Triton kernel (triton_permute, the path "
                        "before gemm_ladder.moe_permute, for an A/B) instead of the library's")
    p.add_argument("--csv", help="write the rows here (columns: see CSV_COLUMNS in this file)")
    args = p.parse_args(argv)
    known = {b.name for b in BACKENDS}
    unknown = [b for b in args.backends if b not in known]
    if unknown:
        p.error(f"--backends: unknown {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    if args.skip_autotune:
        args.backends = [b for b in args.backends if b != "torch_max_autotune"]
    if REFERENCE not in args.backends:
        args.backends = [REFERENCE] + args.backends
    for name in ("layers", "prefill_tokens", "context", "reps", "rounds", "steps_per_turn"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.warmup < 0 or any(b < 1 for b in args.decode_batches):
        p.error("--warmup must be >= 0 and every --decode-batches entry >= 1")
    return args


def config_of(args) -> Config:
    """The model --tiny and --moe ask for, --layers of it."""
    cfg = {(False, False): LLAMA3_8B, (True, False): TINY, (False, True): QWEN3_30B_A3B, (True, True): TINY_MOE}[
        (bool(args.tiny), bool(args.moe))]
    return dataclasses.replace(cfg, layers=args.layers or cfg.layers)


def main(argv=None) -> int:
    args = parse_args(argv)
    cfg = config_of(args)
    if max(args.prefill_tokens, args.context + 1) > cfg.max_positions:
        cfg = dataclasses.replace(cfg, max_positions=max(args.prefill_tokens, args.context + 1))
    if not torch.cuda.is_available():
        print("llama_decoder: no CUDA GPU visible to torch "
              f"(torch {torch.__version__}, built for CUDA {torch.version.cuda}): it measures on a GPU", file=sys.stderr)
        return 2
    if args.csv:
        try:
            open(args.csv, "a", encoding="utf-8").close()
        except OSError as e:
            print(f"llama_decoder: --csv {args.csv} cannot be written ({e.strerror})", file=sys.stderr)
            return 2
    def checkpoint(rows):
        if args.csv:
            write_csv(args.csv, rows)
    try:
        with torch.no_grad():
            rows = measure(args, cfg, torch.device("cuda"), checkpoint)
    except SystemExit as e:
        print(e.code, file=sys.stderr)
        return 2
    print()
    print(table(rows))
    if args.csv:
        print(f"\nwrote {args.csv}")
    outside = [r for r in rows if r["within_tolerance"] == "no"]
    for r in outside:
        what, diff = (("its first MoE layer differs", r["moe_layer_rel_diff"]) if cfg.experts
                      else ("logits differ", r["max_rel_diff"]))
        print(f"llama_decoder: {r['backend']} {r['phase']} batch {r['batch']}: {what} from {REFERENCE}'s by "
              f"{diff:.3g} of the largest value, more than the bf16 tolerance {TOLERANCE_REL:.3g}", file=sys.stderr)
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())
