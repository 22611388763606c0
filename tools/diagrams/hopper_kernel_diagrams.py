#!/usr/bin/env python3
"""The pictures of chapters 10-13's composed Hopper kernels, as plain SVG.

    python3 tools/diagrams/hopper_kernel_diagrams.py [--out docs/images] [--facts FACTS]
    python3 tools/diagrams/hopper_kernel_diagrams.py --check-dump DUMP   # DUMP: what hopper_kernel_dump printed

Writes, from tools/diagrams/hopper_kernel_facts.txt (the output of hopper_kernel_dump, a CPU program that
asks the library itself) or from a schematic model where it says so:

  hopper_schedules.svg             data-parallel, split-K and stream-K on one 3×3 grid of 8-K-step tiles
                                   and 4 blocks: which block multiplies which K steps of which tile, in
                                   which order, and which unit adds the partial sums and stores C
                                   (PersistentTileScheduler, SplitKScheduler, StreamKScheduler walked for
                                   every block, their fixups run on the host)
  hopper_pingpong.svg              cooperative against ping-pong consumers on a time axis (schematic)
  hopper_multicast.svg             chapter 10's cluster of 2 blocks along M sharing B's tile by TMA
                                   multicast: the boxes each block issues (TmaBoxes), the barriers they
                                   complete on, and the empty barriers' count (PipelineTmaAsync's
                                   empty_arrivals and releases_in)
  hopper_swap_ab.svg               swap-AB: Cᵀ = B·Aᵀ, the tile of Cᵀ, and where its transposed store puts
                                   each value (CollectiveEpilogueStrided's store, run on the host)
  hopper_wgmma_accumulators.svg    wgmma's 64×16 accumulators (MMA_Traits<...>::CLayout) and the stmatrix
                                   stores of one 64×64 chunk (StsmAccumulatorMap, stmatrix emulated)
  hopper_grouped.svg               chapter 13: six experts' tiles on six blocks, a launch per expert
                                   (PersistentTileScheduler per expert) against one grouped launch
                                   (PersistentGroupTileScheduler), each tile one unit of time
  hopper_fp8_promotion.svg         chapter 12, block-scaled fp8: one K block's wgmma, wait and promotion for
                                   one math warpgroup, then two (schematic)
  hopper_copy_rows.svg             chapter 11, step 11: the staging copy of a row that starts 3 values past a
                                   16-byte boundary, one aligned chunk loaded a lane, the next chunk taken from
                                   the neighbour's registers (schematic: a warp of 4 lanes, a model of
                                   copy_shifted_chunks checked value for value before it is drawn)
  hopper_swiglu.svg                chapter 13, step 3: the gate and up weights stacked by tile, one thread's
                                   accumulators paired (value i with value i + 64: the CLayout of a 64×256
                                   tile) and the half-width tile SiLU(gate)·up stores

Only the standard library is used (and the drawing class of hopper_diagrams.py). The facts are checked
for consistency before anything is drawn (every K step of every tile in one unit, one finisher per tile;
the accumulator layout against the PTX ISA's formula; ...). The output is deterministic. CTests:
plots.hopper_kernel_diagrams_reproducible draws the pictures into a temporary directory and compares them
with docs/images byte for byte; plots.hopper_kernel_diagrams_facts runs hopper_kernel_dump and compares
its output with the committed facts. After a change of the code the pictures show:

    build/bin/hopper_kernel_dump > tools/diagrams/hopper_kernel_facts.txt
    python3 tools/diagrams/hopper_kernel_diagrams.py                 # and commit docs/images
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from collections import defaultdict

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import hopper_diagrams as hd  # noqa: E402  (Svg, colours)

Svg, Overlap, CHAR_W = hd.Svg, hd.Overlap, hd.CHAR_W
BLUE, ORANGE, GREEN, RED, GREY, DARK = hd.BLUE, hd.ORANGE, hd.GREEN, hd.RED, hd.GREY, hd.DARK
REPO = hd.REPO
FACTS = HERE / "hopper_kernel_facts.txt"

BLOCK_TINTS = ["#9fc5e8", "#f9cb9c", "#b6d7a8", "#d5a6bd"]    # blocks 0-3 of the schedules
RANK_COLOURS = [BLUE, ORANGE]                                   # the cluster's two blocks
RANK_TINTS = ["#cfe2f3", "#fce5cd"]
WARP_TINTS = ["#cfe2f3", "#fce5cd", "#d9ead3", "#ead1dc"]       # warps 0-3 of a warpgroup
MATRIX_TINTS = ["#cfe2f3", "#fce5cd", "#d9ead3", "#ead1dc"]     # stmatrix's 4 matrices (registers)


class BadFacts(Exception):
    """The facts file is inconsistent (or not what this script knows how to draw)."""


def fits(text: str, size: float, width: float) -> bool:
    return CHAR_W * size * len(text) <= width


def cell_text(s: Svg, x, y, w, text: str, size, **kw):
    """A label centred in a cell of width w (baseline y): unchecked against the other labels (the grid
    keeps them apart), but it must fit its cell."""
    if not fits(text, size, w - 2):
        raise Overlap(f"{s.name}: cell label {text!r} is wider than its cell ({w:.0f} px)")
    s.text(x + w / 2, y, text, size, anchor="middle", check=False, **kw)


# ---- The facts ---------------------------------------------------------------------------------------

class Facts:
    """hopper_kernel_dump's output, parsed (see hopper_kernel_dump.cpp for the line formats)."""

    def __init__(self, text: str):
        self.sched: dict[str, dict] = {}
        self.units: dict[str, list[dict]] = defaultdict(list)
        self.clusters: dict[tuple[int, int], dict] = {}
        self.boxes: dict[tuple[str, str], dict] = {}
        self.acc: dict[int, dict[tuple[int, int], tuple[int, int]]] = defaultdict(dict)  # N -> (m, n) -> (t, i)
        self.stsm_reg: dict[tuple[int, int, int], int] = {}
        self.stsm_addr: dict[tuple[int, int, int], tuple[int, int]] = {}
        self.stsm_elem: dict[tuple[int, int], tuple[int, int]] = {}
        self.swap: dict | None = None
        self.grouped: dict | None = None
        self.gunits: list[dict] = []
        self.lunits: list[dict] = []
        self.swap_store: dict[tuple[int, int], list[int]] = {}
        self.swiglu: dict | None = None
        self.swiglu_thread: dict | None = None
        for n, line in enumerate(text.splitlines(), 1):
            f = line.split()
            if not f or f[0].startswith("#"):
                continue
            try:
                self._line(f)
            except (ValueError, IndexError, KeyError) as e:
                raise BadFacts(f"line {n}: {line!r}: {e}") from None

    def _line(self, f: list[str]) -> None:
        k = f[0]
        if k == "sched":
            name = f[1]
            tm, tn, gm, ks, blocks = map(int, f[2:7])
            self.sched[name] = dict(tiles_m=tm, tiles_n=tn, group_m=gm, k_steps=ks, blocks=blocks, key=f[7],
                                    value=int(f[8]))
        elif k == "unit":
            name = f[1]
            b, j, idx, m, n, kb, ke = map(int, f[2:9])
            adds = [tuple(int(x) for x in a.split(".")) for a in f[10:]]
            self.units[name].append(dict(block=b, j=j, tile=idx, m=m, n=n, kb=kb, ke=ke, final=f[9] == "final",
                                         adds=adds))
            if f[9] not in ("final", "partial"):
                raise ValueError(f"unit kind {f[9]!r}")
        elif k == "cluster":
            cm, cn, cons, arr = map(int, f[1:5])
            self.clusters[(cm, cn)] = dict(consumers=cons, empty=arr, releases={})
        elif k == "release":
            cm, cn, rank = map(int, f[1:4])
            self.clusters[(cm, cn)]["releases"][rank] = [int(x) for x in f[4:]]
        elif k == "boxes":
            e0, e1, mc, nb, per, tx = map(int, f[3:9])
            self.boxes[(f[1], f[2])] = dict(extent0=e0, extent1=e1, multicast=mc, boxes=nb, per_block=per, tx=tx,
                                            list=[])
        elif k == "box":
            b, o0, o1, e0, e1, nbytes, rank = map(int, f[3:10])
            self.boxes[(f[1], f[2])]["list"].append(dict(b=b, o0=o0, o1=o1, e0=e0, e1=e1, bytes=nbytes, rank=rank))
        elif k == "acc":
            nn, m = int(f[1]), int(f[2])
            for n, tv in enumerate(f[3:]):
                t, i = tv.split(":")
                self.acc[nn][(m, n)] = (int(t), int(i))
        elif k == "stsm_reg":
            j, q, reg, i = map(int, f[1:5])
            self.stsm_reg[(j, q, reg)] = i
        elif k == "stsm_addr":
            w, lane = int(f[1]), int(f[2])
            v = list(map(int, f[3:11]))
            for q in range(4):
                self.stsm_addr[(w, lane, q)] = (v[2 * q], v[2 * q + 1])
        elif k == "stsm_elem":
            r = int(f[1])
            for c, tv in enumerate(f[2:]):
                if tv == "-":
                    raise ValueError(f"element ({r}, {c}) of the chunk was not written")
                t, i = tv.split(":")
                self.stsm_elem[(r, c)] = (int(t), int(i))
        elif k == "swap":
            m, n, bm, bn, rs, cs = map(int, f[1:7])
            self.swap = dict(M=m, N=n, BM=bm, BN=bn, row_stride=rs, col_stride=cs)
        elif k == "swap_store":
            self.swap_store[(int(f[1]), int(f[2]))] = [int(x) for x in f[3:]]
        elif k == "grouped":
            e, tn, bm, blocks = map(int, f[1:5])
            self.grouped = dict(experts=e, tiles_n=tn, bm=bm, blocks=blocks, rows=[int(x) for x in f[5:]])
        elif k == "gunit":
            b, j, idx, g, m, n, r0, r1 = map(int, f[1:9])
            self.gunits.append(dict(block=b, j=j, tile=idx, g=g, m=m, n=n, row_begin=r0, row_end=r1))
        elif k == "lunit":
            g, b, j, m, n = map(int, f[1:6])
            self.lunits.append(dict(g=g, block=b, j=j, m=m, n=n))
        elif k == "swiglu":
            nn, threads, values, pairs = map(int, f[1:5])
            self.swiglu = dict(n=nn, threads=threads, values=values, pairs=pairs)
        elif k == "swiglu_thread":
            pairs = {}
            for item in f[2:]:
                i, rest = item.split(":")
                pairs[int(i)] = tuple(map(int, rest.split(",")))
            self.swiglu_thread = dict(t=int(f[1]), pairs=pairs)
        else:
            raise ValueError(f"unknown fact {k!r}")


def c_layout(t: int, i: int) -> tuple[int, int]:
    """(row, column) of value i of thread t in a wgmma's fp32 accumulators: the PTX ISA's figure
    "WGMMA .m64nNk16 register fragment layout for accumulator matrix D"."""
    warp, lane = t // 32, t % 32
    return 16 * warp + lane // 4 + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * (lane % 4) + i % 2


