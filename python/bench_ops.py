"""How much the Python layer costs: per call, the op's time against its kernel's, and its host overhead
against torch.mm's. On an sm_90a GPU with torch:

    PYTHONPATH=python python python/bench_ops.py --out $OUT [--chapter-csv plots/data/h200/ch11_every_shape.csv]

For each problem (bf16 RCR, C = A·Bᵀ: 4096³, and the decode shape M = 1, N = K = 4096) and each way of
calling (the rows' `variant`):

  library_out     gemm_ladder.mm(a, w.t(), out=c): the direct path, no allocation
  library         gemm_ladder.mm(a, w.t()): allocates C with torch.empty, as torch.mm does
  custom_op       torch.ops.gemm_ladder.mm (the dispatcher, then the same path)
  compiled        torch.compile(fullgraph=True) of a function calling gemm_ladder.mm (with --compiled)
  cuda_graph      a CUDA graph of the library_out calls (captured on a stream the calls were warmed up
                  on, so the prepared GEMM is found, not made, during the capture): no host work at all
  torch_mm        torch.mm(a, w.t()): cuBLAS through torch, the reference for host overhead

the columns are
  kernel_us        the GPU time of the kernels one call launches (CUPTI, through torch.profiler), mean over
                   `reps` calls run back to back
  op_us            the time per call on the GPU in that same loop: from the first kernel's start to the
                   last one's end, over `reps`: the kernel time plus whatever the GPU waited for the host
  op_vs_kernel_pct op_us / kernel_us - 1, in %: 0 when the host keeps ahead of the GPU (both from one
                   loop, so at the same clocks)
  host_us          CPU time per call (perf_counter over `host_reps` calls issued after a synchronize, the
                   queue never full): what the Python layer, ctypes, the library and the launch cost
  flushed_us       the chapter binary's method applied to the call: L2 flushed before each call, CUDA
                   events around one call, median of `flushed_reps`
  chapter_us       the chapter binary's median for every_shape at this problem (its CSV: the same method
                   on the kernel alone, another run), and op_vs_chapter_pct = flushed_us / chapter_us - 1
  path             the library's path (gemm_ladder.last_path()), or the cuBLAS kernels' names

The CSV goes to <out>/bench_ops.csv; a table to stdout.

With --grouped, instead: one mixture-of-experts projection, Qwen3-30B-A3B's gate+up (128 experts, N = 1536,
K = 2048) at 4096 tokens routed top-8 from seeded random scores (32,768 routed rows), against a loop of
one torch.mm per expert, as a model without a grouped kernel runs it:

  grouped_out      gemm_ladder.grouped_mm(x, w, offsets, out=c): x in the contiguous layout (each expert
                   from a multiple of 128 rows), no allocation
  grouped          gemm_ladder.grouped_mm(x, w, offsets): allocates C zero-filled (one more kernel)
  custom_op        torch.ops.gemm_ladder.grouped_mm(x, w, offsets)
  cuda_graph       a CUDA graph of the grouped_out calls
  torch_loop       torch.mm(x_g, w[g].t()) for each expert, on the unpadded rows (slices the host already
                   knows: the .tolist() of the counts a real loop needs is not timed)
  torch_grouped_mm torch._grouped_mm(x, w.transpose(1, 2), offs): torch's own grouped GEMM on the unpadded
                   rows (int32 ends), where this torch has it
  swiglu_out       gemm_ladder.grouped_swiglu(x, w_interleaved, offsets, out=h): the same GEMM with SiLU(gate)·up
                   in its epilogue (chapter 13's step 3), h of N / 2 = 768 columns
  mm_silu_out      grouped_out, then torch.mul(F.silu(gate), up, out=h) on its two halves: the unfused way
                   (eager: a SiLU and a multiply kernel over every row of the buffer, padding included)

with the columns above (M: the routed rows; chapter_us empty: chapter 13 routes differently).
"""

from __future__ import annotations

import argparse
import csv
import os
import pathlib
import statistics
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gemm_ladder  # noqa: E402

PROBLEMS = [("square", 4096, 4096, 4096), ("decode", 1, 4096, 4096)]


