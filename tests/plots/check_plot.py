"""CTest plots.plot_py: plots/plot.py draws every figure from a small synthetic CSV set.

    python check_plot.py REPO_ROOT

Fails (exit 1) if matplotlib cannot be imported by this Python, if a figure is missing or empty,
or if a directory without CSVs is not rejected with exit 2.
"""

import importlib.util
import pathlib
import subprocess
import sys
import tempfile

FIGURES = ["gemm_tflops", "speedup_vs_cpu", "tflops_vs_size", "copy_bandwidth", "vs_cublas_sizes"]


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def main() -> None:
    if len(sys.argv) != 2:
        fail("usage: check_plot.py REPO_ROOT")
    repo = pathlib.Path(sys.argv[1])
    if importlib.util.find_spec("matplotlib") is None:
        fail(f"matplotlib is not importable by {sys.executable}: run scripts/test.sh (it installs "
             "plots/requirements.txt into .venv and configures -DMM_PYTHON=.venv/bin/python), or configure "
             "with -DMM_PYTHON=/path/to/a/python/with/matplotlib")
    plot = repo / "plots" / "plot.py"
    with tempfile.TemporaryDirectory(prefix="mm_plot_test_") as tmp:
        tmp = pathlib.Path(tmp)
        data, out = tmp / "data", tmp / "images"
        subprocess.run([sys.executable, str(pathlib.Path(__file__).with_name("make_synthetic_csv.py")), str(data)],
                       check=True)
        r = subprocess.run([sys.executable, str(plot), "--data", str(data), "--out", str(out)],
                           capture_output=True, text=True)
        print(r.stdout + r.stderr)
        if r.returncode != 0:
            fail(f"plot.py exited {r.returncode} on the synthetic data")
        for name in FIGURES:
            for ext, magic in (("png", b"\x89PNG"), ("svg", b"<svg")):
                f = out / f"{name}.{ext}"
                if not f.is_file() or f.stat().st_size == 0:
                    fail(f"{f.name} was not written (or is empty)")
                head = f.read_bytes()[:4096]
                if magic not in head:
                    fail(f"{f.name} is not a {ext.upper()} file")
                print(f"ok: {f.name} ({f.stat().st_size} bytes)")

        # --headline picks another size; a size nobody measured is a one-line error, exit 2.
        r = subprocess.run([sys.executable, str(plot), "--data", str(data), "--out", str(tmp / "h2048"),
                            "--headline", "2048"], capture_output=True, text=True)
        if r.returncode != 0 or not (tmp / "h2048" / "gemm_tflops.png").is_file():
            fail(f"--headline 2048 failed: {r.stderr.strip()}")
        r = subprocess.run([sys.executable, str(plot), "--data", str(data), "--out", str(tmp / "bad"),
                            "--headline", "3000"], capture_output=True, text=True)
        if r.returncode != 2 or "--headline" not in r.stderr:
            fail(f"--headline 3000 (not measured) should exit 2 naming the flag, got {r.returncode}: {r.stderr.strip()}")

        # No CSV at all: one clear line, exit 2, nothing drawn.
        empty = tmp / "empty"
        empty.mkdir()
        r = subprocess.run([sys.executable, str(plot), "--data", str(empty), "--out", str(tmp / "none")],
                           capture_output=True, text=True)
        lines = r.stderr.strip().splitlines()
        if r.returncode != 2 or len(lines) != 1 or "no .csv" not in lines[0]:
            fail(f"an empty data dir should give one line and exit 2, got {r.returncode}: {r.stderr!r}")
        if (tmp / "none").exists():
            fail("plot.py wrote images although there was no data")
        print(f"ok: empty data dir rejected: {lines[0]}")
    print("PASS")


if __name__ == "__main__":
    main()
