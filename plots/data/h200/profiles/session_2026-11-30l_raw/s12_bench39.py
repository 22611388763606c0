"""Session 2026-11-30l (issue 39): host time per call of each way to run one linear layer, eager and compiled.
issue: the host's time per call (the loop, no wait); done: with the GPU's end (sync at the end of the loop)."""
import os, sys, time
sys.path[:0] = ["python"]
import torch
import torch.nn.functional as F
import gemm_ladder
torch.set_grad_enabled(False)
dev = "cuda"

def bench(name, f, n=3000):
    for _ in range(100): f()
    torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(n): f()
    issue = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize(); done = (time.perf_counter() - t) / n * 1e6
    print(f"{name:58s} issue {issue:7.2f} us/call  done {done:7.2f} us/call", flush=True)

from gemm_ladder import _torch_ops
print("cpp ops:", _torch_ops.CPP_OPS, "autograd kernel for linear:",
      torch._C._dispatch_has_kernel_for_dispatch_key("gemm_ladder::linear", "Autograd"),
      torch._C._dispatch_has_kernel_for_dispatch_key("gemm_ladder::linear", "AutogradCUDA"))
for (m, n, k) in [(1, 256, 256), (1, 4096, 4096)]:
    x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    o = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
    wt = w.t()
    print(f"--- {m}x{n}x{k}")
    bench("torch.empty(m, n)", lambda: torch.empty(m, n, device=dev, dtype=torch.bfloat16))
    bench("F.linear(x, w)", lambda: F.linear(x, w))
    bench("torch.mm(x, w.t())", lambda: torch.mm(x, wt))
    bench("torch.mm(x, w.t(), out=o)", lambda: torch.mm(x, wt, out=o))
    bench("torch.ops.aten.mm.default(x, wt)", lambda: torch.ops.aten.mm.default(x, wt))
    bench("torch.ops.gemm_ladder.linear(x, w)", lambda: torch.ops.gemm_ladder.linear(x, w))
    bench("torch.ops.gemm_ladder.linear.default(x, w)", lambda: torch.ops.gemm_ladder.linear.default(x, w))
    bench("torch.ops.gemm_ladder.mm.default(x, wt)", lambda: torch.ops.gemm_ladder.mm.default(x, wt))
    bench("gemm_ladder.linear(x, w) [eager Python path]", lambda: gemm_ladder.linear(x, w))
    bench("gemm_ladder.linear(x, w, out=o)", lambda: gemm_ladder.linear(x, w, out=o))
    with torch.enable_grad():
        bench("torch.ops.gemm_ladder.linear.default, grad mode on", lambda: torch.ops.gemm_ladder.linear.default(x, w))
        bench("F.linear, grad mode on", lambda: F.linear(x, w))
    def chain_torch(x):
        for _ in range(8): x = F.linear(x, w) if n == k else x
        return x
    def chain_ours(x):
        for _ in range(8): x = torch.ops.gemm_ladder.linear(x, w) if n == k else x
        return x
    if n == k:
        ct = torch.compile(chain_torch, fullgraph=True, dynamic=False)
        co = torch.compile(chain_ours, fullgraph=True, dynamic=False)
        bench("compiled: 8 x F.linear (per linear)", lambda: ct(x), n=400)
        bench("compiled: 8 x gemm_ladder.linear (per linear)", lambda: co(x), n=400)
        print("   (the two lines above are per call of 8 linears: divide by 8)")
