"""One kernel's instructions between two addresses (the low 20 bits), with their stall samples:
    python3 src_range.py SASS.csv KERNEL_INDEX LO HI"""
import sys

from src_stalls import SAMPLES, kernel_sections, stall_columns

name, h, body = kernel_sections(sys.argv[1])[int(sys.argv[2])]
lo, hi = int(sys.argv[3], 16), int(sys.argv[4], 16)
idx, stalls = stall_columns(h)
for r in body:
    a = int(r[0], 16) & 0xfffff
    if lo <= a <= hi:
        s = int(r[idx[SAMPLES]] or 0)
        top = sorted(((int(r[idx[k]] or 0), k[6:]) for k in stalls), reverse=True)[:2]
        ex = r[idx["Instructions Executed"]]
        print(f"{a:05x} {s:5d} ex={ex:>8s} {r[1].strip()[:80]:80s} {top if s else ''}")
