#!/usr/bin/env bash
# Copies what the GPU machine needs from a build made here into .carry/<build> (the device tool
# carries at most 64 MiB): the binaries, the test executables and CTest's files, not the objects.
#   bash scripts/device/pack_build.sh [build-lead]
# scripts/device/h200_session.sh moves it back in place on the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-lead}
dest=.carry/$build
rm -rf "$dest"
mkdir -p "$dest"
# Everything but object files, dependency logs and fetched sources.
tar -C "$build" -cf - --exclude='*.o' --exclude='*.a' --exclude='.ninja_*' --exclude='_deps' --exclude='./CMakeFiles/[0-9]*' . | tar -C "$dest" -xf -
du -sh "$dest"
