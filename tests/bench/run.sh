#!/usr/bin/env bash
# The benchmark command: T5 Studio vs transformers vs CTranslate2 on random-weight t5-small (and
# optionally t5-base, t5-large, mT5-base) checkpoints, same inputs and thread count, one run. Builds
# t5s_bench when needed, makes the models once (tests/bench/out/models), writes
# tests/bench/out/results.{md,json}.
#   tests/bench/run.sh [--models small,base,large,mt5-base] [--runs 5] [--quick] [--threads N] ...   (run_bench.py --help)
# Env: T5S_BUILD_DIR (default ./build), T5S_JOBS (compile jobs).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${T5S_BUILD_DIR:-$root/build}"
export T5S_BUILD_DIR="$build"
jobs="${T5S_JOBS:-$(nproc)}"
if [ ! -f "$build/build.ninja" ]; then
  "$root/packaging/build.sh"                     # first build: setup + configure + build everything
elif ! ninja -C "$build" -t targets all 2>/dev/null | grep -q '^t5s_bench:'; then
  cmake "$build" >/dev/null                      # configured before tests/bench.cmake existed
fi
echo "[bench] building t5s_bench (incremental)" >&2
cmake --build "$build" --target t5s_bench -j "$jobs" >&2
py="$root/.venv/bin/python"
[ -x "$py" ] || py=python3
exec "$py" "$root/tests/bench/run_bench.py" "$@"
