#!/usr/bin/env bash
# Set up (idempotent) and build T5 Studio into ./build (kept between runs: incremental).
# Extra arguments go to CMake, e.g. -DT5S_BUILD_GUI=OFF or -DCMAKE_PREFIX_PATH=/opt/libtorch.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/packaging/setup.sh"
build="${T5S_BUILD_DIR:-$root/build}"
jobs="${T5S_JOBS:-$(nproc)}"
echo "[build] configuring $build" >&2
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >"$root/.cmake-configure.log" 2>&1 || {
  cat "$root/.cmake-configure.log" >&2; exit 1; }
echo "[build] compiling with $jobs jobs (first build takes a while: LibTorch headers are heavy)" >&2
cmake --build "$build" -j "$jobs"
