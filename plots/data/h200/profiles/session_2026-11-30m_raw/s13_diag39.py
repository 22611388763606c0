"""Session 2026-11-30m: the dense model's decode at batch 1, torch_compile against ours_compile (issue 39).
argv: mode [order]. mode: default | noasserts (inductor size_asserts and alignment_asserts off) |
reduce-overhead. Per backend: block timing (3 rounds of 30 steps, alternating order, as llama_decoder does),
then interleaved timing (200 pairs, one step of each backend in turn: paired samples under the same host),
each step's host issue time, the library's cache counters, and a cProfile of 60 steps (top functions)."""
import cProfile, io, pstats, statistics, sys, time
sys.path[:0] = ["python", "python/examples"]
import torch
import llama_decoder as ld
import gemm_ladder

mode = sys.argv[1] if len(sys.argv) > 1 else "default"
first = sys.argv[2] if len(sys.argv) > 2 else "torch"
if mode == "noasserts":
    import torch._inductor.config as ic
    ic.size_asserts = False
    if hasattr(ic, "alignment_asserts"):
        ic.alignment_asserts = False
cm = "reduce-overhead" if mode == "reduce-overhead" else "default"
backends = [ld.Backend("torch_c", "torch", cm), ld.Backend("ours_c", "gemm_ladder", cm)]
if first == "ours":
    backends.reverse()
cfg = ld.LLAMA3_8B
dev = torch.device("cuda")
torch.set_grad_enabled(False)
import torch._dynamo
torch._dynamo.config.cache_size_limit = 64
linears = {"torch": ld.torch_linear, "gemm_ladder": ld.load_gemm_ladder()}
model = ld.Decoder(cfg, dev, seed=0)
w = ld.Workload(model, ld.Phase("decode", 1, 1, 512), 0, dev)
torch.cuda.synchronize()
runners = {}
for b in backends:
    runners[b.name] = ld.make_runner(model, b, linears)
    t = time.perf_counter(); w.step(runners[b.name]); torch.cuda.synchronize()
    print(f"{mode} {b.name}: first call {time.perf_counter() - t:.1f} s", flush=True)
# block timing
for r in range(3):
    for b in (backends if r % 2 == 0 else backends[::-1]):
        s0 = gemm_ladder.cache_stats()
        ts = ld.cuda_times_ms(lambda: w.step(runners[b.name]), 5, 30)
        s1 = gemm_ladder.cache_stats()
        print(f"{mode} block r{r} {b.name}: median {statistics.median(ts):.3f} min {min(ts):.3f} max {max(ts):.3f} ms;"
              f" cache hits +{s1['hits'] - s0['hits']} misses +{s1['misses'] - s0['misses']}", flush=True)
# interleaved: one step of each in turn
n = 200
ev = {b.name: [] for b in backends}
host = {b.name: [] for b in backends}
for b in backends:
    for _ in range(3): w.step(runners[b.name])
torch.cuda.synchronize()
for i in range(n):
    for b in (backends if i % 2 == 0 else backends[::-1]):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); t = time.perf_counter(); w.step(runners[b.name]); host[b.name].append((time.perf_counter() - t) * 1e3); e.record()
        ev[b.name].append((s, e))
torch.cuda.synchronize()
for b in backends:
    ts = sorted(s.elapsed_time(e) for s, e in ev[b.name])
    hs = sorted(host[b.name])
    q = lambda v, f: v[int(f * (len(v) - 1))]
    print(f"{mode} interleaved {b.name}: step median {statistics.median(ts):.3f} p10 {q(ts, .1):.3f} p90 {q(ts, .9):.3f} ms;"
          f" host issue median {statistics.median(hs):.3f} p10 {q(hs, .1):.3f} p90 {q(hs, .9):.3f} ms", flush=True)
tn, on = backends[0].name, backends[1].name
ratios = sorted(a.elapsed_time(b) / c.elapsed_time(d) for (a, b), (c, d) in zip(ev[tn], ev[on]))
print(f"{mode} interleaved paired {tn}/{on} step-time ratio median {statistics.median(ratios):.3f}", flush=True)
if mode != "reduce-overhead":
    for b in backends:
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(60): w.step(runners[b.name])
        pr.disable(); torch.cuda.synchronize()
        sio = io.StringIO(); pstats.Stats(pr, stream=sio).sort_stats("tottime").print_stats(22)
        print(f"--- {mode} cProfile {b.name} (60 steps)\n" + sio.getvalue(), flush=True)
