#!/usr/bin/env bash
# Builds (if needed) and runs every libFuzzer target for SECONDS each, one after the other.
#   tests/fuzz/run.sh SECONDS [TARGET...]
# Env: T5S_FUZZ_BUILD (build folder, default build/fuzz-clang), CXX_FUZZ (default clang++-14),
#      NICE (default 19), MAX_LEN (input size limit, default 16384), T5S_FUZZ_NO_BUILD=1 (skip the build).
# Per target it prints the executions and crashes of this run and appends them to
# $T5S_FUZZ_BUILD/execs.tsv (date, target, seconds, execs, crashes) so long runs add up. Crash
# inputs land in $T5S_FUZZ_BUILD/crashes/<target>/; keep each one, once fixed, under
# tests/fuzz/regressions/<target>/ (ctest replays them all). Exit 1 if any target crashed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${1:?usage: tests/fuzz/run.sh SECONDS [TARGET...]}"
shift
build="${T5S_FUZZ_BUILD:-$root/build/fuzz-clang}"
cxx="${CXX_FUZZ:-clang++-14}"
nice_level="${NICE:-19}"
command -v "$cxx" >/dev/null || { echo "SKIP: $cxx not found (apt-get install clang-14 libclang-rt-14-dev)"; exit 77; }

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$here" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
# T5S_FUZZ_NO_BUILD=1: run the binaries as they are (e.g. while another build is under way).
[ -n "${T5S_FUZZ_NO_BUILD:-}" ] || nice -n "$nice_level" cmake --build "$build" -j"${T5S_FUZZ_BUILD_JOBS:-2}" >/dev/null

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  # shellcheck disable=SC2207
  targets=($(sed -n 's/^  \(fuzz_[a-z_]*\)$/\1/p' "$here/targets.cmake"))
fi

# Seeds: the checked-in corpus plus the test fixtures each target reads.
seed_dir() {
  local t="$1" d="$build/seeds/$1"
  mkdir -p "$d"
  [ -d "$here/corpus/$t" ] && cp -n "$here/corpus/$t"/* "$d"/ 2>/dev/null || true
  case "$t" in
    fuzz_safetensors)
      cp -n "$root"/tests/data/safetensors_cases/*.safetensors "$d"/ 2>/dev/null || true
      # one real checkpoint shard (the smallest) for the real header layout
      cp -n "$root/tests/data/models/sharded-safetensors/model-00004-of-00004.safetensors" "$d/" ;;
  esac
  echo "$d"
}

status=0
printf '%-26s %8s %12s %8s\n' target seconds execs crashes
for t in "${targets[@]}"; do
  seeds="$(seed_dir "$t")"
  work="$build/corpus/$t" crashes="$build/crashes/$t" log="$build/logs/$t.log"
  mkdir -p "$work" "$crashes" "$(dirname "$log")"
  before=$(find "$crashes" -type f | wc -l)
  rc=0
  # Inputs up to 16 KiB (seeds longer than that are cut): small inputs keep the rate high; the
  # formats' structure (headers, protobuf fields, charsmap tries of the tiny seeds) fits in it.
  (cd "$build" && nice -n "$nice_level" "$build/$t" -max_total_time="$seconds" -print_final_stats=1 -timeout=25 \
      -rss_limit_mb=4096 -max_len="${MAX_LEN:-16384}" -artifact_prefix="$crashes/" "$work" "$seeds" >"$log" 2>&1) || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{s+=$1} END {print s+0}')
  found=$(( $(find "$crashes" -type f | wc -l) - before ))
  [ "$rc" -ne 0 ] && [ "$found" -eq 0 ] && found=1  # died without leaving an input (see the log)
  printf '%-26s %8s %12s %8s\n' "$t" "$seconds" "$execs" "$found"
  printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$seconds" "$execs" "$found" >>"$build/execs.tsv"
  if [ "$found" -ne 0 ]; then
    status=1
    echo "  crash input(s) in $crashes, log $log:"
    grep -m3 '^SUMMARY\|^==[0-9]*==ERROR' "$log" | sed 's/^/    /' || true
  fi
done
exit $status