def check_facts(F: Facts) -> None:
    """Raises BadFacts unless the facts are consistent and what the pictures assume."""
    # Schedules: every (tile, K step) once; one final unit per tile; a final unit adds exactly the
    # partial units of its tile.
    for name in ("data_parallel", "split_k", "stream_k"):
        if name not in F.sched or not F.units[name]:
            raise BadFacts(f"no schedule {name!r}")
        p, units = F.sched[name], F.units[name]
        hits = defaultdict(int)
        for u in units:
            for k in range(u["kb"], u["ke"]):
                hits[(u["tile"], k)] += 1
        n_tiles = p["tiles_m"] * p["tiles_n"]
        coords = {(u["tile"], u["m"], u["n"]) for u in units}
        if len(coords) != n_tiles or len({(m, n) for _, m, n in coords}) != n_tiles:
            raise BadFacts(f"{name}: the tiles' positions in the order and their (m, n) do not match one to one")
        if len(hits) != n_tiles * p["k_steps"] or any(v != 1 for v in hits.values()):
            raise BadFacts(f"{name}: the units do not cover every K step of every tile once")
        by_id = {(u["block"], u["j"]): u for u in units}
        for t in range(n_tiles):
            finals = [u for u in units if u["tile"] == t and u["final"]]
            partials = {(u["block"], u["j"]) for u in units if u["tile"] == t and not u["final"]}
            if len(finals) != 1 or set(finals[0]["adds"]) != partials:
                raise BadFacts(f"{name}: tile {t}: not one finisher adding every partial sum of the tile")
            if any(by_id[a]["tile"] != t for a in finals[0]["adds"]):
                raise BadFacts(f"{name}: tile {t}'s finisher adds another tile's partial sum")
    # Cluster: the empty count, and the releases that reach each block add up to it.
    for (cm, cn), c in F.clusters.items():
        if c["empty"] != c["consumers"] * (cm + cn - 1):
            raise BadFacts(f"cluster {cm}×{cn}: empty count {c['empty']}")
        for dst in range(cm * cn):
            got = sum(1 for rank, ts in c["releases"].items() if dst in ts) * c["consumers"]
            if got != c["empty"]:
                raise BadFacts(f"cluster {cm}×{cn}: block {dst}'s empty barrier receives {got} releases, counts "
                               f"{c['empty']}")
    for key, bx in F.boxes.items():
        if sum(b["bytes"] for b in bx["list"]) != bx["tx"] or len(bx["list"]) != bx["boxes"]:
            raise BadFacts(f"boxes {key}: the boxes' bytes are not the stage's")
        for r in range(bx["multicast"]):
            if sum(1 for b in bx["list"] if b["rank"] == r) != bx["per_block"]:
                raise BadFacts(f"boxes {key}: rank {r} does not issue its share")
    # The accumulators against the PTX ISA.
    for nn, cells in F.acc.items():
        if len(cells) != 64 * nn:
            raise BadFacts(f"acc {nn}: {len(cells)} elements")
        for (m, n), (t, i) in cells.items():
            if c_layout(t, i) != (m, n):
                raise BadFacts(f"acc {nn}: ({m}, {n}) holds thread {t}'s value {i}; the PTX ISA puts that at "
                               f"{c_layout(t, i)}")
    # stmatrix: each chunk element holds the value the C layout places there; the warps' addresses are
    # the first warp's 16 rows further down.
    if len(F.stsm_elem) != 16 * 64:
        raise BadFacts(f"stsm_elem: {len(F.stsm_elem)} elements")
    for (r, c), (t, i) in F.stsm_elem.items():
        if c_layout(t, i) != (r, c):
            raise BadFacts(f"stmatrix put thread {t}'s value {i} at ({r}, {c}); it belongs at {c_layout(t, i)}")
    for (w, lane, q), (row, col) in F.stsm_addr.items():
        r0, c0 = F.stsm_addr[(0, lane, q)]
        if (row, col) != (r0 + 16 * w, c0):
            raise BadFacts(f"stsm_addr: warp {w} lane {lane} store {q} is not warp 0's 16 rows down")
    # swap-AB: value v of thread t of warpgroup cw, element (r, q) of the tile of Cᵀ, lands at q·N + r.
    sw = F.swap
    if sw is None or len(F.swap_store) != 256:
        raise BadFacts("no swap-AB store")
    for (cw, t), offs in F.swap_store.items():
        for v, off in enumerate(offs):
            r, q = c_layout(t, v)
            if off != (64 * cw + r) * sw["row_stride"] + q * sw["col_stride"]:
                raise BadFacts(f"swap_store: warpgroup {cw} thread {t} value {v} at {off}")


def check_swiglu(F: Facts) -> None:
    """Chapter 13's SwiGLU epilogue pairs value i of a thread with value i + N/4: one row, columns c and
    c + N/2, for every thread and value (the dump counts them), and as the PTX ISA's layout says."""
    sg, st = F.swiglu, F.swiglu_thread
    if sg is None or st is None:
        raise BadFacts("no swiglu pairing")
    if sg["pairs"] != sg["threads"] * sg["values"] or sg["values"] != sg["n"] // 4:
        raise BadFacts(f"swiglu: {sg['pairs']} of {sg['threads']} × {sg['values']} pairs are one output's gate and up")
    for i, (row, gate, up) in st["pairs"].items():
        if c_layout(st["t"], i) != (row, gate) or c_layout(st["t"], i + sg["values"]) != (row, up) or \
                up != gate + sg["n"] // 2:
            raise BadFacts(f"swiglu_thread: value {i} of thread {st['t']}")


def read_facts(path: pathlib.Path) -> Facts:
    F = Facts(path.read_text(encoding="utf-8"))
    check_facts(F)
    check_swiglu(F)
    return F


# ---- 1. Three schedules --------------------------------------------------------------------------------

SCHEDULE_TEXT = {
    "data_parallel": ("data-parallel (PersistentTileScheduler)",
                      "whole tiles: block b takes positions b, b + {blocks}, b + {blocks2} of the grouped order "
                      "(group_m = {group_m}: down each column of tiles); no partial sums. The last round is short: "
                      "{last} for {blocks} blocks."),
    "split_k": ("split-K (SplitKScheduler, {value} slices)",
                "units = (tile, slice of {per} K steps), slice-major: slice 0 of every tile, then slice 1, ...; "
                "block b takes units b, b + {blocks}, ...; a tile's last slice waits for the others' partial sums "
                "and adds them."),
    "stream_k": ("stream-K (StreamKScheduler, sk_tiles = {value})",
                 "the tiles past the last whole round ({value} = {tiles} mod {blocks}) have their K steps cut into "
                 "{blocks} equal ranges, one per block, run first; then whole tiles. The piece holding a tile's last "
                 "K step adds the others' partial sums."),
}


def draw_schedules(F: Facts) -> Svg:
    names = ["data_parallel", "split_k", "stream_k"]
    p = F.sched["data_parallel"]
    tm, tn, ks, blocks = p["tiles_m"], p["tiles_n"], p["k_steps"], p["blocks"]
    kw, kh = 13, 18                     # a K step in a tile
    slot_w, slot_h = ks * kw + 18, 48   # a tile and its labels
    gx = 58                             # the tile grid's left edge
    busiest = {name: max(sum(u["ke"] - u["kb"] for u in F.units[name] if u["block"] == b) for b in range(blocks))
               for name in names}
    width = 880
    tx = gx + tn * slot_w + 46          # the time lines' left edge
    step = (width - 30 - tx) // max(busiest.values())  # a K step on the time lines
    panel_h = 58 + tm * slot_h + 8
    s = Svg("hopper_schedules", int(width), 2000)
    s.text(20, 24, f"Three schedules of one problem: {tm} × {tn} tiles of {ks} K steps on {blocks} persistent blocks",
           14, weight="bold")
    s.text(20, 44, "left: each tile's K steps, coloured and numbered by the block that multiplies them; "
                   "under it: who stores C", 12)
    s.text(20, 62, "right: each block's units in the order it runs them (one cell = one K step); red: the busiest "
                   "block's end", 12)
    y = 94
    for name in names:
        p = F.sched[name]
        units = F.units[name]
        per = max(u["ke"] - u["kb"] for u in units)
        title, desc = SCHEDULE_TEXT[name]
        n_tiles = p["tiles_m"] * p["tiles_n"]
        fmt = dict(p, per=per, blocks2=2 * p["blocks"], tiles=n_tiles, last=plural(n_tiles % p["blocks"] or p["blocks"], "tile"))
        s.text(20, y, title.format(**fmt), 13, weight="bold")
        s.text(width - 20, y, f"busiest block: {busiest[name]} K steps", 12, anchor="end", fill=RED, weight="bold")
        yd = s.para(20, y + 18, desc.format(**fmt), 11, width=width - 40, gap=1.35)
        top = yd + 8
        # The tile grid.
        finisher = {u["tile"]: u for u in units if u["final"]}
        tile_at = {(u["m"], u["n"]): u["tile"] for u in units}
        owner = {}
        for u in units:
            for k in range(u["kb"], u["ke"]):
                owner[(u["tile"], k)] = u["block"]
        for n in range(tn):
            s.text(gx + n * slot_w + ks * kw / 2, top - 2, f"n {n}", 10, anchor="middle", fill=GREY)
        for m in range(tm):
            yt = top + 4 + m * slot_h
            s.text(gx - 10, yt + 22, f"m {m}", 10, anchor="end", fill=GREY)
            for n in range(tn):
                t = tile_at[(m, n)]
                xt = gx + n * slot_w
                s.text(xt, yt + 9, f"t{t}", 9, fill=GREY, check=False)
                for k in range(ks):
                    b = owner[(t, k)]
                    s.rect(xt + k * kw, yt + 12, kw, kh, fill=BLOCK_TINTS[b], stroke="#ffffff")
                    cell_text(s, xt + k * kw, yt + 12 + 13, kw, f"{b}", 9)
                s.rect(xt, yt + 12, ks * kw, kh, stroke=DARK, sw=1)
                f = finisher[t]
                adds = sorted({units_by(units, a)["block"] for a in f["adds"]})
                label = f"C: b{f['block']}" + (" + " + ", ".join(f"b{b}" for b in adds) if adds else "")
                s.text(xt, yt + 12 + kh + 11, label, 9, weight="bold" if adds else "normal")
        # The time lines.
        for b in range(blocks):
            yl = top + 6 + b * 30
            s.text(tx - 8, yl + 14, f"b{b}", 11, anchor="end")
            x = tx
            for u in sorted((u for u in units if u["block"] == b), key=lambda u: u["j"]):
                w = (u["ke"] - u["kb"]) * step
                shared = u["ke"] - u["kb"] < ks
                extra = ' stroke-dasharray="4,2"' if not u["final"] else ""
                s.rect(x, yl, w, 20, fill=BLOCK_TINTS[b], stroke=DARK, sw=2.2 if u["final"] and u["adds"] else 1,
                       extra=extra)
                for k in range(1, u["ke"] - u["kb"]):
                    s.line(x + k * step, yl + 15, x + k * step, yl + 20, stroke="#ffffff", sw=1)
                label = f"t{u['tile']}"
                if shared and fits(f"{label} k{u['kb']}–{u['ke'] - 1}", 10, w - 4):
                    label = f"{label} k{u['kb']}–{u['ke'] - 1}"
                cell_text(s, x, yl + 14, w, label, 10)
                x += w
        for k in range(0, max(busiest.values()) + 1, 4):
            s.text(tx + k * step, top + 6 + blocks * 30 + 2, f"{k}", 9, anchor="middle", fill=GREY)
        xb = tx + busiest[name] * step
        s.line(xb, top, xb, top + 6 + blocks * 30 - 8, stroke=RED, sw=2, dash="5,3")
        y = top + max(tm * slot_h, blocks * 30 + 14) + 22
    # Legend.
    yl = y - 4
    s.rect(20, yl, 26, 14, fill=BLOCK_TINTS[0], stroke=DARK, sw=1, extra=' stroke-dasharray="4,2"')
    s.text(54, yl + 11, "dashed: the unit leaves a partial sum in the workspace (fp32, the warpgroups' accumulators)",
           11)
    s.rect(20, yl + 20, 26, 14, fill=BLOCK_TINTS[0], stroke=DARK, sw=2.2)
    s.text(54, yl + 31, "bold: the finisher: waits for those partial sums, adds them in a fixed order "
                        "(bit-identical runs), stores C", 11)
    s.text(20, yl + 54, "C: b1 + b0 = block 1 stores the tile, after adding block 0's partial sum. t = the tile's "
                        "position in the grouped order.", 11)
    s.text(20, yl + 72, "every unit is one the schedulers of gemm/tile_scheduler_sm90.hpp hand out, walked for each "
                        "block, their fixups run on the host", 10, fill=GREY)
    s.text(20, yl + 86, "(tools/diagrams/hopper_kernel_dump)", 10, fill=GREY)
    s.height = int(yl + 98)
    return s


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def units_by(units: list[dict], key: tuple[int, int]) -> dict:
    for u in units:
        if (u["block"], u["j"]) == key:
            return u
    raise BadFacts(f"no unit {key}")


