#!/usr/bin/env bash
# Builds everything and runs every test (the README's test command).
#
#   scripts/test.sh [ctest arguments, e.g. -R plots]
#
# Needs the CUDA toolkit, CMake 3.25 to 4.x, Ninja, a C++ compiler and Python 3; installs matplotlib
# into .venv itself, and NVIDIA's cuobjdump wheel only when the toolkit has no cuobjdump (offline,
# with both already there, it needs no network). Without a GPU the GPU tests are reported as
# skipped, not passed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

mm_check_tools
mm_venv tests
mm_configure_and_build
# One test process per core: the tests are independent processes (most start, find no GPU and skip;
# on a GPU they share it), so running them side by side only saves time.
say "running the tests (ctest --preset default -j $MM_JOBS)"
if ! ctest --preset default -j "$MM_JOBS" "$@"; then
  die "some tests failed (listed above)"
fi
