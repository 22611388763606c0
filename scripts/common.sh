# Shared by scripts/run_all.sh and scripts/test.sh (sourced, not run): find the repository root,
# check what the machine has (every missing piece reported at once, each with its fix), set up the
# Python for the figures, configure and build with the preset.

MM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$MM_ROOT"
MM_JOBS="$(nproc 2>/dev/null || echo 2)"
# The virtual environment the scripts set up; $MM_VENV moves it (.ci/run points it at a fresh, empty
# directory to check the offline path without touching .venv).
MM_VENV="${MM_VENV:-$MM_ROOT/.venv}"
MM_VENV_SHOWN="${MM_VENV#"$MM_ROOT"/}"   # ".venv" in messages when it is the default
MM_PY=""         # the Python for the figures and the plot tests: .venv's, or $MM_PYTHON (mm_python sets it)
# Whether the figures can be drawn, decided in one place (mm_python, from whether $MM_PY imports
# matplotlib, and which version): "pinned" (it draws the committed figures byte for byte), "other" (another
# version: figures, but not over the committed ones), "" (no matplotlib: no figures; MM_NO_FIGURES says why).
MM_FIGURES=""
MM_NO_FIGURES=""
MM_MISSING=()    # what stops the run: "what: why. Fix: how", reported together by mm_stop_if_missing
MM_NOTES=()      # what does not stop it (a test that will be skipped, no figures this run, ...)
# The matplotlib the committed figures are drawn with (plots/requirements.txt pins it).
MM_MPL_PIN="$(sed -n 's/^matplotlib==\([0-9][0-9A-Za-z.]*\).*/\1/p' "$MM_ROOT/plots/requirements.txt" 2>/dev/null)"

