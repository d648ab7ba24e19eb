#!/usr/bin/env bash
# One short libFuzzer run for ctest: ctest_run.sh FUZZ_BUILD TARGET SECONDS. Seeds: the checked-in
# corpus and the regressions; new corpus entries go to a scratch folder. Fails on any crash and
# prints where its input was saved.
set -euo pipefail
build="$1" target="$2" seconds="$3"
here="$(cd "$(dirname "$0")" && pwd)"
[ -x "$build/$target" ] || { echo "SKIP: $build/$target was not built"; exit 77; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$build/crashes/$target"
seeds=()
[ -d "$here/corpus/$target" ] && seeds+=("$here/corpus/$target")
[ -d "$here/regressions/$target" ] && seeds+=("$here/regressions/$target")
# The safetensors target is seeded from the reference cases the loader tests use.
[ "$target" = fuzz_safetensors ] && seeds+=("$here/../data/safetensors_cases")
rc=0
"$build/$target" -max_total_time="$seconds" -print_final_stats=1 -timeout=25 -rss_limit_mb=4096 \
  -artifact_prefix="$build/crashes/$target/" "$work/corpus" "${seeds[@]}" >"$work/log" 2>&1 || rc=$?
grep -E '^stat::number_of_executed_units|^Done ' "$work/log" || true
if [ "$rc" -ne 0 ]; then
  grep -E 'ERROR|SUMMARY|Test unit written' "$work/log" | head -5
  exit 1
fi
