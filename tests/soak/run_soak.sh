#!/usr/bin/env bash
# The full soak: 10,000 generations through the engine thread on a tiny real model
# (ctest runs 300 as soak_short). Builds t5s_soak if needed; prints RSS / fds / threads at start,
# after warm-up, every 10 % and at the end. usage: tests/soak/run_soak.sh [BUILD_DIR] [GENERATIONS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}; n=${2:-10000}
nice cmake --build "$build" -j2 --target t5s_soak
"$build/tests/t5s_soak" --model "$here/../data/models/t5v10-tied-relu" --generations "$n" --warmup $((n / 20)) --max-rss-growth 0.05
