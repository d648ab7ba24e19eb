#!/usr/bin/env bash
# What constrained beam search (force_words) costs next to plain beam search with as many beams:
# 4 beams, 2 candidates, paraphrasing with a phrasal and a disjunctive constraint ("very",
# "today|now") against the same without constraints, on the demo model (assets/demo-model), one
# process each, alternating plain / constrained RUNS times.
# A candidate of constrained search cannot end before it holds every constraint, so it often runs
# longer than plain search's: a second pair (*_fixed) gives both --min-new-tokens MAX_NEW_TOKENS,
# every candidate as long, which compares the cost of a step.
# Prints per run the wall time (model load included), generated tokens and ms per token, then the
# constrained / plain ratio of the total times and of the per-token times for each pair, and the CPU.
#   tests/bench/constrained_beam_bench.sh [ROWS=64] [MAX_NEW_TOKENS=32] [RUNS=1] [THREADS=1]
# Not a test.
set -euo pipefail
rows=${1:-64} max_new=${2:-32} runs=${3:-1} threads=${4:-1}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/build/app/t5studio
out=$root/tests/bench/out/constrained_beam
py=$root/.venv/bin/python
model=$root/assets/demo-model
mkdir -p "$out"
tsv=$root/../shared/data/tatoeba-cmn-eng/cmn-eng.tsv
if [ -f "$tsv" ]; then
  awk -F'\t' -v n="$rows" 'NR <= n { print $1 }' "$tsv" >"$out/rows.txt"
else  # no shared data beside the clone: one sentence, repeated
  yes "The weather is nice today, so we will walk to the park." | head -n "$rows" >"$out/rows.txt"
fi
common=(--model "$model" --input "$out/rows.txt" --threads "$threads" --prefix "paraphrase: " --beams 4 --num-return 2
        --max-new-tokens "$max_new" --batch-size 8 --no-model-scores)
run() {  # name, extra flags...
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
rm -f "$out/times.txt"
for _ in $(seq "$runs"); do
  run plain
  run constrained --force-words "very,today|now"
  run plain_fixed --min-new-tokens "$max_new"
  run constrained_fixed --min-new-tokens "$max_new" --force-words "very,today|now"
done
awk '{ t[$1] += $2; n[$1] += $3 }
     END { for (s = 0; s < 2; s++) {
             c = s ? "constrained_fixed" : "constrained"; p = s ? "plain_fixed" : "plain"
             printf "%s / %s: %.2fx the time, %.2fx the time per generated token (%d rows, %d runs each)\n",
                    c, p, t[c] / t[p], (t[c] / n[c]) / (t[p] / n[p]), '"$rows"', '"$runs"' } }' "$out/times.txt"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, --threads $threads"