# ---- 2. Cooperative against ping-pong (schematic) ----------------------------------------------------
#
# A block's 4 units (tiles of 128 rows). MAIN: the tensor core's time for one tile's main loop, whoever
# issues it; EPI: one warpgroup storing 64 rows of it. Cooperative: both consumers on each tile (64 rows
# each), both storing at once, the tensor core idle meanwhile. Ping-pong: consumer c on units c, c + 2
# (all 128 rows: 2·EPI to store), its turn barrier passed by the other after that one's main loop.

PP_UNITS, PP_MAIN, PP_EPI = 4, 6.0, 2.0


def pingpong_model():
    coop = {0: [], 1: []}
    t = 0.0
    for u in range(PP_UNITS):
        for c in (0, 1):
            coop[c].append(("main", t, t + PP_MAIN, u))
            coop[c].append(("epi", t + PP_MAIN, t + PP_MAIN + PP_EPI, u))
        t += PP_MAIN + PP_EPI
    coop_tc = [("main", u * (PP_MAIN + PP_EPI), u * (PP_MAIN + PP_EPI) + PP_MAIN, u) for u in range(PP_UNITS)]
    coop_end = t
    pp = {0: [], 1: []}
    tc_free, ready = 0.0, {0: 0.0, 1: 0.0}
    turns = []  # (time, from consumer, to consumer)
    pp_tc = []
    for u in range(PP_UNITS):
        c = u % 2
        start = max(tc_free, ready[c])  # its turn: the other consumer's main loop has been issued
        if start > ready[c] + 1e-9:
            pp[c].append(("wait", ready[c], start, u))
        pp[c].append(("main", start, start + PP_MAIN, u))
        pp_tc.append(("main", start, start + PP_MAIN, u))
        tc_free = start + PP_MAIN
        if u + 1 < PP_UNITS:
            turns.append((tc_free, c, 1 - c))
        pp[c].append(("epi", tc_free, tc_free + 2 * PP_EPI, u))
        ready[c] = tc_free + 2 * PP_EPI
    pp_end = max(ready.values())
    return coop, coop_tc, coop_end, pp, pp_tc, turns, pp_end


def draw_pingpong() -> Svg:
    coop, coop_tc, coop_end, pp, pp_tc, turns, pp_end = pingpong_model()
    end = max(coop_end, pp_end)
    width, x0 = 880, 178
    px = (width - 30 - x0) / end
    X = lambda t: x0 + t * px  # noqa: E731
    s = Svg("hopper_pingpong", width, 2000)
    s.text(20, 24, "Cooperative against ping-pong consumers: who keeps the tensor core busy while a tile is stored",
           14, weight="bold")
    s.text(20, 44, f"schematic, a model (no measured times): one block, 4 tiles of 128 rows; a tile's main loop "
                   f"= {PP_MAIN:.0f} units of", 12)
    s.text(20, 62, f"tensor-core time, storing 64 rows of it = {PP_EPI:.0f} units; the producer warpgroup (not "
                   "drawn) loads the tiles in order", 12)
    fills = {"main": BLUE, "epi": "#d9ead3", "wait": "#eeeeee"}

    def seg(kind, a, b, y, label, h=26):
        s.rect(X(a), y, X(b) - X(a), h, fill=fills[kind], stroke=DARK if kind != "wait" else GREY)
        if label and fits(label, 10, X(b) - X(a) - 4):
            cell_text(s, X(a), y + 17, X(b) - X(a), label, 10, fill="white" if kind == "main" else DARK)

    def lanes(y, title, names, gap=40):
        s.text(20, y, title, 13, weight="bold")
        ys = {}
        for i, (key, top, sub) in enumerate(names):
            yy = y + 14 + i * gap
            ys[key] = yy
            s.text(20, yy + 12, top, 12)
            if sub:
                s.text(20, yy + 25, sub, 10, fill=GREY)
        return ys

    # Cooperative.
    ys = lanes(96, "cooperative (GemmKernelCooperative): both consumers on every tile, 64 rows each",
               [(0, "consumer 0", "warpgroup 1, rows 0–63"), (1, "consumer 1", "warpgroup 2, rows 64–127"),
                ("tc", "tensor core", "")])
    for c in (0, 1):
        for kind, a, b, u in coop[c]:
            seg(kind, a, b, ys[c], f"main loop u{u}" if kind == "main" else "store")
    for kind, a, b, u in coop_tc:
        seg(kind, a, b, ys["tc"], f"u{u}")
        if b + PP_EPI <= coop_end + 1e-9:
            s.rect(X(b), ys["tc"], PP_EPI * px, 26, fill="#f6d5d1", stroke=RED)
            cell_text(s, X(b), ys["tc"] + 17, PP_EPI * px, "idle", 10, fill=RED)
    s.line(X(coop_end), ys[0] - 6, X(coop_end), ys["tc"] + 32, stroke=RED, sw=2)
    s.text(X(coop_end) - 4, ys["tc"] + 44, f"4 tiles: {coop_end:.0f} units", 11, anchor="end", fill=RED,
           weight="bold")
    # Ping-pong.
    ys2 = lanes(ys["tc"] + 82, "ping-pong (GemmKernelPingpong): each consumer on its own tiles, taking turns on "
                               "the tensor core",
                [(0, "consumer 0", "warpgroup 1: u0, u2"), (1, "consumer 1", "warpgroup 2: u1, u3"),
                 ("tc", "tensor core", "")], gap=48)
    for c in (0, 1):
        for kind, a, b, u in pp[c]:
            seg(kind, a, b, ys2[c], {"main": f"main loop u{u}", "epi": f"store u{u}", "wait": "wait turn"}[kind])
    for kind, a, b, u in pp_tc:
        seg(kind, a, b, ys2["tc"], f"u{u}")
    tc_end = max(b for _, _, b, _ in pp_tc)
    if tc_end < pp_end - 1e-9:
        s.rect(X(tc_end), ys2["tc"], X(pp_end) - X(tc_end), 26, fill="#f6d5d1", stroke=RED)
        cell_text(s, X(tc_end), ys2["tc"] + 17, X(pp_end) - X(tc_end), "idle", 10, fill=RED)
    for t, frm, to in turns:
        y_from, y_to = ys2[frm], ys2[to]
        if y_from < y_to:
            s.line(X(t), y_from + 27, X(t), y_to - 1, stroke=RED, sw=2.5, arrow="end")
        else:
            s.line(X(t), y_from - 1, X(t), y_to + 27, stroke=RED, sw=2.5, arrow="end")
        s.text(X(t) + 7, (min(y_from, y_to) + 26 + max(y_from, y_to)) / 2 + 4, "turn", 10, fill=RED, weight="bold")
    s.line(X(pp_end), ys2[0] - 6, X(pp_end), ys2["tc"] + 32, stroke=GREEN, sw=2)
    s.text(X(pp_end) - 4, ys2["tc"] + 44, f"4 tiles: {pp_end:.0f} units", 11, anchor="end", fill=GREEN, weight="bold")
    s.text(X(0), ys2["tc"] + 44, "turn: a bar.arrive that ends the other's bar.sync", 11,
           fill=RED)
    # Legend and notes.
    yl = ys2["tc"] + 70
    for i, (kind, label) in enumerate((("main", "main loop: wait for stages, issue wgmma"),
                                       ("epi", "epilogue: store the tile to C"),
                                       ("wait", "waiting for its turn (bar.sync)"))):
        xl = 20 + i * 280
        s.rect(xl, yl - 11, 22, 13, fill=fills[kind], stroke=DARK if kind != "wait" else GREY)
        s.text(xl + 28, yl, label, 11)
    y = s.para(20, yl + 26, "Cooperative: both warpgroups finish a tile's main loop together and store together, so "
                            "the tensor core idles during every epilogue. Ping-pong: when a consumer has issued its "
                            "main loop it arrives on the other's turn barrier (bar.arrive, named barrier "
                            "kTurnBarrier + other), and the other's bar.sync returns: the other's main loop runs "
                            "while this one stores. The price: a consumer holds all 128 rows of its tile in "
                            "registers (twice the cooperative's accumulators), and the ring's stages alternate "
                            "owners unit by unit (each consumer skips the other's).", 11, gap=1.45)
    s.text(20, y + 4, "a schematic of gemm/kernel_sm90.hpp's two kernels; chapter 11 measures them", 10, fill=GREY)
    s.height = int(y + 16)
    return s


# ---- 2b. Block-scaled fp8: the wgmma, the wait, the promotion (chapter 12, step 3) --------------------

