"""The stall samples of one kernel of an ncu source page (ncu -i R --page source --csv --print-source sass):
    python3 src_stalls.py SASS.csv KERNEL_INDEX [TOP]   the kernel's totals and its TOP instructions by samples"""
import collections
import csv
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"


def kernel_sections(path):
    """[(kernel name, header row, instruction rows)] in the page's order."""
    secs, cur = [], None
    for r in csv.reader(open(path)):
        if r and r[0] == "Kernel Name": cur = [r[1], None, []]; secs.append(cur); continue
        if r and r[0] == "Address": cur[1] = r; continue
        if cur and cur[1] and len(r) > 5: cur[2].append(r)
    return secs


def stall_columns(h):
    """The header's index by name, and the issued-sample stall reasons."""
    return {k: i for i, k in enumerate(h)}, [k for k in h if k.startswith("stall_") and "Not Issued" not in k]


def main():
    which = int(sys.argv[2]); topn = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    name, h, body = kernel_sections(sys.argv[1])[which]
    print(name[:150], len(body), "instructions")
    idx, stalls = stall_columns(h)
    tot = collections.Counter()
    for r in body:
        for k in stalls: tot[k] += int(r[idx[k]] or 0)
    allsamp = sum(int(r[idx[SAMPLES]] or 0) for r in body)
    print("total samples", allsamp, {k: v for k, v in tot.most_common(10)})
    lst = sorted(body, key=lambda r: -int(r[idx[SAMPLES]] or 0))[:topn]
    for r in lst:
        s = int(r[idx[SAMPLES]] or 0)
        top = sorted(((int(r[idx[k]] or 0), k[6:]) for k in stalls), reverse=True)[:3]
        print(f"{r[0][-5:]} {s:6d} {100*s/allsamp:5.1f}%  {r[1].strip()[:70]:70s} {top}")


if __name__ == "__main__":
    main()
