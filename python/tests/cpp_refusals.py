"""One bad call of a C++ torch operator (csrc/torch_ops.cpp), run in a process of its own so that a crash
is a failed test with its exit status, not the end of the pytest run (test_grouped_gpu.py):

    python python/tests/cpp_refusals.py CASE     # prints "<exception type> <first line of its message>"
"""

import sys

import torch

import gemm_ladder  # noqa: F401,E402  (registers torch.ops.gemm_ladder.*)

a = torch.zeros(256, 64, device="cuda", dtype=torch.bfloat16)
w = torch.zeros(2, 256, 64, device="cuda", dtype=torch.bfloat16)
offsets = torch.zeros(3, device="cuda", dtype=torch.int64)
grouped = torch.ops.gemm_ladder.grouped_mm
swiglu = torch.ops.gemm_ladder.grouped_swiglu  # w: 2 experts of 2I = 256 rows, I = 128
CASES = {
    "mm_shapes": lambda: torch.ops.gemm_ladder.mm(a, w[0]),                     # 256x64 @ 256x64
    "int32_offsets": lambda: grouped(a, w, offsets.int()),
    "cpu_offsets": lambda: grouped(a, w, offsets.cpu()),
    "k_mismatch": lambda: grouped(a, w[:, :, :32], offsets),
    "b_strides": lambda: grouped(a, w.transpose(1, 2).contiguous().transpose(1, 2), offsets),
    "n_rule": lambda: grouped(a, w[:, :128].contiguous(), offsets),
    "tile_rows": lambda: grouped(a, w, offsets, 32),
    "misaligned_a": lambda: grouped(torch.zeros(256 * 64 + 8, device="cuda", dtype=torch.bfloat16)[1:1 + 256 * 64].view(256, 64),
                                    w, offsets),
    "swiglu_i_rule": lambda: swiglu(a, torch.zeros(2, 384, 64, device="cuda", dtype=torch.bfloat16), offsets),
    "swiglu_tile_16": lambda: swiglu(a, w, offsets, 16),
    "swiglu_cpu_w": lambda: swiglu(a, w.cpu(), offsets),
    "swiglu_misaligned_a": lambda: swiglu(torch.zeros(256 * 64 + 8, device="cuda", dtype=torch.bfloat16)[1:1 + 256 * 64]
                                          .view(256, 64), w, offsets),
}

if __name__ == "__main__":
    try:
        CASES[sys.argv[1]]()
        print("no exception")
    except Exception as e:  # noqa: BLE001 (the type is the answer)
        print(type(e).__name__, str(e).strip().splitlines()[0])
