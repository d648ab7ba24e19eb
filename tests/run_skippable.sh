#!/usr/bin/env bash
# Runs a test command. Exit 77 (ctest SKIP_RETURN_CODE) when it passed but a check printed
# "T5S_SKIP: <test>: <reason>" (it could not run here, tests/skip.h); otherwise its own exit code,
# so a failure is never hidden by a skip.
set -uo pipefail
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 0 ] && grep -q '^T5S_SKIP:' "$out"; then
    echo "skipped: $(grep '^T5S_SKIP:' "$out" | sed 's/^T5S_SKIP: //' | paste -sd ';' -)"
    exit 77
fi
exit "$rc"
