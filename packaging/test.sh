#!/usr/bin/env bash
# Set up, build and run the whole test suite (Catch2 via ctest). Used by .ci/run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
T5S_SETUP_PROFILE="${T5S_SETUP_PROFILE:-test}" "$root/packaging/build.sh" -DT5S_BUILD_TESTS=ON "$@"
build="${T5S_BUILD_DIR:-$root/build}"
cd "$build"
ctest --output-on-failure -j "${T5S_JOBS:-$(nproc)}" --timeout 1500
