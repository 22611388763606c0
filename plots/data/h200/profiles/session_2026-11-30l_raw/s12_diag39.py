"""Session 2026-11-30l: why the model's decode at batch 1 trails torch (issue 39). For each backend at decode
batch 1 (Llama-3-8B shapes, 4 layers, context 512): three timing loops as llama_decoder measures them (median, min,
max, the host's time to issue a step), the library's cache hits and misses over each loop, and a torch.profiler
table of 5 steps (CPU time per op, CUDA time per kernel)."""
import statistics, sys, time
sys.path[:0] = ["python", "python/examples"]
import torch
import llama_decoder as ld
import gemm_ladder

batch = int(sys.argv[1]) if len(sys.argv) > 1 else 1
cfg = ld.LLAMA3_8B
dev = torch.device("cuda")
torch.set_grad_enabled(False)
linears = {"torch": ld.torch_linear, "gemm_ladder": ld.load_gemm_ladder()}
model = ld.Decoder(cfg, dev, seed=0)
w = ld.Workload(model, ld.Phase("decode", batch, batch, 512), 0, dev)
torch.cuda.synchronize()
names = sys.argv[2].split(",") if len(sys.argv) > 2 else ["torch_compile", "ours_compile", "torch_eager", "ours_eager"]
for b in [b for b in ld.BACKENDS if b.name in names]:
    fn = ld.make_runner(model, b, linears)
    w.step(fn); torch.cuda.synchronize()
    for rep in range(3):
        s0 = gemm_ladder.cache_stats()
        t0 = time.perf_counter()
        times = ld.cuda_times_ms(lambda: w.step(fn), 5, 30)
        wall = (time.perf_counter() - t0) * 1e3 / 35
        s1 = gemm_ladder.cache_stats()
        # host issue time of 30 steps without waiting on the GPU's end (the loop itself)
        torch.cuda.synchronize(); t1 = time.perf_counter()
        for _ in range(30): w.step(fn)
        issue = (time.perf_counter() - t1) * 1e3 / 30
        torch.cuda.synchronize(); done = (time.perf_counter() - t1) * 1e3 / 30
        st = sorted(times)
        print(f"{b.name:14s} b{batch} rep{rep}: median {statistics.median(times):.3f} min {st[0]:.3f} p90 {st[26]:.3f} max {st[-1]:.3f} ms;"
              f" wall/step {wall:.3f}; issue/step {issue:.3f} ms, done/step {done:.3f}; cache d_hits {s1['hits']-s0['hits']}"
              f" d_misses {s1['misses']-s0['misses']} entries {s1['entries']}", flush=True)
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(5): w.step(fn)
        torch.cuda.synchronize()
    ka = prof.key_averages()
    print(f"--- {b.name}: by self CPU time (5 steps)")
    print(ka.table(sort_by="self_cpu_time_total", row_limit=18, max_name_column_width=70))
    print(f"--- {b.name}: by self CUDA time (5 steps)")
    print(ka.table(sort_by="self_cuda_time_total", row_limit=18, max_name_column_width=70))
    cuda_total = sum(e.self_device_time_total for e in ka) / 5 / 1e3
    print(f"--- {b.name}: CUDA kernel time per step {cuda_total:.3f} ms", flush=True)
