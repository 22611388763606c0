# Shared by scripts/run_all.sh and scripts/test.sh (sourced, not run): find the repository root,
# check the tools, set up the Python virtual environment, configure and build with the preset.

MM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$MM_ROOT"
MM_JOBS="$(nproc 2>/dev/null || echo 2)"
MM_VENV="$MM_ROOT/.venv"
MM_PY="$MM_VENV/bin/python"

say() { printf '\n==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# cmake >= 3.25, ninja (the preset's generator), nvcc, python3: say which one is missing and how to get it.
mm_check_tools() {
  command -v cmake >/dev/null 2>&1 || die "cmake not found: install CMake 3.25 or newer (Debian 12: apt-get install cmake)"
  local v
  v="$(cmake --version | head -n1 | sed 's/[^0-9]*\([0-9][0-9.]*\).*/\1/')"
  if [ "$(printf '%s\n3.25\n' "$v" | sort -V | head -n1)" != "3.25" ]; then
    die "cmake $v is too old: 3.25 or newer is needed"
  fi
  command -v ninja >/dev/null 2>&1 || die "ninja not found: the CMake preset builds with Ninja (Debian: apt-get install ninja-build)"
  if [ -n "${CUDACXX:-}" ]; then
    [ -x "$CUDACXX" ] || die "CUDACXX=$CUDACXX is not an executable nvcc"
  elif ! command -v nvcc >/dev/null 2>&1; then
    if [ -x /usr/local/cuda/bin/nvcc ]; then
      export PATH="/usr/local/cuda/bin:$PATH"
    else
      die "nvcc not found: install the CUDA toolkit and put its bin/ on PATH (or set CUDACXX=/path/to/nvcc)"
    fi
  fi
  command -v python3 >/dev/null 2>&1 || die "python3 not found: the plots need Python 3 (Debian: apt-get install python3 python3-venv)"
}

# .venv with plots/requirements.txt (matplotlib) and tests/requirements.txt (cuobjdump and nvdisasm
# from PyPI for the layout library's zero-cost check, since a CUDA toolkit may lack them); pip runs
# only when the requirements changed (stamp: their hash).
mm_venv() {
  local reqs=("$MM_ROOT/plots/requirements.txt") stamp="$MM_VENV/.requirements.sha256" want args=()
  [ -f "$MM_ROOT/tests/requirements.txt" ] && reqs+=("$MM_ROOT/tests/requirements.txt")
  if [ ! -x "$MM_PY" ] || ! "$MM_PY" -c 'import sys' >/dev/null 2>&1; then
    say "creating the Python virtual environment .venv"
    rm -rf "$MM_VENV"
    if ! python3 -m venv "$MM_VENV"; then
      rm -rf "$MM_VENV"
      die "python3 -m venv failed: install Python's venv module (Debian: apt-get install python3-venv)"
    fi
  fi
  want="$(cat "${reqs[@]}" | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || ! "$MM_PY" -c 'import matplotlib' >/dev/null 2>&1; then
    say "installing ${reqs[*]#$MM_ROOT/} into .venv"
    for r in "${reqs[@]}"; do args+=(-r "$r"); done
    "$MM_PY" -m pip install --quiet --disable-pip-version-check "${args[@]}" \
      || die "pip install ${args[*]} failed (is PyPI reachable?)"
    echo "$want" > "$stamp"
  fi
}

# Configure with the `default` preset (build/), the plot tests using .venv's Python; build everything.
mm_configure_and_build() {
  say "configuring (cmake --preset default)"
  cmake --preset default -DMM_PYTHON="$MM_PY" || die "CMake configure failed (see above)"
  say "building with $MM_JOBS jobs"
  cmake --build --preset default -j "$MM_JOBS" || die "the build failed (see above)"
}
