# Sourced by the demo-model benches (group_beam, constrained_beam, contrastive, recipe): one home
# for where things are, the input rows and a timed `generate` run. Not a test.

# demo_bench_setup NAME ROWS: sets root, bin, out (tests/bench/out/NAME), py and model, and writes
# $out/rows.txt: the first ROWS Tatoeba English sentences (one sentence repeated when ../shared is
# not beside the clone).
demo_bench_setup() {
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  bin=$root/build/app/t5studio
  out=$root/tests/bench/out/$1
  py=$root/.venv/bin/python
  model=$root/assets/demo-model
  mkdir -p "$out"
  local tsv=$root/../shared/data/tatoeba-cmn-eng/cmn-eng.tsv
  if [ -f "$tsv" ]; then
    awk -F'\t' -v n="$2" 'NR <= n { print $1 }' "$tsv" >"$out/rows.txt"
  else
    yes "The weather is nice today, so we will walk to the park." | head -n "$2" >"$out/rows.txt"
  fi
}

# demo_bench_run NAME FLAGS...: one `generate` process with the caller's ${common[@]} and FLAGS,
# written to $out/NAME.jsonl; appends "NAME seconds tokens" to $out/times.txt and prints it.
demo_bench_run() {
  local name=$1
  shift
  local start end
  rm -f "$out/$name.jsonl"  # --out resumes a file it finds
  start=$(date +%s.%N)
  "$bin" generate "${common[@]}" "$@" --out "$out/$name.jsonl" >/dev/null
  end=$(date +%s.%N)
  "$py" - "$out/$name.jsonl" "$start" "$end" "$name" >>"$out/times.txt" <<'PY'
import json, sys
path, start, end, name = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
tokens = sum(len(c["ids"]) for l in open(path) for c in json.loads(l)["candidates"])
print(name, end - start, tokens)
PY
  tail -n 1 "$out/times.txt" | awk '{ printf "%-17s %6.2f s  %6d tokens  %.3f ms/token\n", $1, $2, $3, 1000 * $2 / $3 }'
}