# The K step of fp8_block_scaled (chapters/12_hopper_datatypes/fp8_block_scaled.cuh): BK = 128 e4m3 (one
# scale block) in kHalves = BN / HalfN = 2 halves of 128 columns; per half BK / 32 = 4 wgmma m64n128k32
# into `partial`, warpgroup_wait<0>, then the promotion acc += partial · scale_a · scale_b (64 values a
# thread). Model units (no measured times): a wgmma k32 keeps the tensor core 2 units, the wait's drain
# after the last one FP_DRAIN, the promotion FP_PROMOTE, and a scale read after the wait (the first version)
# FP_LOAD more.
FP_WGMMA, FP_PER_HALF, FP_HALVES, FP_DRAIN, FP_PROMOTE, FP_LOAD, FP_KBLOCKS = 2.0, 4, 2, 1.5, 3.0, 7.0, 2


def fp8_model(consumers: int, load: float, lockstep: bool = False):
    """The segments of each consumer warpgroup and the tensor core over FP_KBLOCKS K blocks. Taking turns
    (the chapter's step): each warpgroup issues a half's wgmma when the tensor core is free and its
    previous promotion is done, so the two warpgroups' groups queue one behind the other. `lockstep` (no
    turns): both warpgroups issue each half together, the tensor core interleaves the two groups, both
    finish at the end of the pair and both drain and promote together."""
    mma = FP_WGMMA * FP_PER_HALF
    lanes = {c: [] for c in range(consumers)}
    tc = []
    ready = {c: 0.0 for c in range(consumers)}
    done = {c: 0 for c in range(consumers)}
    halves = FP_HALVES * FP_KBLOCKS
    tc_free = 0.0
    if lockstep:
        for h in range(halves):
            start = max(max(ready.values()), tc_free)
            end_pair = start + consumers * mma
            for c in range(consumers):
                lanes[c].append(("mma", start, end_pair, h))
                tc.append(("mma", start + c * mma, start + (c + 1) * mma, (c, h)))
                t = end_pair
                lanes[c].append(("drain", t, t + FP_DRAIN, h))
                t += FP_DRAIN
                lanes[c].append(("promote", t, t + FP_PROMOTE, h))
                ready[c] = t + FP_PROMOTE
            tc_free = end_pair
        end = max(ready.values())
        return lanes, tc, end, sum(b - a for _, a, b, _ in tc) / end
    while any(done[c] < halves for c in range(consumers)):
        c = min((c for c in range(consumers) if done[c] < halves), key=lambda c: (max(ready[c], tc_free), c))
        start = max(ready[c], tc_free)
        if start > ready[c] + 1e-9 and done[c] > 0:
            lanes[c].append(("wait", ready[c], start, done[c]))
        h = done[c]
        lanes[c].append(("mma", start, start + mma, h))
        tc.append(("mma", start, start + mma, (c, h)))
        tc_free = start + mma
        t = start + mma
        lanes[c].append(("drain", t, t + FP_DRAIN, h))
        t += FP_DRAIN
        if load:
            lanes[c].append(("load", t, t + load, h))
            t += load
        lanes[c].append(("promote", t, t + FP_PROMOTE, h))
        ready[c] = t + FP_PROMOTE
        done[c] += 1
    end = max(ready.values())
    busy = sum(b - a for _, a, b, _ in tc)
    return lanes, tc, end, busy / end


def draw_fp8_promotion() -> Svg:
    panels = [(1, 0.0, False, "one math warpgroup: the tensor core waits for every drain and promotion"),
              (2, FP_LOAD, False, "two math warpgroups taking turns, a scale read after the wait: the other's "
                                  "wgmma do not cover the gap"),
              (2, 0.0, True, "two math warpgroups, scales read before the wgmma, no turns: both issue together, "
                             "finish together, promote together"),
              (2, 0.0, False, "the same taking turns (the chapter's step 3): each promotes while the other's "
                              "wgmma run")]
    models = [fp8_model(c, load, lockstep) for c, load, lockstep, _ in panels]
    end = max(m[2] for m in models)
    width, x0 = 880, 170
    px = (width - 30 - x0) / end
    X = lambda t: x0 + t * px  # noqa: E731
    s = Svg("hopper_fp8_promotion", width, 2000)
    s.text(20, 24, "Block-scaled fp8: a K block is two halves of wgmma, each waited for and promoted", 14,
           weight="bold")
    y = s.para(20, 44, f"Schematic, a model (no measured times) of fp8_block_scaled's K step: per half of 128 columns "
               f"{FP_PER_HALF} wgmma m64n128k32 into a scratch accumulator ({FP_PER_HALF * FP_WGMMA:.0f} units of tensor "
               f"core), warpgroup_wait<0> ({FP_DRAIN:g} units of drain), then the promotion acc += partial · scale_a · "
               f"scale_b, 64 FFMA a thread ({FP_PROMOTE:g} units); {FP_KBLOCKS} K blocks drawn.", 11,
               width=width - 40, gap=1.4)
    fills = {"mma": BLUE, "drain": "#fff2cc", "load": "#f4cccc", "promote": "#d9ead3", "wait": "#eeeeee"}
    labels = {"mma": "wgmma h{}", "drain": "", "load": "LDS", "promote": "prom.", "wait": ""}

    def seg(kind, a, b, yy, label, fill_text=DARK):
        s.rect(X(a), yy, X(b) - X(a), 24, fill=fills[kind], stroke=DARK if kind != "wait" else GREY, sw=0.8)
        if label and fits(label, 9, X(b) - X(a) - 2):
            cell_text(s, X(a), yy + 16, X(b) - X(a), label, 9, fill=fill_text)

    y += 16
    for (consumers, load, _, title), (lanes, tc, t_end, busy) in zip(panels, models):
        s.text(20, y, title, 12, weight="bold")
        y += 12
        for c in range(consumers):
            s.text(20, y + 16, f"math warpgroup {c + 1}", 11)
            for kind, a, b, h in lanes[c]:
                label = labels[kind].format(h % FP_HALVES) if kind == "mma" else labels[kind]
                seg(kind, a, b, y, label, "white" if kind == "mma" else DARK)
            y += 30
        s.text(20, y + 16, "tensor core", 11)
        for _, a, b, (c, h) in tc:
            seg("mma", a, b, y, f"wg{c + 1}", "white")
        idle = []
        t = 0.0
        for _, a, b, _ in sorted(tc, key=lambda x: x[1]):
            if a > t + 1e-9:
                idle.append((t, a))
            t = max(t, b)
        for a, b in idle:
            s.rect(X(a), y, X(b) - X(a), 24, fill="#f6d5d1", stroke=RED, sw=0.8)
        s.text(x0 - 8, y + 16, f"{100 * busy:.0f}% busy", 11, anchor="end", fill=RED if busy < 0.9 else GREEN,
               weight="bold")
        y += 46
    xl = 20
    for kind, label in (("mma", "wgmma (tensor core)"), ("drain", "wait<0>: drain"), ("load", "scale read after the wait"),
                        ("promote", "promotion (FFMA)"), ("wait", "waiting for the tensor core")):
        s.rect(xl, y - 11, 20, 13, fill=fills[kind], stroke=DARK if kind != "wait" else GREY, sw=0.8)
        s.text(xl + 25, y, label, 10)
        xl += 25 + len(label) * 6.0 + 22
    y = s.para(20, y + 24, "One warpgroup cannot keep the tensor core busy: the promotion reads the half's products, "
               "so it must wait for them, and nothing else issues wgmma meanwhile. A second warpgroup covers the "
               "gap only if its half is queued behind the first's: then it runs while the first drains and "
               "promotes, as long as a drain and a promotion are shorter than a half. A load on that path (the "
               "scales read from L2 or shared memory after the wait) makes them longer, and the gap shows. Left "
               "alone, the two warpgroups fall into lock-step (both wait on the same stage, both issue when it "
               "lands): the tensor core interleaves their wgmma, and both drain and promote while it idles. "
               "Taking turns at a barrier (cuBLASLt's order) keeps one behind the other. The page measures the "
               "stall samples on the wait: 31.6% of the kernel's without turns, 18.1% with them.", 11,
               width=width - 40, gap=1.4)
    s.text(20, y + 4, "a schematic of chapters/12_hopper_datatypes/fp8_block_scaled.cuh's K step (CollectiveMmaBlockScaled)",
           10, fill=GREY)
    s.height = int(y + 16)
    return s


# ---- 3. The cluster's multicast -----------------------------------------------------------------------

