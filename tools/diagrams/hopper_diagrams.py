#!/usr/bin/env python3
"""The pictures of Hopper's mechanisms on chapter 09's and 10's pages, as plain SVG.

    python3 tools/diagrams/hopper_diagrams.py [--out docs/images] [--data plots/data/h200]
    python3 tools/diagrams/hopper_diagrams.py --check-layout DUMP   # DUMP: what gmma_layout_dump printed

Writes (each drawn from the code's own formulas or from the committed measurements):

  hopper_gmma_desc_k_major.svg   an A stage (K-major, 128-byte swizzle) as it lies in shared memory,
  hopper_gmma_desc_mn_major.svg  a B stage (MN-major); what a wgmma descriptor's start, LBO and SBO
                                 point at. Byte offsets from the GMMA layout atoms' formula
                                 (layout/mma_sm90.hpp), checked against the layout library by
                                 --check-layout (CTest plots.diagrams_layout)
  hopper_mbarrier_ring.svg       a 4-stage TMA ring over two rounds: each full/empty barrier's phase,
                                 who waits on which parity (gemm/pipeline.hpp's semantics)
  hopper_wait_group.svg          wgmma.wait_group 0 against 1 on a time line (schematic)
  hopper_ws_schedule.svg         the warp-specialized block over two tiles, register epilogue against
                                 the TMA-store epilogue (schematic)
  hopper_tile_order.svg          the persistent scheduler's order of the 4096³ tiles on 132 blocks
                                 (gemm/tile_scheduler.hpp's formula), grouped against row-major
  hopper_bf16_ceilings.svg       bf16 TFLOP/s at 4096³ RRR: the datasheet peak, mma.sync's measured
                                 ceiling, cuBLAS, chapter 08's best and chapters 09-10's steps (CSVs)

Only the standard library is used. The output is deterministic (no dates, fixed number formats), and
every picture checks that none of its labels overlap before it is written. CTest
plots.diagrams_reproducible draws them into a temporary directory and compares them with the
committed files byte for byte: after a new measurement, run this script and commit docs/images.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "plots"))
import results_data as rd  # noqa: E402

FONT = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"
CHAR_W = 0.62  # assumed advance of one character, in font sizes (generous for DejaVu Sans / Verdana)

# Light fills for 8 categories (the eight 16-byte units of a 128-byte row), and strong colours.
TINTS = ["#cfe2f3", "#fce5cd", "#d9ead3", "#f4cccc", "#d9d2e9", "#fff2cc", "#d0e0e3", "#ead1dc"]
BLUE, ORANGE, GREEN, RED, GREY, DARK = "#3d6fb6", "#e07b24", "#4a9a4a", "#c0392b", "#8c8c8c", "#222222"


class Overlap(Exception):
    """Two labels of a picture would overlap."""


class Svg:
    """A picture: shapes and text, serialized in the order they were added; text boxes are checked
    for overlaps (an estimate from the character count: CHAR_W × font size per character)."""

    def __init__(self, name: str, width: int, height: int):
        self.name, self.width, self.height = name, width, height
        self.items: list[str] = []
        self.boxes: list[tuple[float, float, float, float, str]] = []

    def rect(self, x, y, w, h, fill="none", stroke=DARK, sw=1.0, extra=""):
        self.items.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill}" '
                          f'stroke="{stroke}" stroke-width="{sw:g}"{extra}/>')

    def line(self, x1, y1, x2, y2, stroke=DARK, sw=1.0, dash: str | None = None, arrow: str = ""):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        m = ""
        if "end" in arrow:
            m += ' marker-end="url(#arrow)"'
        if "start" in arrow:
            m += ' marker-start="url(#arrow)"'
        self.items.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" '
                          f'stroke-width="{sw:g}"{d}{m}/>')

    def circle(self, x, y, r, fill, stroke=DARK):
        self.items.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:g}" fill="{fill}" stroke="{stroke}"/>')

    def text(self, x, y, s: str, size=12, anchor="start", weight="normal", fill=DARK, check=True):
        """Text whose baseline is at y; anchor start, middle or end at x."""
        esc = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        w = CHAR_W * size * len(s)
        x0 = x if anchor == "start" else x - w / 2 if anchor == "middle" else x - w
        if check:
            box = (x0, y - 0.8 * size, x0 + w, y + 0.25 * size, s)
            for o in self.boxes:
                if box[0] < o[2] and o[0] < box[2] and box[1] < o[3] and o[1] < box[3]:
                    raise Overlap(f"{self.name}: label {s!r} overlaps {o[4]!r}")
            if box[0] < 0 or box[2] > self.width or box[1] < 0 or box[3] > self.height:
                raise Overlap(f"{self.name}: label {s!r} leaves the picture ({self.width}×{self.height})")
            self.boxes.append(box)
        wt = f' font-weight="{weight}"' if weight != "normal" else ""
        self.items.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
                          f'fill="{fill}"{wt}>{esc}</text>')

    def para(self, x, y, text: str, size=12, width=None, gap=1.5, **kw) -> float:
        """Text wrapped into lines that fit `width` pixels (default: to the picture's right margin minus x);
        returns the baseline after the last line."""
        width = width if width is not None else self.width - 2 * x
        line = ""
        for word in text.split(" "):
            trial = (line + " " + word).strip()
            if CHAR_W * size * len(trial) > width and line:
                self.text(x, y, line, size, **kw)
                y += gap * size
                line = word
            else:
                line = trial
        if line:
            self.text(x, y, line, size, **kw)
            y += gap * size
        return y

    def serialize(self) -> str:
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{self.height}" '
                f'viewBox="0 0 {self.width} {self.height}" font-family="{FONT}">\n'
                '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
                f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{DARK}"/></marker></defs>\n'
                f'<rect x="0" y="0" width="{self.width}" height="{self.height}" fill="white"/>\n')
        return head + "\n".join(self.items) + "\n</svg>\n"


def fmt(v: float) -> str:
    return f"{v:.0f}"


# ---- The wgmma descriptor: chapter 09's stages, from the GMMA layout atoms' formula -------------------
#
# Swizzle<3,3,3> on bf16 element offsets (layout/mma_sm90.hpp, GmmaLayoutK_SW128_Atom): the 16-byte unit
# (8 elements) of a 128-byte row is XORed with the row's index within its 8-row pattern.

def swizzle_333(offset: int) -> int:
    return offset ^ ((offset & (7 << 6)) >> 3)


def k_major_byte(m: int, k: int) -> int:
    """Byte of (m, k) in an A stage (64,64), K-major: row m = 64 consecutive k (128 bytes)."""
    return 2 * swizzle_333(m * 64 + k)


def mn_major_byte(n: int, k: int) -> int:
    """Byte of (n, k) in a B stage (128,64), MN-major: panels of 64 n; in a panel, row k = 64 n."""
    return 2 * swizzle_333((n % 64) + 64 * k + 64 * 64 * (n // 64))


def descriptor(major: str, kk: int) -> tuple[int, int, int, int]:
    """(start relative to the stage, LBO, SBO, swizzle bytes) of k16 slice kk, as make_gmma_desc reads
    them off the unswizzled layout: start = element (0, 16·kk); K-major: SBO = offset of (8, 0), LBO
    unused (16); MN-major: SBO = offset of (0, 8), LBO = offset of (64, 0), the next panel."""
    if major == "K":
        return 2 * (16 * kk), 16, 2 * (8 * 64), 128
    return 2 * (64 * 16 * kk), 2 * (64 * 64), 2 * (64 * 8), 128


def check_layout(dump: pathlib.Path) -> int:
    """Compares gmma_layout_dump's output with the formulas above; 0 if every fact agrees."""
    bad = seen = 0
    for line in dump.read_text().splitlines():
        f = line.split()
        if not f:
            continue
        if f[0] == "elem":
            major, mn, k, byte = f[1], int(f[2]), int(f[3]), int(f[4])
            want = k_major_byte(mn, k) if major == "K" else mn_major_byte(mn, k)
        elif f[0] == "desc":
            major, kk = f[1], int(f[2])
            byte, want = tuple(int(x) for x in f[3:7]), descriptor(major, kk)
        else:
            print(f"FAIL: unexpected line {line!r}")
            return 1
        seen += 1
        if byte != want:
            bad += 1
            if bad <= 10:
                print(f"FAIL: {line!r}: the script draws {want}")
    if seen < 16 * 64 + 128 * 16 + 8:
        print(f"FAIL: only {seen} facts in {dump}")
        return 1
    if bad:
        print(f"FAIL: {bad} of {seen} facts differ")
        return 1
    print(f"ok: {seen} element offsets and descriptor fields agree with the layout library")
    return 0


def draw_desc_k_major() -> Svg:
    cw, ch, x0, y0 = 64, 24, 120, 100
    rows = 16
    s = Svg("hopper_gmma_desc_k_major", 1020, y0 + rows * ch + 150)
    s.text(20, 24, "A stage, K-major (m × k = 64 × 64 bf16), 128-byte swizzle: its first 16 rows as they lie in "
                   "shared memory", 14, weight="bold")
    s.text(20, 46, "one line = 128 bytes = one m; each cell = 16 bytes = 8 consecutive k; "
                   "the label is which k the swizzle put there", 12)
    s.text(x0 - 10, y0 - 8, "byte", 11, anchor="end")
    for u in range(8):
        s.text(x0 + u * cw + cw / 2, y0 - 8, f"+{16 * u}", 11, anchor="middle")
    slice_units = []
    for m in range(rows):
        y = y0 + m * ch
        s.text(20, y + 16, f"m {m}", 12)
        s.text(x0 - 10, y + 16, f"{128 * m}", 11, anchor="end", fill=GREY)
        for kc in range(8):
            byte = k_major_byte(m, 8 * kc) - 128 * m  # where k = 8·kc .. 8·kc+7 of row m lie
            u = byte // 16
            x = x0 + u * cw
            s.rect(x, y, cw, ch, fill=TINTS[kc], stroke="#ffffff", sw=1)
            s.text(x + cw / 2, y + 16, f"k {8 * kc}–{8 * kc + 7}", 11, anchor="middle")
            if kc in (2, 3):
                slice_units.append((x, y))
    for x, y in slice_units:  # the bytes the wgmma of slice kk = 1 reads: k 16..31
        s.rect(x + 1.5, y + 1.5, cw - 3, ch - 3, stroke=RED, sw=2.5)
    s.rect(x0, y0, 8 * cw, 8 * ch, stroke=DARK, sw=2)
    s.rect(x0, y0 + 8 * ch, 8 * cw, 8 * ch, stroke=DARK, sw=2)
    # Annotations on the right.
    xr = x0 + 8 * cw + 16
    start, lbo, sbo, _ = descriptor("K", 1)
    s.text(xr + 10, y0 + 40, "rows 0–7: one swizzle pattern", 12)
    s.text(xr + 10, y0 + 58, "(8 × 128 B = 1024 B): unit u of", 12)
    s.text(xr + 10, y0 + 76, "row r holds k-unit u XOR r", 12)
    s.line(xr + 4, y0 + 12, xr + 4, y0 + 8 * ch + 12, stroke=BLUE, sw=2, arrow="end")
    s.text(xr + 10, y0 + 8 * ch + 28, f"SBO = {sbo} B: from m to m + 8,", 12, fill=BLUE, weight="bold")
    s.text(xr + 10, y0 + 8 * ch + 46, "the next 8-row group", 12, fill=BLUE)
    s.text(xr + 10, y0 + 8 * ch + 82, "rows 8–15: the same pattern again", 12)
    # Start of slice kk = 1: element (0, 16), byte 32 of row 0.
    sx = x0 + (start // 16) * cw
    s.line(sx, y0 - 30, sx, y0, stroke=RED, sw=2, arrow="end")
    s.text(sx + 6, y0 - 26, f"start of slice kk = 1: element (0, 16) = stage + {start} B", 12, fill=RED,
           weight="bold")
    yb = y0 + rows * ch + 26
    s.rect(20, yb - 14, 16, 14, stroke=RED, sw=2.5)
    s.text(44, yb - 2, "the 16 k of one wgmma (slice kk = 1: k 16–31) in each row: scattered by the swizzle; "
                       "the tensor core undoes the XOR", 12)
    s.text(44, yb + 18, "from the address bits, so the descriptor names only the unswizzled start.", 12)
    d = [descriptor("K", kk) for kk in range(4)]
    s.text(20, yb + 48, "descriptor fields (make_gmma_desc<GmmaMajor::K>): start = stage + "
                        + ", ".join(f"{x[0]}" for x in d) + " B for kk = 0, 1, 2, 3;", 12)
    s.text(20, yb + 68, f"SBO = {sbo} B; LBO unused (field {lbo} B: a wgmma's 16 k are 32 bytes inside one row); "
                        "swizzle mode 128 B", 12)
    s.text(20, yb + 98, "drawn from GmmaLayoutK_SW128_Atom's formula; CTest plots.diagrams_layout checks it "
                        "against the layout library", 11, fill=GREY)
    return s


def draw_desc_mn_major() -> Svg:
    cw, ch, x0, y0, gap = 54, 24, 84, 120, 70
    rows = 16
    s = Svg("hopper_gmma_desc_mn_major", 1080, y0 + rows * ch + 150)
    s.text(20, 24, "B stage, MN-major (n × k = 128 × 64 bf16, B row-major: RRR), 128-byte swizzle: rows k 0–15 "
                   "of its two panels", 14, weight="bold")
    s.text(20, 46, "one line = 128 bytes = one k; each cell = 16 bytes = 8 consecutive n; a panel = 64 n × 64 k "
                   "= 8192 B", 12)
    start0, lbo, sbo, _ = descriptor("MN", 0)
    for p in range(2):
        xp = x0 + p * (8 * cw + gap)
        s.text(xp + 4 * cw, y0 - 26, f"panel {p}: n {64 * p}–{64 * p + 63}, at stage + {8192 * p} B", 12,
               anchor="middle", weight="bold")
        for u in range(8):
            s.text(xp + u * cw + cw / 2, y0 - 8, f"+{16 * u}", 11, anchor="middle")
        for k in range(rows):
            y = y0 + k * ch
            if p == 0:
                s.text(20, y + 16, f"k {k}", 12)
            for nc in range(8):
                byte = mn_major_byte(64 * p + 8 * nc, k) - 8192 * p - 128 * k
                u = byte // 16
                x = xp + u * cw
                s.rect(x, y, cw, ch, fill=TINTS[nc], stroke="#ffffff", sw=1)
                s.text(x + cw / 2, y + 16, f"n {64 * p + 8 * nc}", 11, anchor="middle")
        s.rect(xp, y0, 8 * cw, 8 * ch, stroke=DARK, sw=2)
        s.rect(xp, y0 + 8 * ch, 8 * cw, 8 * ch, stroke=DARK, sw=2)
    # start, SBO, LBO
    s.line(x0, y0 - 44, x0, y0, stroke=RED, sw=2, arrow="end")
    s.text(x0 + 6, y0 - 50, f"start of slice kk = 0: element (0, 0) = stage + {start0} B", 12, fill=RED,
           weight="bold")
    xs = x0 + 8 * cw + 14
    s.line(xs, y0 + 12, xs, y0 + 8 * ch + 12, stroke=BLUE, sw=2, arrow="end")
    s.text(xs + 6, y0 + 4 * ch + 4, f"SBO", 12, fill=BLUE, weight="bold")
    s.text(xs + 6, y0 + 4 * ch + 20, f"{sbo} B", 12, fill=BLUE, weight="bold")
    ya = y0 + rows * ch + 20
    s.line(x0 + 2, ya, x0 + 8 * cw + gap - 2, ya, stroke=GREEN, sw=2, arrow="end")
    s.text(x0 + 8 * cw + gap + 8, ya + 5, f"LBO = {lbo} B: from n to n + 64, the next panel", 12, fill=GREEN,
           weight="bold")
    yb = ya + 34
    d = [descriptor("MN", kk) for kk in range(4)]
    s.text(20, yb, f"SBO = {sbo} B: from k to k + 8, the next 8-row pattern. One wgmma reads 16 k × all n: "
                   "rows k 0–15 of every panel (slice kk = 0).", 12)
    s.text(20, yb + 20, "descriptor fields (make_gmma_desc<GmmaMajor::MN>): start = stage + "
                        + ", ".join(f"{x[0]}" for x in d) + " B for kk = 0, 1, 2, 3 (16 rows further each);", 12)
    s.text(20, yb + 40, f"LBO = {lbo} B, SBO = {sbo} B, swizzle mode 128 B. The n-units of row k are XORed "
                        "with k % 8, as in the K-major stage.", 12)
    s.text(20, yb + 70, "drawn from GmmaLayoutMN_SW128_Atom's formula tiled into panels (gemm/smem_layout_sm90.hpp); "
                        "CTest plots.diagrams_layout checks it", 11, fill=GREY)
    return s


# ---- The mbarrier ring over two rounds ---------------------------------------------------------------
#
# A deterministic event model of gemm/pipeline.hpp's PipelineTmaAsync with S = 4 stages and one consumer
# warpgroup (as in chapter 09's tma step: the consumer waits for its wgmma before releasing): the producer
# acquires stage s (waits on empty[s] with its state's phase; its state starts at phase 1), arms full[s]
# with the stage's bytes and issues the TMA; the bytes land LOAD later and complete full[s]'s phase; the
# consumer waits on full[s] with its phase (starting at 0), multiplies for MATH, and releases empty[s].

RING_S, RING_STEPS, ISSUE, LOAD, MATH = 4, 8, 0.5, 3.0, 2.0


def ring_events():
    full_done: dict[tuple[int, int], float] = {}   # (stage, phase) -> completion time
    empty_done: dict[tuple[int, int], float] = {}
    prod, cons = [], []
    t_prod, t_cons = 0.0, 0.0
    # Interleave: the producer runs ahead as far as the ring lets it; compute consumer times in order.
    issue_at: dict[int, float] = {}
    for kt in range(RING_STEPS):
        s, rnd = kt % RING_S, kt // RING_S
        parity = (rnd + 1) % 2  # the producer's state: phase 1 in round 0
        ask = t_prod
        if rnd == 0:
            passed = ask  # the phase before phase 0 counts as completed: passes at once
        else:
            passed = max(ask, empty_done[(s, rnd - 1)])
        issue_at[kt] = passed
        prod.append(dict(kt=kt, stage=s, parity=parity, ask=ask, passed=passed, done=passed + ISSUE))
        full_done[(s, rnd)] = passed + ISSUE + LOAD
        t_prod = passed + ISSUE
        # the consumer of step kt - RING_S + 1 .. must have released for the next acquire: compute lazily
        kc = kt
        sc, rc = kc % RING_S, kc // RING_S
        wait_from = t_cons
        start = max(wait_from, full_done[(sc, rc)])
        cons.append(dict(kt=kc, stage=sc, parity=rc % 2, ask=wait_from, passed=start, done=start + MATH))
        t_cons = start + MATH
        empty_done[(sc, rc)] = t_cons
    return prod, cons, full_done, empty_done


def draw_ring() -> Svg:
    prod, cons, full_done, empty_done = ring_events()
    end = max(c["done"] for c in cons) + 0.6
    px, x0, lane_h = 46.0, 150, 30
    X = lambda t: x0 + t * px  # noqa: E731
    lanes = ["producer", "consumer"] + [f"{b}[{s}]" for s in range(RING_S) for b in ("full", "empty")]
    y_of = {}
    y = 112
    for name in lanes:
        y_of[name] = y
        y += lane_h + (16 if name in ("consumer",) or name.startswith("empty") else 6)
    s = Svg("hopper_mbarrier_ring", int(X(end) + 30), int(y + 150))
    s.text(20, 24, "A 4-stage TMA ring over two rounds (8 K steps): each barrier's phase, and who waits on which "
                   "parity", 14, weight="bold")
    s.text(20, 46, "schematic times; semantics of gemm/pipeline.hpp (PipelineTmaAsync): the producer's state "
                   "starts at phase 1, the consumer's at phase 0", 12)
    s.text(20, 66, "P1 / P0: the producer waits with parity 1 / 0;  C0 / C1: the consumer waits with parity 0 / 1", 12)
    s.text(20, 84, "a wait with parity p returns once the barrier's phase of parity p has completed", 12)
    for name, yy in y_of.items():
        s.text(20, yy + 20, name, 13, weight="bold" if name in ("producer", "consumer") else "normal")
    # time axis
    ya = y - 4
    s.line(x0, ya, X(end), ya, stroke=GREY)
    for t in range(0, int(end) + 1, 2):
        s.line(X(t), ya, X(t), ya + 5, stroke=GREY)
        s.text(X(t), ya + 18, f"{t}", 10, anchor="middle", fill=GREY)
    s.text(X(end), ya + 34, "time (arbitrary units)", 11, anchor="end", fill=GREY)
    # producer lane
    yp = y_of["producer"]
    for p in prod:
        if p["passed"] > p["ask"] + 1e-9:
            s.rect(X(p["ask"]), yp + 8, X(p["passed"]) - X(p["ask"]), lane_h - 16, fill="#eeeeee", stroke=GREY)
        s.rect(X(p["passed"]), yp, ISSUE * px, lane_h, fill=ORANGE, stroke=DARK)
        s.text(X(p["passed"]) + ISSUE * px / 2, yp - 4, f"k{p['kt']}", 11, anchor="middle")
    s.text(X(prod[4]["ask"]) + 4, yp + 19, "waits: all 4 stages full", 10, check=False)
    # consumer lane
    yc = y_of["consumer"]
    for c in cons:
        if c["passed"] > c["ask"] + 1e-9:
            s.rect(X(c["ask"]), yc + 8, X(c["passed"]) - X(c["ask"]), lane_h - 16, fill="#eeeeee", stroke=GREY)
        s.rect(X(c["passed"]), yc, MATH * px, lane_h, fill=BLUE, stroke=DARK)
        s.text(X(c["passed"]) + MATH * px / 2, yc + 20, f"wgmma k{c['kt']}", 11, anchor="middle", fill="white",
               check=False)
    s.text(X(0) + 4, yc + 19, "waits for k0's bytes", 10, check=False)
    # barrier lanes: phases
    for st in range(RING_S):
        for kind, done in (("full", full_done), ("empty", empty_done)):
            yy = y_of[f"{kind}[{st}]"]
            times = [0.0] + [done[(st, r)] for r in range(RING_STEPS // RING_S)] + [end]
            for ph in range(len(times) - 1):
                a, b = times[ph], times[ph + 1]
                s.rect(X(a), yy + 4, X(b) - X(a), lane_h - 8, fill="#f3f3f3" if ph % 2 == 0 else "#dcdcdc",
                       stroke=GREY)
                label = f"phase {ph}"
                if X(b) - X(a) > CHAR_W * 10 * len(label) + 8:
                    s.text((X(a) + X(b)) / 2, yy + 22, label, 10, anchor="middle", fill="#555555")
            for r in range(RING_STEPS // RING_S):
                t = done[(st, r)]
                s.line(X(t), yy, X(t), yy + lane_h, stroke=GREEN if kind == "full" else BLUE, sw=3)
    # waits: markers on the barrier lanes at the time the wait begins, a line to where it returns
    for p in prod:
        yy = y_of[f"empty[{p['stage']}]"]
        s.circle(X(p["ask"]), yy + 8, 3.5, ORANGE)
        if p["passed"] > p["ask"] + 1e-9:
            s.line(X(p["ask"]), yy + 8, X(p["passed"]), yy + 8, stroke=ORANGE, sw=2)
        s.text(X(p["ask"]) - 3, yy - 2, f"P{p['parity']}", 10, anchor="end", fill=ORANGE, weight="bold")
    for c in cons:
        yy = y_of[f"full[{c['stage']}]"]
        s.circle(X(c["ask"]), yy + 8, 3.5, BLUE)
        if c["passed"] > c["ask"] + 1e-9:
            s.line(X(c["ask"]), yy + 8, X(c["passed"]), yy + 8, stroke=BLUE, sw=2)
        s.text(X(c["ask"]) + 3, yy - 2, f"C{c['parity']}", 10, fill=BLUE, weight="bold")
    # legend
    yl = y + 44
    s.rect(20, yl - 11, 22, 12, fill=ORANGE)
    s.text(48, yl, "producer: acquire = wait on empty[s] and arm full[s] with 48 KB, then issue the TMA of step k "
                   "into stage k % 4", 11)
    s.line(20, yl + 14, 42, yl + 14, stroke=GREEN, sw=3)
    s.text(48, yl + 18, "full[s] completes a phase: one arrival (the arm) and all 48 KB landed", 11)
    s.rect(20, yl + 25, 22, 12, fill=BLUE)
    s.text(48, yl + 36, "consumer: wait on full[s], wgmma, then release = arrive on empty[s]", 11)
    s.line(20, yl + 50, 42, yl + 50, stroke=BLUE, sw=3)
    s.text(48, yl + 54, "empty[s] completes a phase: every consumer warpgroup released the stage (grey bands: "
                        "each barrier's current phase)", 11)
    s.text(20, yl + 76, "round 0: P1 on a fresh barrier returns at once (phase 0 is running: the phase before it, "
                        "of parity 1, counts as completed)", 11, weight="bold")
    s.text(20, yl + 94, "round 1: P0 waits until empty's phase 0 completes, i.e. until the consumer released "
                        "the stage's round-0 data", 11, weight="bold")
    return s


# ---- Transaction counts: one full barrier over one phase --------------------------------------------
#
# big_tile's stage in RRR (128×256 tiles, K steps of 64): A's (128,64) K-major tile is one TMA box (a row
# of 64 k is one 128-byte swizzle row, 128 rows <= 256); B's (256,64) MN-major tile is cut into panels one
# swizzle row (64 n) wide: 4 boxes (layout/copy_traits_sm90_tma.hpp, TmaBoxes). The producer's acquire
# arms full[s] with one arrival and the stage's bytes; each box's bytes count the barrier down as they land.

def tma_boxes(inner_extent: int, outer_extent: int, elem_bytes: int = 2) -> list[int]:
    """Bytes of each TMA box of a stage: panels one 128-byte swizzle row wide, pieces of <= 256 rows."""
    box_inner = min(inner_extent, 128 // elem_bytes)
    pieces = (outer_extent + 255) // 256
    return [box_inner * (outer_extent // pieces) * elem_bytes] * ((inner_extent // box_inner) * pieces)


def draw_tx_count() -> Svg:
    a_boxes = tma_boxes(64, 128)   # A (128,64), K-major: inner = 64 k
    b_boxes = tma_boxes(256, 64)   # B (256,64), MN-major: inner = 256 n
    total = sum(a_boxes) + sum(b_boxes)
    events = [("start", 0), ("arm", total)] + [(f"A box {i}", -b) for i, b in enumerate(a_boxes)] + \
             [(f"B box {i}", -b) for i, b in enumerate(b_boxes)]
    x0, y0, step, h = 250, 90, 118, 170
    s = Svg("hopper_tx_count", x0 + step * len(events) + 40, y0 + h + 156)
    s.text(20, 24, "Transaction counts: one full barrier, one phase (big_tile's stage in RRR: 128×256 tile, K step 64)",
           14, weight="bold")
    s.text(20, 44, f"mbarrier_init(full[s], 1): one arrival per phase; the producer's acquire arrives once and announces "
                   f"{total} bytes (arrive.expect_tx)", 12)
    s.text(20, 62, "the phase completes when both counts reach zero: no arrival pending and every announced byte "
                   "landed", 12)
    Y = lambda b: y0 + h - b / total * h  # noqa: E731
    s.text(20, Y(total) - 12, "bytes still to land", 11, fill=GREY)
    s.text(20, Y(total) + 4, f"{total} B", 11)
    s.text(20, Y(0) + 4, "0 B", 11)
    s.text(20, y0 + h + 58, "arrivals pending", 12)
    s.text(20, y0 + h + 84, "phase", 12)
    s.line(x0 - 20, Y(0), x0 + step * len(events), Y(0), stroke=GREY)
    pending, arrivals = 0, 1
    for i, (label, delta) in enumerate(events):
        x = x0 + i * step
        before = pending
        pending += delta
        if label == "arm":
            arrivals = 0
        s.line(x, Y(before), x, Y(pending), stroke=ORANGE if delta > 0 else GREEN, sw=2.5)
        s.line(x, Y(pending), x + step, Y(pending), stroke=DARK, sw=2)
        s.text(x + step / 2, Y(pending) - 6, f"{pending}", 11, anchor="middle")
        colour = ORANGE if delta > 0 else GREEN if delta < 0 else GREY
        if label == "start":
            s.text(x + 4, y0 + h + 18, "phase begins", 10, fill=colour)
        else:
            s.text(x + 4, y0 + h + 18, "producer arms" if label == "arm" else f"{label} lands", 10, fill=colour)
            s.text(x + 4, y0 + h + 31, f"+{delta} B" if delta > 0 else f"{delta} B", 10, fill=colour)
        s.text(x + step / 2, y0 + h + 58, f"{arrivals}", 12, anchor="middle")
        done = pending == 0 and arrivals == 0
        s.rect(x + 4, y0 + h + 70, step - 8, 20, fill="#d9ead3" if done else "#f3f3f3", stroke=GREY)
        s.text(x + step / 2, y0 + h + 84, "completes" if done else "running", 10, anchor="middle",
               fill=GREEN if done else GREY, check=False)
    s.text(20, y0 + h + 118, f"A: {len(a_boxes)} box of {a_boxes[0]} B (64 k × 128 rows); B: {len(b_boxes)} boxes of "
                             f"{b_boxes[0]} B (64 n × 64 k each: a box row is at most one 128-byte swizzle row)", 11)
    s.text(20, y0 + h + 136, "the consumers wait on full[s] with the round's parity; the wait returns when the phase "
                             "completes, and the bytes are then visible to them", 11)
    return s


# ---- The async proxy: when a fence is needed --------------------------------------------------------

def draw_async_proxy() -> Svg:
    x0, colw = 170, 300
    s = Svg("hopper_async_proxy", x0 + 3 * colw + 20, 570)
    s.text(20, 24, "Two proxies, one shared memory: which writes the copy engine and the tensor core are sure to see",
           14, weight="bold")
    s.text(20, 44, "ordinary instructions (st.shared, cp.async, stmatrix) write through the generic proxy; TMA and "
                   "wgmma's operand reads go through the async proxy", 12)
    lanes = {"threads": 96, "shared tile": 216, "async proxy": 336}
    s.text(20, lanes["threads"] + 6, "threads", 13, weight="bold")
    s.text(20, lanes["threads"] + 24, "(generic proxy)", 11)
    s.text(20, lanes["shared tile"] + 6, "shared tile", 13, weight="bold")
    s.text(20, lanes["async proxy"] + 6, "async proxy", 13, weight="bold")
    s.text(20, lanes["async proxy"] + 24, "(TMA, wgmma)", 11)
    for y in lanes.values():
        s.line(x0 - 10, y, x0 + 3 * colw, y, stroke="#dddddd", sw=1)
    cases = [
        ("tma, big_tile, ...: TMA load → wgmma", "no fence: one proxy",
         [("async proxy", "TMA writes", "write"), ("threads", "wait full[s]", None),
          ("async proxy", "wgmma reads", "read")]),
        ("wgmma_cp_async: cp.async → wgmma", "fence.proxy.async",
         [("threads", "cp.async, wait", "write"), ("threads", "FENCE", None), ("threads", "barrier", None),
          ("async proxy", "wgmma reads", "read")]),
        ("tma_store: stmatrix → TMA store", "fence.proxy.async",
         [("threads", "stmatrix", "write"), ("threads", "FENCE", None), ("threads", "barrier", None),
          ("async proxy", "TMA store reads", "read")]),
    ]
    for c, (title, verdict, steps) in enumerate(cases):
        xc = x0 + c * colw
        s.text(xc, 72, title, 12, weight="bold")
        n = len(steps)
        bw = (colw - 30) / n
        for i, (lane, label, arrow) in enumerate(steps):
            x = xc + i * bw
            y = lanes[lane]
            if label == "FENCE":
                s.rect(x + 4, lanes["threads"] - 16, bw - 8, lanes["async proxy"] - lanes["threads"] + 32,
                       fill="#f6d5d1", stroke=RED, sw=2)
                s.text(x + bw / 2, lanes["shared tile"] - 6, "fence.", 11, anchor="middle", fill=RED,
                       weight="bold")
                s.text(x + bw / 2, lanes["shared tile"] + 8, "proxy.", 11, anchor="middle", fill=RED,
                       weight="bold")
                s.text(x + bw / 2, lanes["shared tile"] + 22, "async", 11, anchor="middle", fill=RED, weight="bold")
                continue
            fill = "#fff2cc" if lane == "threads" else "#cfe2f3"
            s.rect(x + 4, y - 16, bw - 8, 32, fill=fill, stroke=DARK)
            words = label.split(" ")
            if CHAR_W * 10 * len(label) < bw - 14:
                s.text(x + bw / 2, y + 4, label, 10, anchor="middle", check=False)
            else:
                half = (len(words) + 1) // 2
                s.text(x + bw / 2, y - 2, " ".join(words[:half]), 10, anchor="middle", check=False)
                s.text(x + bw / 2, y + 10, " ".join(words[half:]), 10, anchor="middle", check=False)
            ts = lanes["shared tile"]
            near_tile, near_box = (ts - 10, y + 16) if y < ts else (ts + 10, y - 16)
            if arrow == "write":
                s.line(x + bw / 2, near_box, x + bw / 2, near_tile, stroke=DARK, sw=1.5, arrow="end")
            elif arrow == "read":
                s.line(x + bw / 2, near_tile, x + bw / 2, near_box, stroke=DARK, sw=1.5, arrow="end")
            if arrow:
                s.rect(x + 4, lanes["shared tile"] - 10, bw - 8, 20, fill="#eeeeee", stroke=GREY)
        s.text(xc, lanes["async proxy"] + 50, verdict, 12, weight="bold", fill=GREEN if c == 0 else RED)
    y = lanes["async proxy"] + 86
    y = s.para(20, y, "A fence.proxy.async.shared::cta in each writing thread, then a barrier, orders that thread's "
                      "generic-proxy writes before the async proxy's later reads: without it the copy engine or the "
                      "tensor core may read the tile's old bytes. TMA loads need none: their bytes arrive through "
                      "the async proxy, and the mbarrier's phase completion makes them visible to the waiting "
                      "threads, whose wgmma read them through the async proxy again.", 12)
    y = s.para(20, y + 4, "barrier: __syncthreads in wgmma_cp_async; in tma_store a named barrier of the consumer "
                          "warpgroup's 128 threads, after which one thread issues the store.", 12)
    s.para(20, y + 4, "The other way round, before a thread overwrites a buffer that a TMA store still reads: "
                      "cp.async.bulk.wait_group.read (tma_store_wait).", 12)
    return s


# ---- wgmma.wait_group 0 against 1 --------------------------------------------------------------------

def draw_wait_group() -> Svg:
    px, x0 = 40.0, 150
    G, O, steps = 4.0, 1.5, 4  # a group's time on the tensor core; the wait for the next stage
    X = lambda t: x0 + t * px  # noqa: E731
    end = steps * (G + O) + 0.5
    s = Svg("hopper_wait_group", int(X(end) + 20), 440)
    s.text(20, 24, "wgmma.wait_group 0 against 1: what the tensor core does while a warpgroup waits for its next "
                   "stage", 14, weight="bold")
    s.text(20, 44, "schematic: 4 K steps of one consumer warpgroup; a group = the 4 wgmma of one stage; "
                   "thin lines: the warpgroup issues a group", 12)

    def seg(a, b, y, fill, label, colour=DARK):
        s.rect(X(a), y, X(b) - X(a), 28, fill=fill, stroke=GREY if fill != BLUE else DARK)
        if label and (X(b) - X(a)) > CHAR_W * 10 * len(label) + 6:
            s.text((X(a) + X(b)) / 2, y + 18, label, 10, anchor="middle", fill=colour, check=False)

    def panel(y, title, n_wait):
        s.text(20, y, title, 13, weight="bold")
        yw, yt = y + 14, y + 62
        s.text(20, yw + 19, "warpgroup", 12)
        s.text(20, yt + 19, "tensor core", 12)
        t, busy_end = 0.0, 0.0
        for k in range(steps):
            seg(t, t + O, yw, "#eeeeee", f"wait k{k}")  # consumer_wait: stage k has landed
            issue = t + O
            g0 = max(issue, busy_end)
            if n_wait == 0 and k > 0 and g0 > busy_end + 1e-9:
                seg(busy_end, g0, yt, "#f6d5d1", "idle", RED)
            s.line(X(issue), yw + 28, X(issue), yt, stroke=DARK, sw=1)
            seg(g0, g0 + G, yt, BLUE, f"group k{k}", "white")
            prev_end, busy_end = busy_end, g0 + G
            # wait_group N: returns when at most N groups run (N = 0: this one done; N = 1: the previous one)
            done = busy_end if n_wait == 0 else max(issue, prev_end)
            if done > issue + 1e-9:
                seg(issue, done, yw, "#fff2cc", f"wait_group {n_wait}")
            t = done
        if busy_end > t + 1e-9:  # after the loop: warpgroup_wait<0>, the last group
            seg(t, busy_end, yw, "#fff2cc", "wait_group 0")
        return busy_end

    e0 = panel(84, "big_tile: warpgroup_wait<0>() after each stage's group, then release stage k and wait for "
                   "stage k+1", 0)
    e1 = panel(228, "wgmma_in_flight: warpgroup_wait<1>(): group k keeps running while the warpgroup waits for "
                    "stage k+1", 1)
    s.line(X(e1), 300, X(e1), 342, stroke=GREEN, sw=2)
    s.line(X(e0), 156, X(e0), 198, stroke=RED, sw=2)
    s.text(X(e1) + 6, 336, "the same 4 groups, done earlier", 11, fill=GREEN)
    s.text(20, 384, "wait_group N returns when at most N groups are still running. With N = 1 the stage of group k-1 "
                    "is released (its group has", 12)
    s.text(20, 402, "completed) while group k runs: the tensor core always has the next group queued. The price: a "
                    "stage is held one step longer.", 12)
    return s


# ---- The warp-specialized block over two tiles --------------------------------------------------------

def draw_ws_schedule() -> Svg:
    px, x0 = 30.0, 150
    M, EB, EA, LOADS = 10.0, 3.0, 1.0, 9.2  # main loop, epilogue (registers / TMA store), the producer's loads
    X = lambda t: x0 + t * px  # noqa: E731
    end = 2 * M + 2 * EB + 0.8
    s = Svg("hopper_ws_schedule", int(X(end) + 24), 560)
    s.text(20, 24, "One block (persistent) over two tiles: producer, two consumers, and where the epilogue goes",
           14, weight="bold")
    s.text(20, 44, "schematic, not to scale; the producer runs at most 4 stages ahead of the consumers (the ring)",
           12)

    def panel(y, title, epi, tma_store):
        s.text(20, y, title, 13, weight="bold")
        lanes = ["producer", "consumer 1", "consumer 2", "tensor core"] + (["TMA store"] if tma_store else [])
        ys = {n: y + 12 + i * 34 for i, n in enumerate(lanes)}
        for n, yy in ys.items():
            s.text(20, yy + 18, n, 12)
        t = 0.0
        for tile in range(2):
            # producer: the tile's loads; the next tile's first stages fill while the consumers finish
            p0 = 0.0 if tile == 0 else LOADS
            p1 = LOADS if tile == 0 else LOADS + M + epi
            s.rect(X(p0), ys["producer"], X(p1) - X(p0), 24, fill=ORANGE, stroke=DARK)
            s.text((X(p0) + X(p1)) / 2, ys["producer"] + 17, f"TMA loads, tile {tile}", 11, anchor="middle",
                   check=False)
            for c in ("consumer 1", "consumer 2"):
                s.rect(X(t), ys[c], M * px, 24, fill=BLUE, stroke=DARK)
                s.text(X(t) + M * px / 2, ys[c] + 17, f"main loop, tile {tile}", 11, anchor="middle", fill="white",
                       check=False)
                s.rect(X(t + M), ys[c], epi * px, 24, fill="#f6d5d1" if not tma_store else "#d9ead3", stroke=DARK)
                if not tma_store:
                    s.text(X(t + M) + epi * px / 2, ys[c] + 17, "stores", 10, anchor="middle", check=False)
            s.rect(X(t), ys["tensor core"], M * px, 24, fill=BLUE, stroke=DARK)
            s.rect(X(t + M), ys["tensor core"], epi * px, 24, fill="#f6d5d1", stroke=RED)
            if tma_store:
                s.rect(X(t + M + epi), ys["TMA store"], 2.4 * px, 24, fill="#d9ead3", stroke=DARK)
                s.text(X(t + M + epi) + 1.2 * px, ys["TMA store"] + 17, f"C, tile {tile}", 10, anchor="middle",
                       check=False)
            t += M + epi
        return ys, t

    ys, t_before = panel(74, "persistent: each consumer thread stores its 128 accumulators to C itself (64 stores)",
                         EB, False)
    s.text(X(M) + EB * px / 2, ys["tensor core"] + 40, "idle: the consumers wait in the store queue", 10,
           anchor="middle", fill=RED)
    ys2, t_after = panel(268, "tma_store: stmatrix into shared memory, one TMA store per 64×64 piece, sent while the "
                              "next main loop runs", EA, True)
    yl = ys2["TMA store"] + 52
    s.rect(20, yl - 11, 22, 12, fill=BLUE)
    s.text(48, yl, "main loop: wait for a stage, 4 wgmma, release the stage before (tensor core busy)", 11)
    s.rect(20, yl + 7, 22, 12, fill="#f6d5d1", stroke=DARK)
    s.text(48, yl + 18, "register epilogue: 64 stores of 4 bytes per thread, queued in the load/store unit; "
                        "the tensor core idles", 11)
    s.rect(20, yl + 25, 22, 12, fill="#d9ead3", stroke=DARK)
    s.text(48, yl + 36, "TMA-store epilogue: stmatrix into a shared buffer, one thread issues the TMA store; the copy "
                        "engine sends C", 11)
    s.line(X(t_after), ys2["tensor core"] - 4, X(t_after), ys2["tensor core"] + 28, stroke=GREEN, sw=2)
    s.line(X(t_before), ys["tensor core"] - 4, X(t_before), ys["tensor core"] + 28, stroke=RED, sw=2)
    s.text(X(t_after) + 6, ys2["tensor core"] + 17, "two tiles done", 11, fill=GREEN)
    return s


# ---- The persistent scheduler's tile order ------------------------------------------------------------

def grouped_tile(i: int, tiles_m: int, tiles_n: int, group_m: int) -> tuple[int, int]:
    """gemm/tile_scheduler.hpp, GroupedTileScheduler::tile: the tile (m, n) at position i."""
    per_group = group_m * tiles_n
    group = i // per_group
    first_m = group * group_m
    rows = min(tiles_m - first_m, group_m)
    local = i - group * per_group
    return first_m + local % rows, local // rows


def draw_tile_order() -> Svg:
    tiles_m, tiles_n, blocks = 4096 // 128, 4096 // 256, 132
    cw, ch, x0, y0, gap = 28, 17, 60, 96, 90
    waves = ["#cfe2f3", "#fce5cd", "#d9ead3", "#ead1dc"]
    s = Svg("hopper_tile_order", x0 + 2 * tiles_n * cw + gap + 40, y0 + tiles_m * ch + 150)
    s.text(20, 24, "Which block computes which tile, and when: 4096³ in 128×256 tiles (32 × 16) on 132 persistent "
                   "blocks", 14, weight="bold")
    s.text(20, 44, "number = the block (position i of the order goes to block i % 132); colour = the wave "
                   "(i / 132): the tiles in flight together", 12)
    for p, (group_m, title) in enumerate(((16, "grouped order, group_m = 16 (the chapter's)"),
                                          (1, "row-major order (group_m = 1)"))):
        xp = x0 + p * (tiles_n * cw + gap)
        s.text(xp, y0 - 24, title, 12, weight="bold")
        a_panels, b_panels = set(), set()
        for i in range(tiles_m * tiles_n):
            m, n = grouped_tile(i, tiles_m, tiles_n, group_m)
            wave, block = i // blocks, i % blocks
            if wave == 0:
                a_panels.add(m)
                b_panels.add(n)
            x, y = xp + n * cw, y0 + m * ch
            s.rect(x, y, cw, ch, fill=waves[wave], stroke="#ffffff", sw=0.8)
            s.text(x + cw / 2, y + 12.5, f"{block}", 9, anchor="middle", weight="bold" if block == 0 else "normal",
                   check=False)
            if block == 0:
                s.rect(x + 1, y + 1, cw - 2, ch - 2, stroke=RED, sw=1.8)
        for n in range(0, tiles_n, 4):
            s.text(xp + n * cw + cw / 2, y0 - 6, f"n{n}", 9, anchor="middle", fill=GREY)
        if p == 0:
            for m in range(0, tiles_m, 4):
                s.text(xp - 6, y0 + m * ch + 12, f"m{m}", 9, anchor="end", fill=GREY)
        s.text(xp, y0 + tiles_m * ch + 22, f"wave 0 reads {len(a_panels)} panels of A (rows) and "
                                           f"{len(b_panels)} of B (columns)", 11)
    yl = y0 + tiles_m * ch + 50
    for w in range(4):
        s.rect(20 + w * 150, yl, 18, 12, fill=waves[w], stroke=GREY)
        last = min((w + 1) * blocks, tiles_m * tiles_n) - 1
        s.text(44 + w * 150, yl + 11, f"wave {w}: {w * blocks}–{last}", 11)
    s.rect(20, yl + 24, 18, 12, stroke=RED, sw=1.8)
    s.text(44, yl + 35, "block 0's four tiles: positions 0, 132, 264, 396 (512 tiles = 3.88 waves: the last "
                        "wave keeps 116 of 132 SMs busy)", 11)
    s.text(20, yl + 60, "computed by GroupedTileScheduler's formula (gemm/tile_scheduler.hpp); a panel of A is 128 "
                        "rows × K, of B 256 columns × K", 11, fill=GREY)
    return s


# ---- bf16 ceilings --------------------------------------------------------------------------------

DATASHEET_BF16_DENSE = 989  # NVIDIA H200 (and H100 SXM) datasheet: BF16 Tensor Core 1,979 TFLOPS with
#                              sparsity, i.e. 989 dense (the footnote halves it)
CEILING_SIZE, CEILING_LAYOUT = 4096, "RRR"
CH08_BEST = "no_copy_branch"  # chapter 08's best step, the one chapter 09's binary measures itself against
CH09_STEPS = ["wgmma_cp_async", "tma", "two_consumers", "big_tile", "wgmma_in_flight"]
CH10_STEPS = ["warp_specialized", "persistent", "tma_store", "cluster_multicast"]


def tflops_axis(s: Svg, X, x0: float, top: float, ya: float) -> None:
    """The TFLOP/s axis under a bar chart whose values map to x by X: a tick every 200."""
    s.line(x0, ya, X(top), ya, stroke=GREY)
    for v in range(0, int(top) + 1, 200):
        s.line(X(v), ya, X(v), ya + 5, stroke=GREY)
        s.text(X(v), ya + 18, f"{v}", 10, anchor="middle", fill=GREY)
    s.text(X(top), ya + 36, "TFLOP/s", 11, anchor="end", fill=GREY)


def ceiling_data(data: pathlib.Path):
    def rows(name):
        return rd.read_csv(data / name)

    def at(rs, kernel):
        for r in rs:
            if (r.kernel == kernel and r.dtype == "bf16" and r.layout == CEILING_LAYOUT
                    and r.m == r.n == r.k == CEILING_SIZE):
                return r.tflops
        raise SystemExit(f"hopper_diagrams: no bf16 {CEILING_LAYOUT} {CEILING_SIZE}³ row of {kernel!r} in {data}")

    mma = max(r.tflops for r in rows("ch08_mma_ceiling.csv") if r.dtype == "bf16")
    groups = []
    for name, title, kernels, colour in (
            ("ch08_tensor_cores.csv", "chapter 08: mma.sync", [CH08_BEST], GREY),
            ("ch09_hopper_wgmma_tma.csv", "chapter 09: wgmma + TMA", CH09_STEPS, BLUE),
            ("ch10_hopper_persistent.csv", "chapter 10", CH10_STEPS, GREEN)):
        rs = rows(name)
        groups.append((title, at(rs, "cuBLAS"), [(k, at(rs, k)) for k in kernels], colour))
    return mma, groups


def draw_ceilings(data: pathlib.Path) -> Svg:
    mma, groups = ceiling_data(data)
    x0, w_axis, bar_h, y0 = 230, 640, 20, 96
    top = 1000.0
    X = lambda v: x0 + v / top * w_axis  # noqa: E731
    n_rows = sum(len(g[2]) for g in groups)
    height = y0 + n_rows * (bar_h + 6) + len(groups) * 30 + 94
    s = Svg("hopper_bf16_ceilings", x0 + w_axis + 150, int(height))
    s.text(20, 24, f"bf16 TFLOP/s at {CEILING_SIZE}³, C = A·B ({CEILING_LAYOUT}), H200: what each instruction "
                   "can reach", 14, weight="bold")
    s.text(20, 44, "bars: the chapters' steps (medians of their runs); black lines: cuBLAS in the same run; "
                   "dashed: the ceilings", 12)
    y = y0
    bottom = y0 + n_rows * (bar_h + 6) + len(groups) * 30
    for v, label, colour in ((mma, f"mma.sync ceiling {fmt(mma)} (measured, chapter 08)", ORANGE),
                             (DATASHEET_BF16_DENSE, f"datasheet peak {DATASHEET_BF16_DENSE} (dense)", RED)):
        s.line(X(v), y0 - 30, X(v), bottom, stroke=colour, sw=2, dash="6,4")
    s.text(X(mma) - 4, y0 - 16, f"mma.sync ceiling {fmt(mma)} (measured, ch. 08)", 11, anchor="end", fill=ORANGE,
           weight="bold")
    s.text(X(DATASHEET_BF16_DENSE) - 4, y0 - 32, f"datasheet peak {DATASHEET_BF16_DENSE} (dense bf16)", 11,
           anchor="end", fill=RED, weight="bold")
    for title, cublas, kernels, colour in groups:
        s.text(20, y + 18, title, 12, weight="bold")
        y += 26
        g_top = y
        for k, v in kernels:
            s.text(x0 - 8, y + 15, k, 12, anchor="end")
            s.rect(x0, y, X(v) - x0, bar_h, fill=colour, stroke="none")
            s.text(x0 + 6, y + 15, fmt(v), 11, fill="white", weight="bold", check=False)
            y += bar_h + 6
        s.line(X(cublas), g_top - 4, X(cublas), y - 2, stroke=DARK, sw=2.5)
        s.text(X(cublas) + 6, g_top + 9, f"cuBLAS {fmt(cublas)}", 10, fill=DARK, check=False)
        y += 4
    ya = bottom + 6
    tflops_axis(s, X, x0, top, ya)
    s.text(20, ya + 60, "from plots/data/h200: ch08_mma_ceiling.csv (the best bf16 probe), ch08_tensor_cores.csv, "
                        "ch09_hopper_wgmma_tma.csv, ch10_hopper_persistent.csv", 10, fill=GREY)
    s.text(20, ya + 76, "the datasheet's 1,979 TFLOP/s for bf16 assumes 2:4 sparsity; dense is half", 10, fill=GREY)
    return s


PICTURES = {
    "hopper_gmma_desc_k_major": lambda data: draw_desc_k_major(),
    "hopper_gmma_desc_mn_major": lambda data: draw_desc_mn_major(),
    "hopper_mbarrier_ring": lambda data: draw_ring(),
    "hopper_tx_count": lambda data: draw_tx_count(),
    "hopper_async_proxy": lambda data: draw_async_proxy(),
    "hopper_wait_group": lambda data: draw_wait_group(),
    "hopper_ws_schedule": lambda data: draw_ws_schedule(),
    "hopper_tile_order": lambda data: draw_tile_order(),
    "hopper_bf16_ceilings": draw_ceilings,
}


def run(argv, prog: str, description: str, pictures: dict, check_layout, dump_tool: str) -> int:
    """The command line of a diagram script: --out DIR (existing), --data DIR (the measurements a
    chart reads), --check-layout DUMP (compare `dump_tool`'s output with the pictures' formulas and
    draw nothing); writes one SVG per entry of `pictures` (name -> draw(data) -> Svg)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--out", type=pathlib.Path, default=REPO / "docs" / "images", help="an existing directory")
    p.add_argument("--data", type=pathlib.Path, default=REPO / "plots" / "data" / "h200",
                   help="the measurements the ceiling chart reads")
    p.add_argument("--check-layout", type=pathlib.Path, metavar="DUMP",
                   help=f"compare {dump_tool}'s output with the formulas the pictures use, draw nothing")
    a = p.parse_args(argv)
    if a.check_layout:
        return check_layout(a.check_layout)
    if not a.out.is_dir():
        print(f"{prog}: error: output directory '{a.out}' does not exist", file=sys.stderr)
        return 2
    for name, draw in pictures.items():
        try:
            svg = draw(a.data)
        except Overlap as e:
            print(f"{prog}: error: {e}", file=sys.stderr)
            return 1
        path = a.out / f"{name}.svg"
        path.write_text(svg.serialize(), encoding="utf-8")
        print(f"wrote {path}")
    return 0


def main(argv=None) -> int:
    return run(argv, "hopper_diagrams", "Draw the Hopper pictures of chapters 09 and 10 (plain SVG).", PICTURES,
               check_layout, "gmma_layout_dump")


if __name__ == "__main__":
    sys.exit(main())
