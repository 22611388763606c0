"""The host time of one eager linear call, ours against torch's, at the decode shapes of
python/examples/llama_decoder.py (x of shape (M, 1, K) as its decode step passes it, the weights (N, K)).
On an sm_90a GPU with torch and the C++ operators built:

    PYTHONPATH=python python python/bench_linear_host.py --csv $OUT/linear_host.csv

Each way of calling (the rows' `variant`) is timed with time.perf_counter over `--calls` calls issued after a
synchronize (the GPU's queue never fills: at most two launches a call), the variants taking turns in each of
`--rounds` rounds; a row holds the median and the minimum of the rounds, in µs of host time per call:

  torch_linear   torch.nn.functional.linear(x, w): the model's torch_eager
  ours           gemm_ladder.linear(x, w): the model's ours_eager (the fast path where it is built)
  ours_before    the same call as it was before the fast path (commit 86e68a6): the wrapper's checks, then
                 torch.ops.gemm_ladder.linear(x, w) through gemm_ladder._eager
  op_packet      torch.ops.gemm_ladder.linear(x, w) alone
  op_overload    torch.ops.gemm_ladder.linear.default(x, w)
  fast_raw       the fast path's C++ function alone (gemm_ladder._torch_ops.FAST_LINEAR), no Python wrapper
  torch_empty    torch.empty((M, 1, N)) alone: an allocation from Python
  c_gl_gemm      gl_gemm into one C, called from a C++ loop (no Python, no allocation): the library's host cost
  c_fast         the fast path's work from a C++ loop: an empty C from torch's allocator, then gl_gemm
  c_at_linear    at::linear(x, w) from a C++ loop: torch's own path below Python
  c_empty        the empty C alone from a C++ loop
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
import pathlib

import torch
import torch.nn.functional as F

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gemm_ladder  # noqa: E402
from gemm_ladder import _core, _torch_ops  # noqa: E402

# (name, N, K): the decoder's weights (llama_decoder.py's Config at Llama-3-8B's shapes)
WEIGHTS = [("wqkv", 6144, 4096), ("wo", 4096, 4096), ("w_gate_up", 28672, 4096), ("w_down", 4096, 14336),
           ("lm_head", 128256, 4096)]


def before(x, w):
    """gemm_ladder.linear(x, w) as of commit 86e68a6 (no fast path): the same statements in the same order."""
    if _core.is_torch_tensor(x) and _core.is_torch_tensor(w):
        if gemm_ladder._compiling():
            return torch.ops.gemm_ladder.linear(x, w)
        return gemm_ladder._eager("linear", (x, w), lambda: _core.linear_torch(x, w))
    raise TypeError("linear takes torch tensors")


def host_us(fn, calls: int) -> float:
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    us = (time.perf_counter() - t) / calls * 1e6
    torch.cuda.synchronize()
    return us


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", required=True)
    ap.add_argument("--rows", default="1,64", help="M values (the decode batches)")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args(argv)
    assert _torch_ops.CPP_OPS, "the C++ operators were not built (see the warning at import)"
    fast, cpp = _torch_ops.FAST_LINEAR, _torch_ops.CPP_MODULE
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)
    rows = []
    with torch.no_grad():
        for m in (int(v) for v in args.rows.split(",")):
            for name, n, k in WEIGHTS:
                w = torch.nn.Parameter(torch.randn(n, k, device=dev, dtype=torch.bfloat16, generator=g) * k ** -0.5,
                                       requires_grad=False)
                x = torch.randn(m, 1, k, device=dev, dtype=torch.bfloat16, generator=g)
                ref = F.linear(x, w)
                if fast(x, w) is None:
                    print(f"M={m} {name}: the fast path declined this call (ours is the operator's path): "
                          f"{cpp._context()}, x {x.dtype} {x.device} {x.is_contiguous()}, w {type(w).__name__} "
                          f"{w.is_contiguous()}", flush=True)
                for f in (gemm_ladder.linear, before):
                    y = f(x, w)
                    assert y.shape == ref.shape, (f, y.shape)
                    torch.testing.assert_close(y.float(), ref.float(), rtol=2e-2, atol=2e-2)
                variants = {
                    "torch_linear": lambda: F.linear(x, w),
                    "ours": lambda: gemm_ladder.linear(x, w),
                    "ours_before": lambda: before(x, w),
                    "op_packet": lambda: torch.ops.gemm_ladder.linear(x, w),
                    "op_overload": lambda: torch.ops.gemm_ladder.linear.default(x, w),
                    "fast_raw": lambda: fast(x, w),
                    "torch_empty": lambda: torch.empty((m, 1, n), device=dev, dtype=torch.bfloat16),
                }
                loops = {"c_gl_gemm": 0, "c_fast": 1, "c_at_linear": 2, "c_empty": 3}
                times = {v: [] for v in [*variants, *loops]}
                for fn in variants.values():  # warm: caches, the allocator's blocks
                    host_us(fn, 20)
                for r in range(args.rounds):
                    order = list(variants) if r % 2 == 0 else list(reversed(variants))
                    for v in order:
                        times[v].append(host_us(variants[v], args.calls))
                    for v, what in loops.items():
                        torch.cuda.synchronize()
                        times[v].append(cpp._host_loop_us(x, w, what, args.calls))
                        torch.cuda.synchronize()
                for v, ts in times.items():
                    rows.append(dict(weight=name, M=m, N=n, K=k, variant=v, median_us=round(statistics.median(ts), 3),
                                     min_us=round(min(ts), 3), rounds=len(ts), calls=args.calls,
                                     gpu=torch.cuda.get_device_name(), torch=torch.__version__))
                line = ", ".join(f"{v} {statistics.median(ts):.2f}" for v, ts in times.items())
                print(f"M={m:>3} {name:>9} {n}x{k}: {line}", flush=True)
                del w, x, ref
    with open(args.csv, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    # the summary: ours - torch per call, before and after, at each shape
    by = {(r["weight"], r["M"], r["variant"]): r["median_us"] for r in rows}
    print("weight M: torch_linear, ours_before (-torch), ours (-torch) [µs per call, median of rounds]")
    for (name, m) in sorted({(r["weight"], r["M"]) for r in rows}, key=lambda t: (t[1], t[0])):
        t, b, o = by[(name, m, "torch_linear")], by[(name, m, "ours_before")], by[(name, m, "ours")]
        print(f"{name:>9} M={m:>3}: {t:6.2f}, {b:6.2f} ({b - t:+.2f}), {o:6.2f} ({o - t:+.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
