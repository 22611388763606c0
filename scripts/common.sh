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

# The name of GPU 0 as nvidia-smi gives it ("NVIDIA H200"); prints nothing (status 1) without a GPU.
mm_gpu_name() {
  local list gpu
  list="$(nvidia-smi -L 2>/dev/null || true)"
  [[ "$list" == GPU* ]] || return 1
  gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null || true)"
  [ -n "$gpu" ] || gpu="$(sed -n '1s/^GPU [0-9]*: \(.*\) (UUID.*/\1/p' <<<"$list")"
  echo "${gpu:-GPU}"
}

# The directory name of a GPU's results under plots/data/: "NVIDIA H200" -> "h200";
# "NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3".
mm_gpu_slug() {
  local slug
  slug="$(tr '[:upper:]' '[:lower:]' <<<"$1" | sed -e 's/^nvidia //' -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//')"
  echo "${slug:-gpu}"
}

# The CUDA toolkit's cuobjdump, if it has one that can disassemble: PATH, $CUDA_HOME/bin,
# $CUDA_PATH/bin, next to nvcc ($CUDACXX or the nvcc on PATH, symlinks followed), /usr/local/cuda/bin.
# `cuobjdump -sass` runs nvdisasm (a separate toolkit package), so one counts only with nvdisasm
# next to it, on PATH or at $NVDISASM_PATH. Prints its path; fails if there is none.
# tests/layout/zero_cost_check.py looks in the same places before it falls back to the pip wheel.
mm_find_cuobjdump() {
  local nvcc c d dirs=()
  c="$(command -v cuobjdump 2>/dev/null || true)"
  [ -n "$c" ] && dirs+=("$(dirname "$c")")
  [ -n "${CUDA_HOME:-}" ] && dirs+=("$CUDA_HOME/bin")
  [ -n "${CUDA_PATH:-}" ] && dirs+=("$CUDA_PATH/bin")
  nvcc="${CUDACXX:-$(command -v nvcc 2>/dev/null || true)}"
  if [ -n "$nvcc" ]; then
    dirs+=("$(dirname "$nvcc")")
    nvcc="$(readlink -f "$nvcc" 2>/dev/null || true)"
    [ -n "$nvcc" ] && dirs+=("$(dirname "$nvcc")")
  fi
  dirs+=(/usr/local/cuda/bin)
  for d in "${dirs[@]}"; do
    [ -x "$d/cuobjdump" ] || continue
    if [ -x "$d/nvdisasm" ] || command -v nvdisasm >/dev/null 2>&1 \
       || { [ -n "${NVDISASM_PATH:-}" ] && { [ -x "$NVDISASM_PATH/nvdisasm" ] || [ -f "$NVDISASM_PATH" ]; }; }; then
      echo "$d/cuobjdump"; return 0
    fi
  done
  return 1
}

# mm_venv [tests]: .venv with plots/requirements.txt (matplotlib); with `tests` (scripts/test.sh) also
# tests/requirements.txt (cuobjdump and nvdisasm wheels for the layout library's zero-cost check),
# but only when the CUDA toolkit has no cuobjdump of its own.
# The venv sees the system's site-packages, so a matplotlib installed by the system (apt-get install
# python3-matplotlib) is used as is. pip runs only when the requirements changed (stamp: their hash)
# or something is missing; when pip cannot reach PyPI but what the scripts need is already
# importable, they go on with it (offline runs need no network).
mm_venv() {
  local want_tests=0 reqs=("$MM_ROOT/plots/requirements.txt") stamp="$MM_VENV/.requirements.sha256"
  local want args=() cuobjdump=""
  [ "${1:-}" = tests ] && want_tests=1
  if [ ! -x "$MM_PY" ] || ! "$MM_PY" -c 'import sys' >/dev/null 2>&1; then
    say "creating the Python virtual environment .venv"
    rm -rf "$MM_VENV"
    if ! python3 -m venv --system-site-packages "$MM_VENV"; then
      rm -rf "$MM_VENV"
      die "python3 -m venv failed: install Python's venv module (Debian: apt-get install python3-venv)"
    fi
  fi
  if [ "$want_tests" -eq 1 ]; then
    if cuobjdump="$(mm_find_cuobjdump)"; then
      echo "cuobjdump for the zero-cost check: $cuobjdump (the CUDA toolkit's; no wheel needed)"
    else
      reqs+=("$MM_ROOT/tests/requirements.txt")
    fi
  fi
  # What the scripts need, whatever pip says: matplotlib, and a cuobjdump when the tests need one.
  mm_venv_complete() {
    "$MM_PY" -c 'import matplotlib' >/dev/null 2>&1 || return 1
    [ "$want_tests" -eq 0 ] || [ -n "$cuobjdump" ] \
      || ls "$MM_VENV"/lib/python3*/site-packages/nvidia/cu*/bin/cuobjdump >/dev/null 2>&1
  }
  want="$(cat "${reqs[@]}" | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || ! mm_venv_complete; then
    say "installing ${reqs[*]#"$MM_ROOT"/} into .venv"
    for r in "${reqs[@]}"; do args+=(-r "$r"); done
    if "$MM_PY" -m pip install --quiet --disable-pip-version-check --retries 1 --timeout 15 "${args[@]}"; then
      echo "$want" > "$stamp"
    elif mm_venv_complete; then
      echo "warning: pip install ${args[*]} failed (offline?); going on with what .venv already has:" \
           "matplotlib $("$MM_PY" -c 'import matplotlib; print(matplotlib.__version__)')" >&2
    elif ! "$MM_PY" -c 'import matplotlib' >/dev/null 2>&1; then
      die "pip install ${args[*]} failed (is PyPI reachable?) and matplotlib is not importable: get it from PyPI, or offline from the system (apt-get install python3-matplotlib; .venv sees the system's packages)"
    else
      die "pip install ${args[*]} failed (is PyPI reachable?) and there is no cuobjdump for the zero-cost check: install the CUDA toolkit's cuobjdump and nvdisasm (NVIDIA's packages cuda-cuobjdump, cuda-nvdisasm) or let pip reach PyPI"
    fi
  fi
}

# Configure with the `default` preset (build/), the plot tests using .venv's Python; build everything.
mm_configure_and_build() {
  say "configuring (cmake --preset default)"
  cmake --preset default -DMM_PYTHON="$MM_PY" || die "CMake configure failed (see above)"
  say "building with $MM_JOBS jobs"
  cmake --build --preset default -j "$MM_JOBS" || die "the build failed (see above)"
}