def draw_multicast(F: Facts) -> Svg:
    cl, cl4 = F.clusters[(2, 1)], F.clusters[(2, 2)]
    A, B, Bk = F.boxes[("A", "K")], F.boxes[("B", "MN")], F.boxes[("B", "K")]
    cons = cl["consumers"]
    kib = lambda b: f"{b // 1024} KB"  # noqa: E731
    W = 880
    s = Svg("hopper_multicast", W, 1000)
    s.text(20, 24, "TMA multicast: a cluster of 2 blocks along M shares B's tile (chapter 10's cluster_multicast)",
           14, weight="bold")
    s.text(20, 44, f"one stage of the ring (RRR, 128×256 tiles, K step 64): each block loads its own A "
                   f"({A['boxes']} box) and {B['per_block']} of B's {B['boxes']} boxes;", 12)
    s.text(20, 62, "a multicast box lands in both blocks, at the same shared-memory offset; colour = the block "
                   "whose producer issues it", 12)
    # Global memory strip.
    gy = 108
    s.text(20, gy - 14, f"global memory: each block's 128 rows of A; B's 64 k × 256 n in {B['boxes']} boxes of "
                        f"{kib(B['list'][0]['bytes'])}", 12, weight="bold")
    bw = 64  # a B box
    bx0 = W / 2 - 2 * bw
    a_x = [40, W - 40 - 170]
    for r in range(2):
        s.rect(a_x[r], gy, 170, 40, fill=RANK_TINTS[r], stroke=DARK)
        cell_text(s, a_x[r], gy + 17, 170, f"A rows of rank {r}'s tile", 11)
        cell_text(s, a_x[r], gy + 32, 170, f"128 × 64 k: {kib(A['list'][0]['bytes'])}", 10)
    for bb in B["list"]:
        x = bx0 + bb["b"] * bw
        s.rect(x, gy, bw, 40, fill=RANK_TINTS[bb["rank"]], stroke=DARK)
        cell_text(s, x, gy + 17, bw, f"B box {bb['b']}", 10)
        cell_text(s, x, gy + 32, bw, f"n {bb['o0']}–{bb['o0'] + bb['e0'] - 1}", 9)
    # The blocks: the stage along the top edge, then the barriers.
    by, bh, bwid = 250, 172, 380
    bxs = [20, W - 20 - bwid]
    stage_y = by + 14
    full_y, empty_y = by + 66, by + 110
    ex_w = 74                                   # the barriers' boxes
    a_w, b_w = 80, 48                           # the stage's A and B boxes
    stage_x = lambda r: bxs[r] + 78             # noqa: E731
    for r in range(2):
        x = bxs[r]
        s.rect(x, by, bwid, bh, fill="#fafafa", stroke=RANK_COLOURS[r], sw=2.5)
        s.text(x + bwid - 10, by + bh - 10, f"block rank {r}", 12, anchor="end", weight="bold", fill=RANK_COLOURS[r])
        s.text(x + 10, stage_y + 22, "stage s", 11, weight="bold")
        sx = stage_x(r)
        s.rect(sx, stage_y, a_w, 36, fill=RANK_TINTS[r], stroke=DARK)
        cell_text(s, sx, stage_y + 15, a_w, "A", 11)
        cell_text(s, sx, stage_y + 29, a_w, kib(A["tx"]), 10)
        for bb in B["list"]:
            xx = sx + a_w + 16 + bb["b"] * b_w
            s.rect(xx, stage_y, b_w, 36, fill=RANK_TINTS[bb["rank"]], stroke=DARK)
            cell_text(s, xx, stage_y + 15, b_w, f"B {bb['b']}", 10)
            cell_text(s, xx, stage_y + 29, b_w, f"by {bb['rank']}", 9)
        for yy, name in ((full_y, "full[s]"), (empty_y, "empty[s]")):
            s.rect(x + 10, yy, ex_w, 30, fill="#ffffff", stroke=DARK, sw=1.5)
            cell_text(s, x + 10, yy + 19, ex_w, name, 11, weight="bold")
        own = [bb for bb in B["list"] if bb["rank"] == r]
        s.text(x + ex_w + 20, full_y + 12, f"init 1: its producer arms it, expect {A['tx'] + B['tx']} B", 10)
        s.text(x + ex_w + 20, full_y + 26, f"= A {kib(A['tx'])} + B {kib(B['tx'])} ({len(own)} own boxes, "
                                           f"{B['boxes'] - len(own)} the peer's)", 10)
        s.text(x + ex_w + 20, empty_y + 12, f"init {cl['empty']} = {cons} warpgroups × (2 + 1 − 1) blocks",
               10)
        s.text(x + ex_w + 20, empty_y + 26, "a release from every warpgroup of both blocks", 10)
    # Arrows into the stages: A from the block's own rows, B's halves into both blocks.
    for r in range(2):
        s.line(a_x[r] + 85, gy + 40, stage_x(r) + a_w / 2, stage_y - 1, stroke=RANK_COLOURS[r], sw=2, arrow="end")
    for r in range(2):
        src_x = bx0 + (2 * r + 1) * bw
        for d in range(2):
            dst_x = stage_x(d) + a_w + 16 + (2 * r + 1) * b_w
            s.line(src_x + (10 if d else -10), gy + 40, dst_x, stage_y - 1, stroke=RANK_COLOURS[r], sw=2,
                   arrow="end")
    # Consumers: each warpgroup releases stage s in both blocks (thread t in block t).
    cy = by + bh + 56
    s.text(20, cy + 56, "consumers: a warpgroup done with stage s releases it in both blocks (thread t in block t)",
           12, weight="bold")
    src = [(r, w) for r in range(2) for w in range(cons)]
    for r, w in src:
        x = bxs[r] + 30 + w * 190
        s.rect(x, cy, 150, 34, fill=RANK_TINTS[r], stroke=RANK_COLOURS[r], sw=1.5)
        cell_text(s, x, cy + 14, 150, f"rank {r}, warpgroup {w + 1}", 11)
        ts = cl["releases"][r]
        cell_text(s, x, cy + 28, 150, "threads " + ", ".join(f"{t}→rank {t}" for t in ts), 9)
        for d in ts:
            ex = bxs[d] + 10 + 10 + src.index((r, w)) * (ex_w - 20) / (len(src) - 1)
            s.line(x + 55 + 40 * d, cy, ex, empty_y + 31, stroke=RANK_COLOURS[r], sw=1.5, arrow="end")
    # Notes.
    y = cy + 82
    y = s.para(20, y, f"full[s]: one arrival (the arm: arrive.expect_tx with the whole stage, {A['tx'] + B['tx']} B) "
                      "and the bytes: each box counts down the barrier at its own offset in every block it lands "
                      "in, so a block's full barrier completes only when its peer's multicast has landed too.", 11,
               gap=1.45)
    y = s.para(20, y + 2, f"empty[s]: rank 0 multicasts into rank 1's stage, so it may refill stage s only after "
                          f"rank 1's consumers released it too: {cons} warpgroups × (ClusterM + ClusterN − 1 = 2) "
                          f"blocks = {cl['empty']} releases (PipelineTmaAsync::empty_arrivals).", 11, gap=1.45)
    mates = cl4["releases"][0]
    y = s.para(20, y + 2, f"In a 2 × 2 cluster block 0 shares B with block 1 (same columns) and A with block 2 (same "
                          f"rows): {len(mates)} blocks write into its stages, its empty barriers count {cons} × "
                          f"(2 + 2 − 1) = {cl4['empty']}, and its warpgroups' threads {', '.join(map(str, mates))} "
                          f"release (releases_in). In RCR, B's K-major stage is {Bk['boxes']} boxes of "
                          f"{Bk['list'][0]['e0']} rows: {Bk['per_block']} per block.", 11, gap=1.45)
    s.text(20, y + 4, "from gemm/pipeline.hpp (empty_arrivals, releases_in) and layout/copy_traits_sm90_tma.hpp "
                      "(TmaBoxes), via tools/diagrams/hopper_kernel_dump", 10, fill=GREY)
    s.height = int(y + 16)
    return s


# ---- 4. swap-AB ----------------------------------------------------------------------------------------

def draw_swap_ab(F: Facts) -> Svg:
    sw = F.swap
    M, N, BM, BN = sw["M"], sw["N"], sw["BM"], sw["BN"]
    s = Svg("hopper_swap_ab", 880, 2000)
    s.text(20, 24, f"swap-AB: C = A·Bᵀ with M = {M} computed as Cᵀ = B·Aᵀ (chapter 11's swap_ab, M = {M}, "
                   f"N = {N})", 14, weight="bold")
    s.text(20, 44, "wgmma's M is 64 rows per warpgroup, fixed; its N is 8 to 256: B's N rows take the M side, "
                   f"A's {M} rows the N side", 12)
    # The kernel's product: X = B (rows × K) to the left, Yᵀ = Aᵀ (K × BN) above, the tile of Cᵀ.
    rh = 1.6       # px per row of the tile
    kx = 110       # px for K
    tile_x, tile_y = 40 + kx + 14, 100 + 80 + 14
    tw, th = BN * 8, BM * rh
    s.text(20, 80, "the kernel's product (operands exchanged)", 12, weight="bold")
    s.rect(40, tile_y, kx, th / 2, fill="#cfe2f3", stroke=DARK)
    s.rect(40, tile_y + th / 2, kx, th / 2, fill="#d9ead3", stroke=DARK)
    cell_text(s, 40, tile_y + 18, kx, "B rows 0–63", 10)
    cell_text(s, 40, tile_y + 32, kx, "(K-major)", 10)
    cell_text(s, 40, tile_y + th / 2 + 18, kx, "B rows 64–127", 10)
    s.text(40 + kx / 2, tile_y + th + 16, "X = B: M side", 10, anchor="middle", weight="bold")
    s.text(40 + kx / 2, tile_y + th + 30, f"{BM} rows of N", 10, anchor="middle")
    s.rect(tile_x, 100, tw, 80, fill="#fce5cd", stroke=DARK)
    cell_text(s, tile_x, 130, tw, "Aᵀ", 11, weight="bold")
    cell_text(s, tile_x, 146, tw, f"{M} rows of A", 10)
    s.text(tile_x + tw + 8, 130, f"Y = A: N side (wgmma N = {BN})", 10, weight="bold")
    s.text(tile_x + tw + 8, 146, "K-major too: the same TMA copies", 10)
    s.rect(tile_x, tile_y, tw, th / 2, fill="#cfe2f3", stroke=DARK, sw=1.5)
    s.rect(tile_x, tile_y + th / 2, tw, th / 2, fill="#d9ead3", stroke=DARK, sw=1.5)
    cell_text(s, tile_x, tile_y + th / 4 + 4, tw, "warpgroup 0", 10)
    cell_text(s, tile_x, tile_y + th / 4 + 18, tw, "rows 0–63", 9)
    cell_text(s, tile_x, tile_y + 3 * th / 4 + 4, tw, "warpgroup 1", 10)
    cell_text(s, tile_x, tile_y + 3 * th / 4 + 18, tw, "rows 64–127", 9)
    s.text(40 + kx / 2, tile_y - 6, "K →", 10, anchor="middle", fill=GREY)
    s.text(tile_x - 6, 100 + 44, "K ↓", 10, anchor="end", fill=GREY)
    # The zoomed rows: a bracket.
    zr = 16
    s.rect(tile_x - 2, tile_y - 1, tw + 4, zr * rh + 2, stroke=RED, sw=1.5)
    # C (M × N) to the right, at scale.
    cx, cy = 420, tile_y
    cw_px = 420 / N
    ch = 8
    s.text(cx, cy - 26, f"C = A·Bᵀ: {M} × {N}, row-major (pitch N = {N})", 12, weight="bold")
    s.rect(cx, cy, N * cw_px, M * ch, fill="#f3f3f3", stroke=GREY)
    s.rect(cx, cy, BM * cw_px, M * ch / 1, fill="none", stroke=DARK, sw=1.5)
    for r0, fill in ((0, "#cfe2f3"), (64, "#d9ead3")):
        s.rect(cx + r0 * cw_px, cy, 64 * cw_px, M * ch, fill=fill, stroke=DARK)
    cell_text(s, cx, cy - 6, BM * cw_px, f"columns 0–{BM - 1}: this tile", 10)
    cell_text(s, cx + BM * cw_px, cy - 6, (N - BM) * cw_px, f"{BM}–{N - 1}: the next tile", 10, fill=GREY)
    s.text(cx - 6, cy + 10, "row 0", 9, anchor="end", fill=GREY)
    s.text(cx - 6, cy + M * ch, f"row {M - 1}", 9, anchor="end", fill=GREY)
    ya = cy + M * ch / 2
    s.line(tile_x + tw + 10, ya, cx - 8, ya, stroke=DARK, sw=1.5, arrow="end")
    s.text(tile_x + tw + 12, ya - 24, "tile of Cᵀ", 11, weight="bold")
    s.text(tile_x + tw + 12, ya - 8, f"{BM} × {BN}", 11)
    s.text(tile_x + tw + 12, ya + 20, "stored", 11)
    s.text(tile_x + tw + 12, ya + 36, "transposed", 11)
    s.rect(cx - 1, cy - 1, zr * cw_px + 2, M * ch + 2, stroke=RED, sw=1.5)
    s.text(cx, cy + M * ch + 20, "element (r, q) of the tile of Cᵀ is C's (q, r), at C[q·N + r]:", 11,
           weight="bold")
    s.text(cx, cy + M * ch + 38, f"the register epilogue (CollectiveEpilogueStrided) with row", 11)
    s.text(cx, cy + M * ch + 54, f"stride {sw['row_stride']} and column stride {sw['col_stride']}: C's layout "
                                 "transposed on the host", 11)
    s.text(cx, cy + M * ch + 70, "(to_underlying_arguments(C, n, m, 1, n)); the kernel is split_k's", 11)
    # Zoom: rows 0-15 of the tile; each cell: the thread and value that hold it, and where in C it goes.
    where = {}
    for (cw, t), offs in F.swap_store.items():
        for v, off in enumerate(offs):
            r, q = off % sw["col_stride"], off // sw["col_stride"]
            where[(r, q)] = (cw, t, v, off)
    zx, zy = 60, tile_y + th + 92
    cwz, chz = 46, 28
    s.text(20, zy - 42, f"rows 0–{zr - 1} of the tile of Cᵀ (the red frame: warp 0 of warpgroup 0)", 12,
           weight="bold")
    s.text(20, zy - 24, "a cell: the thread T and the value d that hold the element, and (bold) the element's index "
                        "in C", 11)
    for q in range(BN):
        s.text(zx + q * cwz + cwz / 2, zy - 8, f"q {q}", 9, anchor="middle", fill=GREY)
    for r in range(zr):
        y = zy + r * chz
        s.text(zx - 6, y + 18, f"r {r}", 9, anchor="end", fill=GREY)
        for q in range(BN):
            cw, t, v, off = where[(r, q)]
            hot = t == 0 and cw == 0
            s.rect(zx + q * cwz, y, cwz, chz, fill=WARP_TINTS[t % 4],
                   stroke=DARK if hot else "#ffffff", sw=2.2 if hot else 1)
            cell_text(s, zx + q * cwz, y + 11, cwz, f"T{t} d{v}", 8)
            cell_text(s, zx + q * cwz, y + 24, cwz, f"{off}", 9, weight="bold")
    yb = zy + zr * chz + 22
    t0 = F.swap_store[(0, 0)]
    lanes_d0 = sorted(F.swap_store[(0, t)][0] for t in range(0, 32, 4))
    y = s.para(20, yb, f"Thread 0 (outlined) holds d0 and d1 at (0, 0) and (0, 1): C[{t0[0]}] and C[{t0[1]}], "
                       f"{t0[1] - t0[0]} apart, one in each of two rows of C (colour: lane % 4, the columns a lane "
                       f"holds). Down a column of the tile is along a row of C: lanes 0, 4, ..., 28 store their d0 "
                       f"to C[{lanes_d0[0]}] ... C[{lanes_d0[-1]}], {len(lanes_d0)} consecutive bf16 in one store "
                       f"instruction. At M = {M} the product is bound by reading B (the weights), and these "
                       f"scattered stores of a {M} × {BM} piece of C cost little.", 11, gap=1.45)
    s.text(20, y + 4, "from gemm/collective_epilogue_sm90.hpp: CollectiveEpilogueStrided's store, run on the host for "
                      "both warpgroups (hopper_kernel_dump)", 10, fill=GREY)
    s.height = int(y + 16)
    return s