say() { printf '\n==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
mm_missing() { MM_MISSING+=("$1"); }
mm_note() { MM_NOTES+=("$1"); }

# Stops here, once, listing everything missing with its fix, if anything is; otherwise prints the notes.
mm_stop_if_missing() {
  local m n
  if [ "${#MM_MISSING[@]}" -gt 0 ]; then
    {
      printf '\nerror: %d thing(s) missing; nothing was built. Each with what to do:\n' "${#MM_MISSING[@]}"
      for m in "${MM_MISSING[@]}"; do printf '  - %s\n' "$m"; done
      if [ "${#MM_NOTES[@]}" -gt 0 ]; then
        printf 'and, not stopping the run:\n'
        for n in "${MM_NOTES[@]}"; do printf '  - %s\n' "$n"; done
      fi
    } >&2
    exit 1
  fi
  for n in "${MM_NOTES[@]}"; do printf 'note: %s\n' "$n"; done
}

# cmake >= 3.25, ninja (the preset's generator), nvcc, a C++ compiler, python3 with venv: each missing
# one is added to MM_MISSING with how to get it.
mm_check_tools() {
  local v
  if ! command -v cmake >/dev/null 2>&1; then
    mm_missing "cmake: not found. Fix: install CMake 3.25 or newer (Debian 12: apt-get install cmake; or pip install cmake)"
  else
    v="$(cmake --version | head -n1 | sed 's/[^0-9]*\([0-9][0-9.]*\).*/\1/')"
    if [ "$(printf '%s\n3.25\n' "$v" | sort -V | head -n1)" != "3.25" ]; then
      mm_missing "cmake $v: too old. Fix: install CMake 3.25 or newer (pip install cmake gives 4.x)"
    fi
  fi
  command -v ninja >/dev/null 2>&1 \
    || mm_missing "ninja: not found (the CMake preset builds with Ninja). Fix: apt-get install ninja-build"
  if [ -n "${CUDACXX:-}" ]; then
    [ -x "$CUDACXX" ] || mm_missing "nvcc: CUDACXX=$CUDACXX is not an executable. Fix: point CUDACXX at the CUDA toolkit's bin/nvcc"
  elif ! command -v nvcc >/dev/null 2>&1; then
    if [ -x /usr/local/cuda/bin/nvcc ]; then
      export PATH="/usr/local/cuda/bin:$PATH"
    else
      mm_missing "nvcc: not found. Fix: install the CUDA toolkit (12.x or 13.x) and put its bin/ on PATH, or set CUDACXX=/path/to/nvcc"
    fi
  fi
  command -v "${CXX:-c++}" >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 \
    || mm_missing "a C++20 compiler: neither ${CXX:-c++} nor g++ found. Fix: apt-get install g++"
  # (No venv module is not a stop: mm_python falls back to python3 itself, and without matplotlib there
  # the figures are skipped.)
  if [ -z "${MM_PYTHON:-}" ] && ! command -v python3 >/dev/null 2>&1; then
    mm_missing "python3: not found (the figures, the README tables and the plot tests). Fix: apt-get install python3 python3-venv"
  fi
  # GoogleTest and CLI11: CMake downloads them when they are not installed, which needs the network.
  if [ ! -e /usr/include/CLI/CLI.hpp ] && [ ! -e /usr/local/include/CLI/CLI.hpp ]; then
    mm_note "CLI11 is not installed: CMake will download it at configure time (offline that fails: apt-get install libcli11-dev)"
  fi
  if [ "${1:-}" = tests ] && [ ! -e /usr/include/gtest/gtest.h ] && [ ! -e /usr/local/include/gtest/gtest.h ]; then
    mm_note "GoogleTest is not installed: CMake will download it at configure time (offline that fails: apt-get install libgtest-dev)"
  fi
}

# The interpreter python3 runs (pyenv's shim resolved), e.g. /root/.pyenv/versions/3.11.7/bin/python3.
mm_python3_path() { python3 -c 'import sys; print(sys.executable)' 2>/dev/null || command -v python3; }

# Whether python3 is the system's (Debian's /usr/bin/python3, which sees apt-get's python3-* packages)
# rather than pyenv's, conda's or another that does not.
mm_python3_is_system() { [ "$(python3 -c 'import sys; print(sys.base_prefix)' 2>/dev/null)" = /usr ]; }

# The version of matplotlib that $1 imports; nothing (status 1) if it cannot import it.
mm_mpl_version() { "$1" -c 'import matplotlib; print(matplotlib.__version__)' 2>/dev/null; }

# How to get matplotlib when pip could not (offline): depends on whether python3 sees Debian's packages.
mm_matplotlib_fix() {
  local py3
  py3="$(mm_python3_path)"
  if mm_python3_is_system; then
    printf '%s' "connect to PyPI and run again (pip installs matplotlib==$MM_MPL_PIN into .venv); or offline, apt-get install python3-matplotlib (.venv sees the system's packages; figures drawn with its version go to build/figures/)"
  else
    local sys_py="apt-get install python3-matplotlib, then MM_PYTHON=/usr/bin/python3 bash scripts/$(basename "$0")"
    [ -x /usr/bin/python3 ] || sys_py="apt-get install python3 python3-matplotlib, then MM_PYTHON=/usr/bin/python3 bash scripts/$(basename "$0")"
    printf '%s' "python3 here is $py3 (pyenv, conda or another Python that does not see Debian's packages, so apt-get install python3-matplotlib alone does not help it). One of: connect to PyPI and run again (pip installs matplotlib==$MM_MPL_PIN into .venv); or bring the wheels: on a connected machine \`pip download matplotlib==$MM_MPL_PIN -d wheels/\`, here \`.venv/bin/pip install --no-index --find-links wheels/ -r plots/requirements.txt\`; or use a Python that has matplotlib (any version; figures drawn with another than $MM_MPL_PIN go to build/figures/): MM_PYTHON=/path/to/python, e.g. $sys_py"
  fi
}

# mm_python [tests]: sets MM_PY, the Python for the figures and the README tables (with `tests`, also the
# plot tests and the zero-cost check), and decides whether there will be figures (mm_decide_figures).
#  - $MM_PYTHON, when set: used as it is (nothing installed into it).
#  - otherwise $MM_VENV (.venv, created with the system's site-packages visible), where pip installs
#    plots/requirements.txt (matplotlib==$MM_MPL_PIN) when the requirements changed or matplotlib is not
#    the pinned version; with `tests`, also tests/requirements.txt (NVIDIA's cuobjdump wheel), only when
#    the CUDA toolkit has no cuobjdump, and python/requirements-test.txt (pytest, numpy: the Python package's
#    tests) when they are not importable. When python3 cannot create a venv (no venv module), python3 itself.
# Nothing about matplotlib stops a run (measuring is the job, the figures a bonus): pip failing (offline)
# keeps a matplotlib already importable, with a note if it is not the pinned version; no matplotlib at all
# is a note, and no figures (run_all.sh says so in one line with the command that draws them later,
# mm_figures_skipped; test.sh's plot tests that draw are skipped). No cuobjdump is a note too (the one
# test that needs it is skipped).
mm_python() {
  local want_tests=0 stamp="$MM_VENV/.requirements.sha256" want have why fix venv_ok=1 cuobjdump
  [ "${1:-}" = tests ] && want_tests=1
  if [ -n "${MM_PYTHON:-}" ]; then
    if ! [ -x "$MM_PYTHON" ] && ! command -v "$MM_PYTHON" >/dev/null 2>&1; then
      mm_missing "MM_PYTHON=$MM_PYTHON: not an executable. Fix: point MM_PYTHON at a Python that has matplotlib $MM_MPL_PIN, or unset it (the scripts then set up .venv)"
      return 0
    fi
    MM_PY="$(command -v "$MM_PYTHON" 2>/dev/null || echo "$MM_PYTHON")"
    mm_decide_figures "MM_PYTHON=$MM_PYTHON" "$want_tests" \
      "MM_PYTHON=$MM_PYTHON cannot import matplotlib" \
      "$MM_PY -m pip install -r plots/requirements.txt, or point MM_PYTHON at a Python that has it, or unset MM_PYTHON (the scripts then set up .venv)"
  else
    command -v python3 >/dev/null 2>&1 || return 0   # already in MM_MISSING
    if [ ! -x "$MM_VENV/bin/python" ] || ! "$MM_VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
      say "creating the Python virtual environment $MM_VENV_SHOWN (python3 = $(mm_python3_path))"
      rm -rf "$MM_VENV"
      if ! python3 -m venv --system-site-packages "$MM_VENV"; then
        rm -rf "$MM_VENV"
        venv_ok=0
      fi
    fi
    if [ "$venv_ok" -eq 1 ]; then
      MM_PY="$MM_VENV/bin/python"
      want="$(sha256sum "$MM_ROOT/plots/requirements.txt" | cut -d' ' -f1)"
      have="$(mm_mpl_version "$MM_PY" || true)"
      if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || [ "$have" != "$MM_MPL_PIN" ]; then
        say "installing plots/requirements.txt (matplotlib==$MM_MPL_PIN) into $MM_VENV_SHOWN"
        if "$MM_PY" -m pip install --quiet --disable-pip-version-check --retries 1 --timeout 15 \
             -r "$MM_ROOT/plots/requirements.txt"; then
          echo "$want" > "$stamp"
        else
          echo "(pip could not install it: offline?)"
        fi
      fi
      why="matplotlib is not importable by $MM_VENV_SHOWN/bin/python (pip could not install plots/requirements.txt: offline?)"
      fix="$(mm_matplotlib_fix)"
    else
      MM_PY="$(mm_python3_path)"
      echo "(python3 -m venv failed, see above: using $MM_PY itself, into which nothing is installed)"
      why="matplotlib is not importable by $MM_PY (python3 -m venv failed, so pip could not install it)"
      fix="apt-get install python3-venv and run again online (pip installs matplotlib==$MM_MPL_PIN into .venv), or point MM_PYTHON at a Python that has matplotlib $MM_MPL_PIN"
      mm_python3_is_system && fix="apt-get install python3-matplotlib (python3 then draws the figures with Debian's version, into build/figures/), or $fix"
    fi
    mm_decide_figures "$MM_VENV_SHOWN" "$want_tests" "$why" "$fix"
  fi
  [ "$want_tests" -eq 1 ] || return 0
  mm_python_test_packages
  if cuobjdump="$(mm_find_cuobjdump)"; then
    echo "cuobjdump for the zero-cost check: $cuobjdump (the CUDA toolkit's; no wheel needed)"
  elif [ "$MM_PY" != "$MM_VENV/bin/python" ]; then
    mm_note "no cuobjdump (not in the CUDA toolkit; NVIDIA's wheel is installed only into .venv, and $MM_PY is not .venv's): the test layout_zero_cost is skipped. To run it: $MM_PY -m pip install -r tests/requirements.txt, or install the toolkit's cuda-cuobjdump and cuda-nvdisasm"
  elif ! ls "$MM_VENV"/lib/python3*/site-packages/nvidia/cu*/bin/cuobjdump >/dev/null 2>&1; then
    say "the CUDA toolkit has no cuobjdump: installing tests/requirements.txt (NVIDIA's cuobjdump wheel) into $MM_VENV_SHOWN"
    if ! "$MM_PY" -m pip install --quiet --disable-pip-version-check --retries 1 --timeout 15 \
           -r "$MM_ROOT/tests/requirements.txt"; then
      mm_note "no cuobjdump: the CUDA toolkit has none and pip could not install NVIDIA's wheel (offline?). The test layout_zero_cost will be skipped (its PTX half still runs). To run it: run again online, or install the toolkit's cuda-cuobjdump and cuda-nvdisasm packages"
    fi
  fi
}

# pytest and numpy for the Python package's tests (python/requirements-test.txt), into .venv when they are not
# importable yet; offline that fails, and the python.* tests are skipped ("pytest is not importable"), as the
# plot tests are without matplotlib. Into $MM_PYTHON nothing is installed: a note says what is missing.
mm_python_test_packages() {
  local req="$MM_ROOT/python/requirements-test.txt"
  "$MM_PY" -c 'import pytest, numpy' >/dev/null 2>&1 && return 0
  if [ "$MM_PY" = "$MM_VENV/bin/python" ]; then
    say "installing python/requirements-test.txt (pytest, numpy) into $MM_VENV_SHOWN"
    if "$MM_PY" -m pip install --quiet --disable-pip-version-check --retries 1 --timeout 15 -r "$req"; then
      return 0
    fi
    echo "(pip could not install them: offline?)"
  fi
  "$MM_PY" -c 'import pytest' >/dev/null 2>&1 \
    || mm_note "no pytest for $MM_PY: the Python package's tests (python.*) will be skipped. To run them: $MM_PY -m pip install -r python/requirements-test.txt"
}

# The one place that decides whether there will be figures, from the matplotlib $MM_PY imports: sets
# MM_FIGURES (pinned, other, or empty) and MM_NO_FIGURES, and notes what it means for this run.
# $1: the Python's name in messages; $2: 1 for test.sh; $3: why there is no matplotlib; $4: how to get it.
mm_decide_figures() {
  local who=$1 tests=$2 have
  have="$(mm_mpl_version "$MM_PY" || true)"
  if [ -z "$have" ]; then
    MM_FIGURES=""
    MM_NO_FIGURES="$3"
    if [ "$tests" -eq 1 ]; then
      mm_note "no matplotlib: $3. The plot tests that draw (plots.plot_py, plots.figures_reproducible) will be skipped, every other test runs. To get it: $4"
    else
      mm_note "no matplotlib: $3. The chapters still run and write their CSVs; the figures are skipped (one line at the end says how to draw them later). To get it: $4"
    fi
  elif [ "$have" != "$MM_MPL_PIN" ]; then
    MM_FIGURES=other
    mm_note "$who has matplotlib $have, not the pinned $MM_MPL_PIN: the committed figures are not redrawn in place (figures of plots/data/h200 go to build/figures/ instead of docs/images/), and the test plots.figures_reproducible is skipped"
  else
    MM_FIGURES=pinned
  fi
}

# The one line run_all.sh prints instead of drawing the figures when mm_python found no matplotlib: why,
# and the command that draws them later. $1: the results directory; $2: where the figures go.
mm_figures_skipped() {
  printf 'figures skipped: %s. To draw them later, with a Python that has matplotlib %s: python plots/plot.py --data %s --out %s\n' \
    "$MM_NO_FIGURES" "$MM_MPL_PIN" "$1" "$2"
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

# Whether $MM_PY draws the committed figures byte for byte (it has the pinned matplotlib; mm_python decided).
mm_draws_committed_figures() { [ "$MM_FIGURES" = pinned ]; }

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

# The CUDA architectures the build uses, as CMakeLists.txt decides them: build/'s cache, else
# $CUDAARCHS, else this GPU's, else "90a".
mm_cuda_archs() {
  local a cc
  a="$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$MM_ROOT/build/CMakeCache.txt" 2>/dev/null)"
  [ -n "$a" ] || a="${CUDAARCHS:-}"
  if [ -z "$a" ] && cc="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null)"; then
    a="${cc/./}"; [ "$a" = 90 ] && a=90a
  fi
  echo "${a:-90a}"
}

# Configure with the `default` preset (build/), the plot tests using $MM_PY.
mm_configure() {
  say "configuring (cmake --preset default)"
  cmake --preset default -DMM_PYTHON="$MM_PY" || die "CMake configure failed (see above)"
}

# mm_build [target...]: build those targets (everything without any) with one job per core.
mm_build() {
  local targets=()
  [ "$#" -gt 0 ] && targets=(--target "$@")
  say "building ${*:-everything} with $MM_JOBS jobs"
  cmake --build --preset default -j "$MM_JOBS" "${targets[@]}" || die "the build failed (see above)"
}

# Seconds of parallel work ($1, measured on 2 cores) on this machine's cores.
mm_scaled() { echo $(( $1 * 2 / MM_JOBS )); }

# "about 40 s", "about 4 min": $1 seconds, rounded.
mm_minutes() {
  local s=$1
  if [ "$s" -lt 90 ]; then echo "about $(( (s + 5) / 10 * 10 )) s"; else echo "about $(( (s + 30) / 60 )) min"; fi
}
