"""Session 2026-11-30l (issue 39): where a compiled decode step at batch 1 loses time. For torch_compile and
ours_compile: a torch.profiler trace of 10 steps; per kernel the gap before it on the GPU and whether the GPU was
waiting on the host's launch (start - launch call's end < 8 us) or had the launch queued; the sums per step by the
kind of kernel that waited. Then both backends under mode="reduce-overhead" (CUDA graphs: no host in the step)."""
import collections, json, statistics, sys, tempfile
sys.path[:0] = ["python", "python/examples"]
import torch
import llama_decoder as ld

torch.set_grad_enabled(False)
cfg, dev = ld.LLAMA3_8B, torch.device("cuda")
linears = {"torch": ld.torch_linear, "gemm_ladder": ld.load_gemm_ladder()}
model = ld.Decoder(cfg, dev, seed=0)
w = ld.Workload(model, ld.Phase("decode", 1, 1, 512), 0, dev)
torch.cuda.synchronize()

def kind(name):
    return "ours" if "mm::" in name else ("triton" if name.startswith("triton") else
            ("cublas" if ("nvjet" in name or "gemm" in name.lower() or "cutlass" in name) else "other"))

for b in [b for b in ld.BACKENDS if b.name in ("torch_compile", "ours_compile")]:
    fn = ld.make_runner(model, b, linears)
    for _ in range(10): w.step(fn)
    torch.cuda.synchronize()
    steps = 10
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(steps): w.step(fn)
        torch.cuda.synchronize()
    path = tempfile.mktemp(suffix=".json")
    prof.export_chrome_trace(path)
    ev = json.load(open(path))["traceEvents"]
    launches = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launches[e["args"]["correlation"]] = e["ts"] + e.get("dur", 0)
    kernels = sorted([e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"], key=lambda e: e["ts"])
    busy = sum(k["dur"] for k in kernels)
    span = kernels[-1]["ts"] + kernels[-1]["dur"] - kernels[0]["ts"]
    gap_host, gap_queued = collections.Counter(), collections.Counter()
    n_host, n_queued = collections.Counter(), collections.Counter()
    for prev, k in zip(kernels, kernels[1:]):
        gap = k["ts"] - (prev["ts"] + prev["dur"])
        if gap <= 0: continue
        launched = launches.get(k["args"].get("correlation"))
        waited_host = launched is not None and k["ts"] - launched < 8
        kk = kind(k["name"]) + "<-" + kind(prev["name"])
        (gap_host if waited_host else gap_queued)[kk] += gap
        (n_host if waited_host else n_queued)[kk] += 1
    t0 = kernels[len(kernels) // 2]["ts"]
    print(f"--- {b.name}: 80 kernels from the middle of the run: start, dur, gap before, start - launch end (us), kind")
    for prev, k in list(zip(kernels, kernels[1:]))[len(kernels) // 2:len(kernels) // 2 + 80]:
        launched = launches.get(k["args"].get("correlation"))
        print(f"    {k['ts'] - t0:9.1f} {k['dur']:7.1f} {k['ts'] - prev['ts'] - prev['dur']:7.1f} "
              f"{(k['ts'] - launched) if launched is not None else float('nan'):8.1f} {kind(k['name']):7s} {k['name'][:60]}")
    print(f"=== {b.name}: {len(kernels)/steps:.0f} kernels a step, busy {busy/steps/1e3:.3f} ms a step, span "
          f"{span/steps/1e3:.3f} ms a step (under the profiler)")
    print("  gaps where the GPU waited on the host's launch (per step, us; count):")
    for kk, v in gap_host.most_common(8): print(f"    {kk:20s} {v/steps:8.1f}  ({n_host[kk]/steps:.1f})")
    print("  gaps with the launch already queued (per step, us; count):")
    for kk, v in gap_queued.most_common(8): print(f"    {kk:20s} {v/steps:8.1f}  ({n_queued[kk]/steps:.1f})")
    per = collections.defaultdict(list)
    for k in kernels: per[kind(k["name"])].append(k["dur"])
    print("  kernel time per step by kind (us):", {kk: round(sum(v)/steps, 1) for kk, v in per.items()}, flush=True)

for b in () and (ld.Backend("torch_ro", "torch", "reduce-overhead"), ld.Backend("ours_ro", "gemm_ladder", "reduce-overhead")):
    fn = ld.make_runner(model, b, linears)
    for _ in range(3): w.step(fn)
    torch.cuda.synchronize()
    for rep in range(3):
        times = ld.cuda_times_ms(lambda: w.step(fn), 5, 30)
        print(f"{b.name}: median {statistics.median(times):.3f} min {min(times):.3f} ms", flush=True)
