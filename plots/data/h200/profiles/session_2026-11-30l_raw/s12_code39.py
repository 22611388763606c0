"""Prints the compiled wrapper code of 3 linears for torch and gemm_ladder (run with TORCH_LOGS=output_code)."""
import sys
sys.path[:0] = ["python"]
import torch, torch.nn.functional as F
import gemm_ladder
torch.set_grad_enabled(False)
x = torch.randn(1, 256, device="cuda", dtype=torch.bfloat16)
w = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
def f(lin):
    def g(x):
        y = lin(x, w)
        return lin(F.silu(y), w)
    return g
torch.compile(f(F.linear), fullgraph=True)(x)
torch.compile(f(torch.ops.gemm_ladder.linear), fullgraph=True)(x)
