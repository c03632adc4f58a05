#!/usr/bin/env bash
# Builds sparkops into build/ (Release-ish, with debug info).
set -euo pipefail
cd "$(dirname "$0")/.."
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
cmake -S . -B build "${GEN[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPARKOPS_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target sparkops