def profiled_loop_us(fn, reps, calls_per_fn=1):
    """(kernel µs per call, GPU period µs per call, kernel names) of `reps` back-to-back calls of `fn`
    (each making `calls_per_fn` calls), from the kernels' own start and end times (CUPTI)."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    busy, first, last, names = 0.0, None, None, set()
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA or "memcpy" in e.name.lower() or "memset" in e.name.lower():
            continue
        busy += e.time_range.end - e.time_range.start
        first = e.time_range.start if first is None else min(first, e.time_range.start)
        last = e.time_range.end if last is None else max(last, e.time_range.end)
        names.add(e.name)
    calls = reps * calls_per_fn
    return busy / calls, (last - first) / calls if names else 0.0, sorted(names)


def flushed_us(fn, reps, flush):
    """The chapter binary's method (harness/timing.cu): L2 flushed before each call by *reading* `flush`,
    twice the L2 (a write would leave the L2 full of dirty lines that the timed kernel then pays to write
    back: 20% more at 4096^3 in this script's first version), CUDA events around the one call; the median
    over `reps`."""
    pairs = []
    for _ in range(reps):
        flush.sum(dtype=torch.int64)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) * 1000 for s, e in pairs)


def host_time_us(fn, reps, rounds=7):
    """Median over `rounds` of the CPU time per call of `reps` calls issued after a synchronize."""
    times = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        times.append((time.perf_counter() - t0) * 1e6 / reps)
    torch.cuda.synchronize()
    return statistics.median(times)


def graph_of(fn, reps):
    """A CUDA graph of `reps` calls of `fn`, captured on a stream `fn` was first warmed up on."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()  # prepares the GEMM for this stream: the capture only finds it
    stream.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for _ in range(reps):
            fn()
    return graph


def measure_variants(variants, graph_variant, args, flush, host_reps=None):
    """Each variant (name -> fn) and a CUDA graph of `graph_variant` replayed (name "cuda_graph"), measured
    alike: (variant, kernel µs, op µs, the kernels' names, host µs, µs with L2 flushed). host_reps(variant):
    calls for the host time (default args.host_reps)."""
    graph = graph_of(variants[graph_variant], args.reps)
    graph1 = graph_of(variants[graph_variant], 1)
    out = []
    for variant, fn in list(variants.items()) + [("cuda_graph", None)]:
        if variant == "cuda_graph":
            kernel_us, op_us, names = profiled_loop_us(graph.replay, 1, args.reps)
            host_us = host_time_us(graph.replay, 1) / args.reps
            flushed = flushed_us(graph1.replay, args.flushed_reps, flush)
        else:
            kernel_us, op_us, names = profiled_loop_us(fn, args.reps)
            host_us = host_time_us(fn, host_reps(variant) if host_reps else args.host_reps)
            flushed = flushed_us(fn, args.flushed_reps, flush)
        out.append((variant, kernel_us, op_us, names, host_us, flushed))
    return out


def chapter_medians(path):
    """{(M, N, K): median µs} of every_shape (RCR) in a chapter 11 CSV, the last row of each size."""
    medians = {}
    if path and os.path.exists(path):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row["kernel"] == "every_shape" and row["layout"] == "RCR":
                    medians[(int(row["M"]), int(row["N"]), int(row["K"]))] = float(row["median_ms"]) * 1000
    return medians


def grouped_rows(args, flush):
    """The --grouped rows (see the module's docstring)."""
    experts, topk, tokens, n, k = 128, 8, 4096, 1536, 2048
    g = torch.Generator(device="cuda").manual_seed(0)
    chosen = torch.rand(tokens, experts, device="cuda", generator=g).topk(topk, dim=1).indices
    counts = torch.bincount(chosen.flatten(), minlength=experts).tolist()
    offsets_list, first, rows_padded = gemm_ladder.grouped_layout(counts)
    total = sum(counts)
    xc = torch.randn(total, k, device="cuda", dtype=torch.bfloat16, generator=g)  # unpadded, expert after expert
    w = torch.randn(experts, n, k, device="cuda", dtype=torch.bfloat16, generator=g) * 0.02
    x = torch.zeros(rows_padded, k, device="cuda", dtype=torch.bfloat16)           # the contiguous layout
    starts = [0]
    for r in counts:
        starts.append(starts[-1] + r)
    for e in range(experts):
        x[first[e]:first[e] + counts[e]] = xc[starts[e]:starts[e + 1]]
    offsets = torch.tensor(offsets_list, device="cuda", dtype=torch.int64)
    c = torch.empty(rows_padded, n, device="cuda", dtype=torch.bfloat16)
    slices = [(xc[starts[e]:starts[e + 1]], w[e].t()) for e in range(experts) if counts[e]]
    wt = w.transpose(1, 2)
    ends = torch.tensor(starts[1:], device="cuda", dtype=torch.int32)
    w_interleaved = gemm_ladder.interleave_gate_up(w)  # grouped_swiglu's order of the same weights
    h = torch.empty(rows_padded, n // 2, device="cuda", dtype=torch.bfloat16)

    def mm_silu_out():
        gemm_ladder.grouped_mm(x, w, offsets, out=c)
        gate, up = c.chunk(2, dim=-1)
        torch.mul(torch.nn.functional.silu(gate), up, out=h)
    variants = {
        "grouped_out": lambda: gemm_ladder.grouped_mm(x, w, offsets, out=c),
        "grouped": lambda: gemm_ladder.grouped_mm(x, w, offsets),
        "custom_op": lambda: torch.ops.gemm_ladder.grouped_mm(x, w, offsets),
        "torch_loop": lambda: [torch.mm(a, b) for a, b in slices],
        "swiglu_out": lambda: gemm_ladder.grouped_swiglu(x, w_interleaved, offsets, out=h),
        "mm_silu_out": mm_silu_out,
    }
    if hasattr(torch, "_grouped_mm"):
        try:
            torch._grouped_mm(xc, wt, offs=ends)
            variants["torch_grouped_mm"] = lambda: torch._grouped_mm(xc, wt, offs=ends)
        except Exception as e:  # noqa: BLE001 (this torch's _grouped_mm refuses the problem: not timed, said why)
            print(f"bench_ops: torch._grouped_mm not timed: {str(e).splitlines()[0]}")
    t_end = time.perf_counter() + 0.3
    while time.perf_counter() < t_end:
        variants["grouped_out"]()
    for fn in variants.values():
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    gemm_ladder.grouped_swiglu(x, w_interleaved, offsets, out=h)
    swiglu_path = gemm_ladder.last_path()
    gemm_ladder.grouped_mm(x, w, offsets, out=c)
    path = gemm_ladder.last_path()
    for e in range(experts):  # every expert's rows against torch.mm's (and SiLU(gate)·up of them)
        ref = torch.mm(xc[starts[e]:starts[e + 1]], w[e].t()).float()
        torch.testing.assert_close(c[first[e]:first[e] + counts[e]].float(), ref, rtol=2e-2, atol=2e-2)
        gate, up = ref.chunk(2, dim=-1)
        torch.testing.assert_close(h[first[e]:first[e] + counts[e]].float(), torch.nn.functional.silu(gate) * up,
                                   rtol=2e-2, atol=2e-2)
    rows = []
    # a loop launches a kernel per expert: few enough calls that the launch queue never fills
    host_reps = lambda variant: max(2, args.host_reps // 64) if variant == "torch_loop" else args.host_reps  # noqa: E731
    for variant, kernel_us, op_us, names, host_us, flushed in measure_variants(variants, "grouped_out", args, flush,
                                                                                host_reps):
        torch_variant = variant.startswith("torch")
        rows.append({
            "problem": "moe_qwen3_gate_up_4096", "M": total, "N": n, "K": k, "dtype": "bf16", "layout": "RCR",
            "variant": variant, "kernel_us": round(kernel_us, 3), "op_us": round(op_us, 3),
            "op_vs_kernel_pct": round((op_us / kernel_us - 1) * 100, 2) if kernel_us > 0 else "",
            "host_us": round(host_us, 3), "flushed_us": round(flushed, 3), "chapter_us": "", "op_vs_chapter_pct": "",
            "path": (("torch " + ";".join(names)[:200]) if torch_variant else swiglu_path if variant == "swiglu_out"
                     else path + " + torch's silu and mul" if variant == "mm_silu_out" else path),
            "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
        })
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "."), help="directory for bench_ops.csv ($OUT)")
    parser.add_argument("--reps", type=int, default=200, help="calls per timed loop")
    parser.add_argument("--flushed-reps", type=int, default=50, help="calls timed one at a time, L2 flushed")
    parser.add_argument("--compiled", action="store_true", help="also time torch.compile(fullgraph=True) of gemm_ladder.mm")
    parser.add_argument("--host-reps", type=int, default=100, help="calls per host-time loop (fewer than the launch queue holds)")
    parser.add_argument("--grouped", action="store_true", help="the grouped MoE problem only (see the docstring)")
    parser.add_argument("--chapter-csv", default="plots/data/h200/ch11_every_shape.csv",
                        help="chapter 11's CSV, for the chapter binary's every_shape time at each problem")
    args = parser.parse_args()

    why = gemm_ladder.device_status()
    if why:
        print(f"bench_ops: skipped: {why}")
        return 0
    chapter = chapter_medians(args.chapter_csv)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.zeros(max(2 * l2, 2**20) // 4, dtype=torch.int32, device="cuda")  # read to flush (flushed_us)
    rows = grouped_rows(args, flush) if args.grouped else []
    for name, m, n, k in ([] if args.grouped else PROBLEMS):
        g = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        wt = w.t()
        variants = {
            "library_out": lambda: gemm_ladder.mm(a, wt, out=c),
            "library": lambda: gemm_ladder.mm(a, wt),
            "custom_op": lambda: torch.ops.gemm_ladder.mm(a, wt),
            "torch_mm": lambda: torch.mm(a, wt),
        }
        if args.compiled:
            compiled = torch.compile(lambda x, y: gemm_ladder.mm(x, y), fullgraph=True)
            variants["compiled"] = lambda: compiled(a, wt)
        t_end = time.perf_counter() + 0.3  # the GPU's clocks up before anything is timed
        while time.perf_counter() < t_end:
            torch.mm(a, wt)
        for fn in variants.values():  # warm-up: preparation, compilation, cuBLAS's heuristics
            for _ in range(3):
                fn()
        torch.cuda.synchronize()
        torch.testing.assert_close(gemm_ladder.mm(a, wt).float(), torch.mm(a, wt).float(), rtol=2e-2, atol=2e-2 * k ** 0.5)
        gemm_ladder.mm(a, wt, out=c)
        path = gemm_ladder.last_path()
        for variant, kernel_us, op_us, names, host_us, flushed in measure_variants(variants, "library_out", args, flush):
            ch = chapter.get((m, n, k))
            rows.append({
                "problem": name, "M": m, "N": n, "K": k, "dtype": "bf16", "layout": "RCR", "variant": variant,
                "kernel_us": round(kernel_us, 3), "op_us": round(op_us, 3),
                "op_vs_kernel_pct": round((op_us / kernel_us - 1) * 100, 2) if kernel_us > 0 else "",
                "host_us": round(host_us, 3), "flushed_us": round(flushed, 3), "chapter_us": round(ch, 3) if ch else "",
                "op_vs_chapter_pct": round((flushed / ch - 1) * 100, 2) if ch else "",
                "path": ("cuBLAS " + ";".join(names)) if variant == "torch_mm" else path,
                "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            })
    os.makedirs(args.out, exist_ok=True)
    out = os.path.join(args.out, "bench_ops.csv")
    with open(out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"{'problem':8} {'variant':12} {'kernel_us':>9} {'op_us':>8} {'op/kern':>8} {'host_us':>8} {'flushed':>8} "
          f"{'chapter':>8} {'/chapter':>8}  path")
    for r in rows:
        print(f"{r['problem']:8} {r['variant']:12} {r['kernel_us']:9.2f} {r['op_us']:8.2f} {r['op_vs_kernel_pct']:7}% "
              f"{r['host_us']:8.2f} {r['flushed_us']:8.2f} {str(r['chapter_us']):>8} {r['op_vs_chapter_pct']:7}%  {r['path'][:50]}")
    print(f"bench_ops: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
