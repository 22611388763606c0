import csv, sys, collections
for f in sys.argv[1:]:
    rows = [r for r in csv.reader(open(f)) if len(r) > 10]
    his = [i for i, r in enumerate(rows) if "Kernel Name" in r]
    if not his: print(f, "no rows"); continue
    hi = his[0]; h = rows[hi]; ki, mi, vi, idi = h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value"), h.index("ID")
    per = collections.defaultdict(dict); name = {}
    for r in rows[hi + 1:]:
        try: per[r[idi]][r[mi]] = float(r[vi].replace(",", ""))
        except ValueError: pass
        name[r[idi]] = r[ki]
    print(f.split("/")[-1])
    for i in sorted(per, key=int):
        m = per[i]; tag = "nvjet" if "nvjet" in name[i] else name[i][:24]
        print(f"  {i:>3} {tag:24s} {m.get('gpu__time_duration.sum',0)/1e3:7.1f} us tensor {m.get('sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active',0):5.1f}% issue {m.get('smsp__issue_active.avg.pct_of_peak_sustained_active',0):5.1f}% inst {m.get('smsp__inst_executed.sum',0)/1e6:6.2f}M bar {m.get('smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio',0):.2f} lsb {m.get('smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio',0):.2f} wait {m.get('smsp__average_warps_issue_stalled_wait_per_issue_active.ratio',0):.2f} dram {m.get('dram__throughput.avg.pct_of_peak_sustained_elapsed',0):.1f}% rd {m.get('dram__bytes_read.sum',0)/1e6:.1f}MB wr {m.get('dram__bytes_write.sum',0)/1e6:.1f}MB L2 {m.get('lts__t_bytes.sum',0)/1e6:.1f}MB")
