import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
secs = []; cur=None
for r in rows:
    if r and r[0] == "Kernel Name": cur = [r[1], None, []]; secs.append(cur); continue
    if r and r[0] == "Address": cur[1] = r; continue
    if cur and cur[1] and len(r) > 5: cur[2].append(r)
name, h, body = secs[int(sys.argv[2])]
lo, hi = int(sys.argv[3], 16), int(sys.argv[4], 16)
idx = {k:i for i,k in enumerate(h)}
stalls = [k for k in h if k.startswith("stall_") and "Not Issued" not in k]
for r in body:
    a = int(r[0], 16) & 0xfffff
    if lo <= a <= hi:
        s = int(r[idx["Warp Stall Sampling (All Samples)"]] or 0)
        top = sorted(((int(r[idx[k]] or 0), k[6:]) for k in stalls), reverse=True)[:2]
        ex = r[idx["Instructions Executed"]]
        print(f"{a:05x} {s:5d} ex={ex:>8s} {r[1].strip()[:80]:80s} {top if s else ''}")
