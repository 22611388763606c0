#!/usr/bin/env bash
# Builds everything and runs every test (the README's test command), then sums up: how many tests
# ran and passed, how many were skipped and why (no GPU, the GPU lacks an architecture, a missing
# tool...), how many failed (scripts/test_summary.py, from ctest's JUnit file build/ctest-junit.xml).
#
#   scripts/test.sh [ctest arguments, e.g. -R plots]
#
# Needs the CUDA toolkit, CMake 3.25 to 4.x, Ninja, a C++ compiler and Python 3; installs matplotlib
# into .venv itself, and NVIDIA's cuobjdump wheel only when the toolkit has no cuobjdump. Offline,
# whatever is missing is listed at once, each with its fix; no matplotlib (pip cannot reach PyPI) only
# skips the two plot tests that draw (plots.plot_py, plots.figures_reproducible), a missing cuobjdump
# the one test that needs it (layout_zero_cost): every other test runs, and the summary groups the
# skipped ones by reason. Without a GPU the GPU tests are reported as skipped, never as passed.
# From a fresh clone on 2 cores without a GPU (one architecture, sm_90a, the default there): about
# 21 minutes in all, 18.5 of them building (2026-11-30: 2,200 s of compile time, cicc 810 s of it); as
# .ci/run builds it (MM_QUICK_BUILD=1), about 16 minutes, 13 of them building (2026-12-01: 1,562 s).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# Rough times measured on a 2-core machine without a GPU (seconds), for the plan.
BUILD_ALL_PER_ARCH_S=1110  # every target, fresh, one device architecture (a fresh build, 2026-11-30; a quick
                           # build, MM_QUICK_BUILD=1 as in .ci/run: 780 s, 2026-12-01)
CTEST_S=125                # ctest -j 2 without a GPU: 2,708 tests, most start, find no GPU and skip
archs="$(mm_cuda_archs)"
n_archs=$(( $(tr -cd ';' <<<"$archs" | wc -c) + 1 ))
say "plan: build everything, run every test, sum up"
cat <<EOF
  build: every chapter, every test and tool, for sm_${archs//;/ and sm_}: $(mm_minutes "$(mm_scaled $((BUILD_ALL_PER_ARCH_S * n_archs)))") here
         when build/ is fresh (CUDAARCHS=90a builds one architecture), less when it is up to date
  run:   ctest -j $MM_JOBS: $(mm_minutes "$(mm_scaled $CTEST_S)") without a GPU
  then:  how many tests passed, were skipped (and why) and failed
EOF
mm_check_tools tests
mm_python tests
mm_stop_if_missing
mm_configure
mm_build
# One test process per core: the tests are independent processes (most start, find no GPU and skip;
# on a GPU they share it), so running them side by side only saves time.
say "running the tests (ctest --preset default -j $MM_JOBS)"
junit="$MM_ROOT/build/ctest-junit.xml"
rm -f "$junit"
rc=0
ctest --preset default -j "$MM_JOBS" --output-junit "$junit" "$@" || rc=$?
"$MM_PY" "$MM_ROOT/scripts/test_summary.py" "$junit" || true
if [ "$rc" -ne 0 ]; then
  die "some tests failed (listed above)"
fi