# ---- 5. wgmma's accumulators and stmatrix -------------------------------------------------------------

HOT_THREAD = 5


def draw_accumulators(F: Facts) -> Svg:
    nn = min(F.acc)
    cells = F.acc[nn]
    cw, ch, x0, y0 = 50, 22, 60, 120
    s = Svg("hopper_wgmma_accumulators", 880, 2000)
    s.text(20, 24, f"wgmma's accumulators: which thread of the warpgroup holds which element (64 × N, N = {nn} "
                   "drawn)", 14, weight="bold")
    s.text(20, 44, f"a cell = one fp32 value: T = the thread (0–127), d = its register (0–{nn // 2 - 1}); colour = "
                   "the warp (T / 32)", 12)
    s.text(20, 62, f"N = {nn} keeps it readable: a wider tile repeats columns 0–7 every 8 columns with d + 4 "
                   "(N = 256: d0–d127)", 12)
    s.text(20, 80, f"outlined: thread {HOT_THREAD}'s {nn // 2} values. Warp 0's rows 0–15 (in full) are mma.sync's "
                   "m16n8 C fragment along N", 12)
    for n in range(nn):
        s.text(x0 + n * cw + cw / 2, y0 - 6, f"n {n}", 9, anchor="middle", fill=GREY)
    for m in range(16):
        y = y0 + m * ch
        s.text(x0 - 8, y + 15, f"m {m}", 9, anchor="end", fill=GREY)
        for n in range(nn):
            t, i = cells[(m, n)]
            hot = t == HOT_THREAD
            s.rect(x0 + n * cw, y, cw, ch, fill=WARP_TINTS[t // 32], stroke=DARK if hot else "#ffffff",
                   sw=2.2 if hot else 1)
            cell_text(s, x0 + n * cw, y + 15, cw, f"T{t} d{i}", 10, weight="bold" if hot else "normal")
    # Warps 1-3: the same pattern 16·w rows down, threads 32·w on (checked here, drawn as bands).
    band = 4
    for w in range(1, 4):
        for m in range(16):
            for n in range(nn):
                t, i = cells[(m, n)]
                if cells[(16 * w + m, n)] != (t + 32 * w, i):
                    raise BadFacts(f"acc {nn}: row {16 * w + m} is not row {m} with the threads of warp {w}")
        y = y0 + 16 * ch + (w - 1) * 16 * band
        s.rect(x0, y, nn * cw, 16 * band, fill=WARP_TINTS[w], stroke="#ffffff")
        s.text(x0 - 8, y + 16 * band / 2 + 4, f"m {16 * w}–{16 * w + 15}", 9, anchor="end", fill=GREY)
        cell_text(s, x0, y + 16 * band / 2 + 4, nn * cw, f"warp {w} (T{32 * w}–T{32 * w + 31}): rows "
                  f"{16 * w}–{16 * w + 15} hold rows 0–15's pattern with T + {32 * w}", 11)
    # stmatrix of one 64×64 chunk: warp 0's rows.
    ys = y0 + 16 * ch + 3 * 16 * band + 44
    s.text(20, ys, "The TMA-store epilogue: stmatrix.x4 writes 64 columns of them, as bf16, to shared memory", 13,
           weight="bold")
    y = s.para(20, ys + 20, "Chunk j = 0 of a 64×N tile (N ≥ 64; chapter 10: N = 256), its rows 0–15, which warp 0 "
                            "writes (warp w: rows 16w–16w+15, the same way). A cell = 8 bf16 of a row (16 bytes): q = "
                            "which of the warp's 4 stores writes it, L = the lane that gives the row's address, r = "
                            "the register (matrix) it comes from, as the colour; second line: the 4 lanes whose "
                            "values fill it, and which of their values.", 12, gap=1.45)
    gw, gh = 100, 30
    gx, gy = 60, y + 26
    addr = {}
    for lane in range(32):
        for q in range(4):
            addr[F.stsm_addr[(0, lane, q)]] = (q, lane)
    for g in range(8):
        s.text(gx + g * gw + gw / 2, gy - 6, f"n {8 * g}–{8 * g + 7}", 9, anchor="middle", fill=GREY)
    for r in range(16):
        y = gy + r * gh
        s.text(gx - 8, y + 19, f"m {r}", 9, anchor="end", fill=GREY)
        for g in range(8):
            q, lane = addr[(r, 8 * g)]
            vals = sorted({F.stsm_elem[(r, 8 * g + c)][1] for c in range(8)})
            owners = sorted({F.stsm_elem[(r, 8 * g + c)][0] for c in range(8)})
            reg = lane // 8
            if vals != [F.stsm_reg[(0, q, reg)], F.stsm_reg[(0, q, reg)] + 1]:
                raise BadFacts(f"stmatrix row {r}, columns {8 * g}..: values {vals}, register {reg} of store {q}")
            addr_hot = lane == HOT_THREAD
            vals_hot = HOT_THREAD in owners
            s.rect(gx + g * gw, y, gw, gh, fill=MATRIX_TINTS[reg], stroke=DARK if addr_hot else "#ffffff",
                   sw=2.4 if addr_hot else 1)
            if vals_hot:
                s.rect(gx + g * gw + 3, y + 3, gw - 6, gh - 6, stroke=RED, sw=1.6, extra=' stroke-dasharray="3,2"')
            cell_text(s, gx + g * gw, y + 13, gw, f"q{q} L{lane} r{reg}", 10, weight="bold" if addr_hot else "normal")
            cell_text(s, gx + g * gw, y + 25, gw, f"T{owners[0]}–{owners[-1]} d{vals[0]},{vals[1]}", 9)
    yb = gy + 16 * gh + 24
    regs = ", ".join(f"r{reg} = d{F.stsm_reg[(0, 0, reg)]},{F.stsm_reg[(0, 0, reg)] + 1}" for reg in range(4))
    q_hot = [F.stsm_addr[(0, HOT_THREAD, q)] for q in range(4)]
    y = s.para(20, yb, f"Store q = 0: every lane's registers are {regs} (StsmAccumulatorMap::acc_index): the "
                       f"rows +0 and +8 of two 8-column groups. Lane {HOT_THREAD} (dark frame) gives the address of "
                       f"row {q_hot[0][0]} at columns {', '.join(str(c) for _, c in q_hot)} in stores q = 0–3 "
                       f"(row(warp, lane), col(q, lane)); its own values (red dashes) land in rows "
                       f"{c_layout(HOT_THREAD, 0)[0]} and {c_layout(HOT_THREAD, 2)[0]}: stmatrix moves each value from "
                       "the lane that holds it to the row another lane addresses.", 11, gap=1.45)
    s.text(20, y + 4, "from layout/mma_sm90.hpp's CLayout and gemm/epilogue_sm90.hpp's StsmAccumulatorMap (stmatrix "
                      "emulated), checked against the PTX ISA", 10, fill=GREY)
    s.height = int(y + 16)
    return s


EXPERT_TINTS = ["#9fc5e8", "#f9cb9c", "#b6d7a8", "#d5a6bd", "#ffe599", "#a2c4c9"]  # experts 0-5 of chapter 13


def draw_grouped(F: Facts) -> Svg:
    """Chapter 13: the tiles of a few experts on a few blocks, one launch per expert (the loop) against one
    grouped launch (PersistentGroupTileScheduler), each tile one unit of time (every tile has the same K)."""
    G = F.grouped
    if G is None or not F.gunits or not F.lunits:
        raise BadFacts("no grouped schedule")
    E, tn, bm, blocks, rows = G["experts"], G["tiles_n"], G["bm"], G["blocks"], G["rows"]
    tiles = [-(-r // bm) * tn for r in rows]
    # Every tile of every expert once in the grouped launch, and once in the loop.
    want = {(g, m, n) for g in range(E) for m in range(-(-rows[g] // bm)) for n in range(tn)}
    if sorted((u["g"], u["m"], u["n"]) for u in F.gunits) != sorted(want):
        raise BadFacts("grouped: the units are not every tile of every expert once")
    if sorted((u["g"], u["m"], u["n"]) for u in F.lunits) != sorted(want):
        raise BadFacts("loop: the launches' units are not every tile of every expert once")
    width, lane_h, cell = 880, 24, 44
    gap = 26  # between two launches of the loop: the launch, and the drain before it
    s = Svg("hopper_grouped", width, 2000)
    s.text(20, 24, f"{E} experts, one projection, {blocks} persistent blocks: a launch per expert against one grouped launch",
           14, weight="bold")
    y = s.para(20, 44, f"Expert g has M_g rows of tokens and {tn} column tiles; a tile is {bm} rows, so expert g has "
               f"ceil(M_g / {bm}) · {tn} tiles. Each cell is one tile, one unit of time (every tile has the same K); "
               "its colour is its expert.", 11, width=width - 40, gap=1.35)
    # The experts.
    y += 10
    x = 20
    for g in range(E):
        label = f"expert {g}: {rows[g]} rows, {tiles[g]} tiles"
        w = 14 + len(label) * 6.4
        s.rect(x, y, 12, 12, fill=EXPERT_TINTS[g % len(EXPERT_TINTS)], stroke=DARK, sw=0.8)
        s.text(x + 16, y + 10, label, 10.5)
        x += w + 10
        if x > width - 160 and g + 1 < E:
            x, y = 20, y + 18
    y += 34

    def lanes(top: float, title: str, note: str) -> float:
        s.text(20, top, title, 13, weight="bold")
        yy = s.para(20, top + 16, note, 11, width=width - 40, gap=1.35) + 6
        for b in range(blocks):
            s.text(58, yy + b * lane_h + 16, f"b{b}", 11, anchor="end")
        return yy

    # The loop: launch after launch, each on min(blocks, its tiles) blocks.
    launches = [g for g in range(E) if tiles[g] > 0]
    rounds = {g: 1 + max(u["j"] for u in F.lunits if u["g"] == g) for g in launches}
    total_loop = sum(rounds.values())
    top = lanes(y, f"A loop of GEMMs: {len(launches)} launches, {total_loop} rounds of tiles",
                "Each launch runs one expert's tiles; when they are fewer than the blocks, or not a multiple of them, "
                "blocks wait for the launch to end (grey). Expert 1 has no rows: no launch.")
    x0 = 64
    x = x0
    for i, g in enumerate(launches):
        for b in range(blocks):
            for j in range(rounds[g]):
                u = [u for u in F.lunits if u["g"] == g and u["block"] == b and u["j"] == j]
                xc, yc = x + j * cell, top + b * lane_h
                if u:
                    s.rect(xc, yc, cell, lane_h - 4, fill=EXPERT_TINTS[g % len(EXPERT_TINTS)], stroke="#ffffff", sw=1)
                    cell_text(s, xc, yc + 14, cell, f"e{g} {u[0]['m']},{u[0]['n']}", 9)
                else:
                    s.rect(xc, yc, cell, lane_h - 4, fill="#eeeeee", stroke="#ffffff", sw=1)
        x += rounds[g] * cell
        if i + 1 < len(launches):
            s.line(x + gap / 2, top - 4, x + gap / 2, top + blocks * lane_h, stroke=GREY, sw=1, dash="3,3")
            x += gap
    loop_end = x
    s.text(loop_end + 8, top + blocks * lane_h / 2 + 4, f"{total_loop} rounds + {len(launches) - 1} launch gaps", 11,
           fill=RED, weight="bold")
    y = top + blocks * lane_h + 30
    # The grouped launch.
    grounds = 1 + max(u["j"] for u in F.gunits)
    top = lanes(y, f"One grouped launch: {grounds} rounds of tiles",
                f"The scheduler lists every expert's tiles one after the other ({sum(tiles)} tiles) and block b takes "
                f"tiles b, b + {blocks}, b + {2 * blocks}, ...: one expert's last round is filled by the next expert's "
                "tiles. Cell: expert, tile row, tile column (gemm/tile_scheduler_group_sm90.hpp).")
    for u in F.gunits:
        xc, yc = x0 + u["j"] * cell, top + u["block"] * lane_h
        s.rect(xc, yc, cell, lane_h - 4, fill=EXPERT_TINTS[u["g"] % len(EXPERT_TINTS)], stroke="#ffffff", sw=1)
        cell_text(s, xc, yc + 14, cell, f"e{u['g']} {u['m']},{u['n']}", 9)
    s.text(x0 + grounds * cell + 8, top + blocks * lane_h / 2 + 4, f"{grounds} rounds", 11, fill=RED, weight="bold")
    y = top + blocks * lane_h + 24
    s.text(20, y, "every cell is a unit PersistentGroupTileScheduler (below) or PersistentTileScheduler (above) hands "
                  "out,", 10, fill=GREY)
    s.text(20, y + 14, "walked for each block on the host (tools/diagrams/hopper_kernel_dump)", 10, fill=GREY)
    s.height = int(y + 26)
    return s


GATE_TINT, UP_TINT, OUT_TINT = "#cfe2f3", "#fce5cd", "#d9ead3"


def draw_swiglu(F: Facts) -> Svg:
    """Chapter 13, step 3: the gate and up weights stacked by tile, a warpgroup's 64×256 accumulators with one
    thread's values (value i: a gate column, value i + 64: the same output's up column), and the 64×128 tile
    of SiLU(gate)·up the epilogue stores."""
    sg, st = F.swiglu, F.swiglu_thread
    nn, half, hot = sg["n"], sg["values"], st["t"]
    width = 880
    s = Svg("hopper_swiglu", width, 2000)
    s.text(20, 24, "Step 3: SiLU(gate)·up in the epilogue, from a tile's own accumulators", 14, weight="bold")
    y = s.para(20, 44, f"A tile of the gate+up GEMM is {nn} columns: the caller stacks each expert's weights so that "
               f"its first {nn // 2} rows of B are W_gate's rows of {nn // 2} outputs and the next {nn // 2} W_up's rows "
               "of the same outputs. Each thread then holds both values of each of its outputs.", 11,
               width=width - 40, gap=1.35)
    # The weights: W_gate and W_up (3 blocks of 128 rows each) into B's tiles.
    y += 14
    s.text(20, y, "the weights (I = 384: three blocks of 128 rows each)", 12, weight="bold")
    bh, bw = 26, 120
    top = y + 12
    for j in range(3):
        s.rect(20, top + j * bh, bw, bh, fill=GATE_TINT, stroke=DARK, sw=0.8)
        cell_text(s, 20, top + j * bh + 17, bw, f"W_gate rows {128 * j}–{128 * j + 127}", 9)
        s.rect(160, top + j * bh, bw, bh, fill=UP_TINT, stroke=DARK, sw=0.8)
        cell_text(s, 160, top + j * bh + 17, bw, f"W_up rows {128 * j}–{128 * j + 127}", 9)
    s.line(292, top + 1.5 * bh, 352, top + 1.5 * bh, arrow="end")
    s.text(322, top + 1.5 * bh - 6, "stack", 10, anchor="middle", fill=GREY)
    bx = 364
    for j in range(6):
        tint = GATE_TINT if j % 2 == 0 else UP_TINT
        s.rect(bx, top + j * bh / 2, bw + 40, bh / 2, fill=tint, stroke=DARK, sw=0.8)
        what = "gate" if j % 2 == 0 else "up"
        cell_text(s, bx, top + j * bh / 2 + 10, bw + 40, f"B rows {128 * j}–{128 * j + 127}: {what} {128 * (j // 2)}–"
                  f"{128 * (j // 2) + 127}", 8)
    for t in range(3):
        s.line(bx + bw + 46, top + t * bh + 1, bx + bw + 46, top + (t + 1) * bh - 1, stroke=DARK, sw=1.4)
        s.text(bx + bw + 52, top + t * bh + bh / 2 + 4, f"tile {t}: outputs {128 * t}–{128 * t + 127}", 10)
    y = top + 3 * bh + 34
    # The accumulators of one tile, and the output tile.
    s.text(20, y, f"one consumer warpgroup's 64 × {nn} accumulators of a tile, and thread {hot}'s {2 * half} values",
           12, weight="bold")
    px = 2.0
    ax, ay = 20, y + 22
    s.rect(ax, ay, nn // 2 * px, 64 * px, fill=GATE_TINT, stroke=DARK, sw=0.8)
    s.rect(ax + nn // 2 * px, ay, nn // 2 * px, 64 * px, fill=UP_TINT, stroke=DARK, sw=0.8)
    s.text(ax + nn // 4 * px, ay - 6, f"columns 0–{nn // 2 - 1}: gate", 10, anchor="middle")
    s.text(ax + 3 * nn // 4 * px, ay - 6, f"columns {nn // 2}–{nn - 1}: up", 10, anchor="middle")
    for i, (row, gate, up) in sorted(st["pairs"].items()):
        s.circle(ax + (gate + 0.5) * px, ay + (row + 0.5) * px, 1.4, fill=BLUE, stroke=BLUE)
        s.circle(ax + (up + 0.5) * px, ay + (row + 0.5) * px, 1.4, fill=ORANGE, stroke=ORANGE)
    # One pair joined under the tile: value 0 and value `half`.
    row, gate, up = st["pairs"][0]
    yb = ay + 64 * px + 10
    s.line(ax + (gate + 0.5) * px, ay + (row + 0.5) * px, ax + (gate + 0.5) * px, yb, stroke=RED, sw=1, dash="3,2")
    s.line(ax + (gate + 0.5) * px, yb, ax + (up + 0.5) * px, yb, stroke=RED, sw=1, dash="3,2")
    s.line(ax + (up + 0.5) * px, yb, ax + (up + 0.5) * px, ay + (row + 0.5) * px, stroke=RED, sw=1, dash="3,2")
    s.text(ax, yb + 14, f"value 0 (row {row}, column {gate}) × value {half} (row {row}, column {up}): one output",
           10, fill=RED)
    # The output tile.
    ox = ax + nn * px + 60
    s.line(ax + nn * px + 8, ay + 32 * px, ox - 8, ay + 32 * px, arrow="end")
    s.text((ax + nn * px + ox) / 2, ay + 32 * px - 8, "SiLU(g)·u", 10, anchor="middle")
    s.rect(ox, ay, nn // 2 * px, 64 * px, fill=OUT_TINT, stroke=DARK, sw=0.8)
    s.text(ox + nn // 4 * px, ay - 6, f"h: 64 × {nn // 2} to C", 10, anchor="middle")
    for i, (row, gate, up) in sorted(st["pairs"].items()):
        s.circle(ox + (gate + 0.5) * px, ay + (row + 0.5) * px, 1.4, fill=GREEN, stroke=GREEN)
    y = yb + 40
    y = s.para(20, y, f"Thread {hot} holds {2 * half} values in rows {c_layout(hot, 0)[0]} and {c_layout(hot, 2)[0]} "
               f"(blue: gate, orange: up). Value i sits in column group i / 4 of 8 columns, so values i and i + {half} "
               f"are {nn // 2} columns apart in the same row: the epilogue computes h[i] = SiLU(acc[i]) · acc[i + {half}] "
               f"in registers (green: where each lands in the {nn // 2}-column tile) and stores it with chapter 11's "
               "TMA-store epilogue, a tile half as wide. Checked for all 128 threads and their 64 pairs.", 11,
               width=width - 40, gap=1.4)
    s.text(20, y + 4, "from layout/mma_sm90.hpp's CLayout (tools/diagrams/hopper_kernel_dump), as "
                      "chapters/13_grouped_moe/grouped_swiglu.cuh pairs them", 10, fill=GREY)
    s.height = int(y + 16)
    return s


COPY_LANES, COPY_SHIFT, COPY_COLS = 4, 3, 45  # the picture's warp, the row's offset, its values


def copy_rows_model(lanes: int, shift: int, cols: int):
    """chapter 11's copy_rows for one row (any_shape.cuh), as a model for the picture: the row's values 0 ..
    cols - 1 start `shift` values past aligned chunk 0's start. Output chunk j (values 8j .. 8j + 7) is aligned
    chunks j and j + 1 shifted by `shift`; chunks 1 .. fast - 1 go by the lanes (lane l: chunk 1 + l, its
    `lo`, and its neighbour's as `hi`; the last lane loads the chunk after the batch itself), chunk 0 and
    those from `fast` on value by value. Returns (fast, chunks, {lane: (lo chunk, hi chunk, hi from)}), after
    checking that every output value is the row's value it should be."""
    chunks = (cols + 7) // 8
    fast = max(1, (cols + shift - 16) // 8 + 1) if shift else cols // 8
    memory = {8 * a + i: 8 * a + i - shift for a in range(chunks + 2) for i in range(8)}  # aligned position -> value
    lanes_used = {}
    for lane in range(lanes):
        j = 1 + lane
        if j >= fast:
            break
        hi_from = "lane %d" % (lane + 1) if lane + 1 < lanes and j + 1 < fast + 1 else "its own load"
        lanes_used[lane] = (j, j + 1, hi_from)
        words = [memory[8 * j + i] for i in range(8)] + [memory[8 * (j + 1) + i] for i in range(8)]
        got = words[shift:shift + 8]
        if got != list(range(8 * j, 8 * j + 8)) or not all(0 <= v < cols for v in words[shift:shift + 8]):
            raise BadFacts(f"copy_rows model: chunk {j} holds {got}")
    if fast - 1 != len(lanes_used):
        raise BadFacts("copy_rows model: the picture's lanes do not cover the row's fast chunks")
    return fast, chunks, lanes_used


def draw_copy_rows() -> Svg:
    """Chapter 11, step 11: a row 3 values past a 16-byte boundary copied into a 16-byte-aligned staged row, one
    aligned chunk loaded a lane and the next taken from the neighbour (schematic: 4 lanes, 45 values)."""
    lanes, shift, cols = COPY_LANES, COPY_SHIFT, COPY_COLS
    fast, chunks, used = copy_rows_model(lanes, shift, cols)
    width = 880
    s = Svg("hopper_copy_rows", width, 2000)
    s.text(20, 24, "Step 11: the staging copy, one load a chunk", 14, weight="bold")
    y = s.para(20, 44, f"A row of {cols} bf16 values that starts {shift} values past a 16-byte boundary (K or N not a "
               "multiple of 8) is copied into a staged row that starts on one, so that TMA can read it. Each lane "
               "loads one aligned 16-byte chunk (8 values) and takes the next chunk from its neighbour's registers "
               "(__shfl_sync); the two, shifted by the row's offset, are the lane's 8 values of the staged row. "
               f"A warp of {lanes} lanes here (32 on the GPU, 8 chunks each in flight).", 11,
               width=width - 40, gap=1.35)
    cw = 13.0                    # one value
    x0 = 40
    # Memory: aligned chunks 0 .. chunks + 1.
    y += 16
    s.text(20, y, "the source row in memory, in aligned 16-byte chunks", 12, weight="bold")
    top = y + 20
    for a in range(chunks + 1):
        for i in range(8):
            v = 8 * a + i - shift
            inside = 0 <= v < cols
            fill = ("#cfe2f3" if 1 <= a <= len(used) else "#eeeeee") if inside else "white"  # blue: a lane's lo
            s.rect(x0 + (8 * a + i) * cw, top, cw, 18, fill=fill, stroke=GREY, sw=0.5)
        s.rect(x0 + 8 * a * cw, top, 8 * cw, 18, stroke=DARK, sw=1.2)
        s.text(x0 + (8 * a + 4) * cw, top - 5, f"chunk {a}", 9, anchor="middle", fill=GREY)
    s.text(x0 + shift * cw, top + 32, f"the row starts {shift} values in", 9, fill=GREY)
    # The lanes.
    ly = top + 64
    s.text(20, ly - 8, "the lanes: lo (their own load) and hi (the next chunk)", 12, weight="bold")
    ly += 8
    for lane, (lo, hi, hi_from) in sorted(used.items()):
        cx = x0 + (8 * lo + 4) * cw
        s.line(cx, top + 19, cx, ly - 1, stroke=BLUE, sw=1.2, arrow="end")
        s.rect(x0 + 8 * lo * cw + 6, ly, 8 * cw - 12, 40, fill="#fce5cd", stroke=DARK, sw=0.8)
        s.text(cx, ly + 14, f"lane {lane}", 10, anchor="middle", weight="bold")
        s.text(cx, ly + 27, f"lo = chunk {lo}", 9, anchor="middle")
        s.text(cx, ly + 38, f"hi = chunk {hi}", 9, anchor="middle")
        if hi_from.startswith("lane"):
            nx = x0 + (8 * (lo + 1) + 4) * cw
            s.line(nx - 4 * cw + 10, ly + 52, cx + 4 * cw - 14, ly + 52, stroke=ORANGE, sw=1.2, arrow="end")
        else:
            nx = x0 + (8 * hi + 4) * cw
            s.line(nx, top + 19, cx + 4 * cw - 10, ly + 20, stroke=ORANGE, sw=1.2, dash="3,2", arrow="end")
    s.text(x0 + (8 * 2 + 4) * cw, ly + 66, "orange: the neighbour's lo, by __shfl_sync", 9, anchor="middle",
           fill=ORANGE)
    # The staged row.
    oy = ly + 100
    s.text(20, oy - 8, "the staged row (from a 16-byte boundary; drawn under the source values each chunk holds)", 12,
           weight="bold")
    oy += 8
    for j in range(chunks):
        by_lane = 1 <= j < fast
        for i in range(8):
            v = 8 * j + i
            fill = ("#d9ead3" if by_lane else "#eeeeee") if v < cols else "white"
            s.rect(x0 + (8 * j + shift + i) * cw, oy, cw, 18, fill=fill, stroke=GREY, sw=0.5)
        s.rect(x0 + (8 * j + shift) * cw, oy, 8 * cw, 18, stroke=DARK, sw=1.2)
        label = f"lane {j - 1}" if by_lane else "by values"
        s.text(x0 + (8 * j + shift + 4) * cw, oy + 32, label, 9, anchor="middle", fill=GREEN if by_lane else GREY)
    y = oy + 56
    y = s.para(20, y, f"Chunks 1 to {fast - 1} (green) go by the lanes: lo's last {8 - shift} values and hi's first "
               f"{shift}. Chunk 0 would need the {shift} values before the row, and the last chunk the values past "
               "its end: those are read a value at a time (grey), so that nothing outside the matrix is read; the "
               "last chunk's padding is zeros. Before step 11 each lane loaded both of its chunks itself, four at "
               "a time, and the lanes past the last group of four went on one chunk at a time.", 11,
               width=width - 40, gap=1.4)
    s.text(20, y + 4, "a model of chapters/11_every_shape/any_shape.cuh's copy_rows, checked value for value before it "
                      "is drawn", 10, fill=GREY)
    s.height = int(y + 16)
    return s


PICTURES = {
    "hopper_schedules": draw_schedules,
    "hopper_pingpong": lambda F: draw_pingpong(),
    "hopper_multicast": draw_multicast,
    "hopper_swap_ab": draw_swap_ab,
    "hopper_wgmma_accumulators": draw_accumulators,
    "hopper_grouped": draw_grouped,
    "hopper_swiglu": draw_swiglu,
    "hopper_fp8_promotion": lambda F: draw_fp8_promotion(),
    "hopper_copy_rows": lambda F: draw_copy_rows(),
}


def check_dump(dump: pathlib.Path, facts: pathlib.Path) -> int:
    """0 if hopper_kernel_dump's output `dump` is the committed `facts`, line for line."""
    got, want = dump.read_text(encoding="utf-8").splitlines(), facts.read_text(encoding="utf-8").splitlines()
    if got == want:
        print(f"ok: hopper_kernel_dump prints the committed facts ({len(want)} lines of {facts.name})")
        return 0
    diffs = [i for i in range(max(len(got), len(want)))
             if (got[i] if i < len(got) else None) != (want[i] if i < len(want) else None)]
    print(f"FAIL: the library's schedules or layouts changed what the pictures show: {len(diffs)} lines of "
          f"{facts.name} differ")
    for i in diffs[:8]:
        print(f"  line {i + 1}: committed {want[i] if i < len(want) else '(none)'!r}")
        print(f"  {' ' * len(str(i + 1))}        now {got[i] if i < len(got) else '(none)'!r}")
    print("(redraw: build/bin/hopper_kernel_dump > tools/diagrams/hopper_kernel_facts.txt; "
          "python3 tools/diagrams/hopper_kernel_diagrams.py; commit both and docs/images)")
    return 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Draw the pictures of chapters 10-12's composed Hopper kernels (plain SVG).")
    p.add_argument("--out", type=pathlib.Path, default=REPO / "docs" / "images", help="an existing directory")
    p.add_argument("--facts", type=pathlib.Path, default=FACTS, help="hopper_kernel_dump's output to draw from")
    p.add_argument("--check-dump", type=pathlib.Path, metavar="DUMP",
                   help="compare hopper_kernel_dump's output DUMP with the facts file, draw nothing")
    a = p.parse_args(argv)
    if a.check_dump:
        return check_dump(a.check_dump, a.facts)
    if not a.out.is_dir():
        print(f"hopper_kernel_diagrams: error: output directory '{a.out}' does not exist", file=sys.stderr)
        return 2
    try:
        F = read_facts(a.facts)
    except (BadFacts, OSError) as e:
        print(f"hopper_kernel_diagrams: error: {a.facts}: {e}", file=sys.stderr)
        return 1
    for name, draw in PICTURES.items():
        try:
            svg = draw(F)
        except (Overlap, BadFacts) as e:
            print(f"hopper_kernel_diagrams: error: {e}", file=sys.stderr)
            return 1
        path = a.out / f"{name}.svg"
        path.write_text(svg.serialize(), encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
