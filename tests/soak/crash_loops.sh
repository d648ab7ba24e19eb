#!/usr/bin/env bash
# The long crash loops (ctest runs short ones): SIGKILL at random moments during history
# writes and during export (test_history "[crash]"), and during checkpoint writes
# (checkpoint_crash_loop.sh). Prints the "crash loop ..." count lines; exit 0 = no failure.
# usage: tests/soak/crash_loops.sh [BUILD_DIR] [HISTORY_ITERATIONS (200)] [CHECKPOINT_ITERATIONS (30)]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}; n_history=${2:-200}; n_checkpoint=${3:-30}
status=0
T5S_CRASH_ITERATIONS=$n_history "$build/tests/test_history" "[crash]" | grep -E "^crash loop|passed|failed" || status=1
bash "$here/checkpoint_crash_loop.sh" "$build/app/t5studio" "$here/../data/models/t5v10-tied-relu" \
  "$build/tests/checkpoint_crash_loop" "$n_checkpoint" | grep -E "^crash loop|^iteration" || status=1
exit $status
