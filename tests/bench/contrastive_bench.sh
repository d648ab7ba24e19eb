#!/usr/bin/env bash
# What contrastive search (penalty_alpha 0.6, top_k K: the decoder runs K candidates per input and
# step) costs next to greedy search, on the demo model (assets/demo-model), one process each,
# alternating greedy / contrastive RUNS times.
# Prints per run the wall time (model load included), generated tokens and ms per token, then the
# contrastive / greedy ratio of the total times and of the per-token times, and the CPU.
#   tests/bench/contrastive_bench.sh [ROWS=32] [MAX_NEW_TOKENS=32] [RUNS=1] [THREADS=1] [TOP_K=4]
# Not a test.
set -euo pipefail
rows=${1:-32} max_new=${2:-32} runs=${3:-1} threads=${4:-1} top_k=${5:-4}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/build/app/t5studio
out=$root/tests/bench/out/contrastive
py=$root/.venv/bin/python
model=$root/assets/demo-model
mkdir -p "$out"
tsv=$root/../shared/data/tatoeba-cmn-eng/cmn-eng.tsv
if [ -f "$tsv" ]; then
  awk -F'\t' -v n="$rows" 'NR <= n { print $1 }' "$tsv" >"$out/rows.txt"
else  # no shared data beside the clone: one sentence, repeated
  yes "The weather is nice today, so we will walk to the park." | head -n "$rows" >"$out/rows.txt"
fi
common=(--model "$model" --input "$out/rows.txt" --threads "$threads" --max-new-tokens "$max_new" --min-new-tokens "$max_new"
        --batch-size 8 --no-model-scores)
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
  tail -n 1 "$out/times.txt" | awk '{ printf "%-11s %6.2f s  %6d tokens  %.3f ms/token\n", $1, $2, $3, 1000 * $2 / $3 }'
}
rm -f "$out/times.txt"
for _ in $(seq "$runs"); do
  run greedy
  run contrastive --penalty-alpha 0.6 --top-k "$top_k"
done
awk '{ t[$1] += $2; n[$1] += $3 }
     END { printf "contrastive / greedy: %.2fx the time, %.2fx the time per generated token (%d rows, %d runs each, top_k '"$top_k"')\n",
           t["contrastive"] / t["greedy"], (t["contrastive"] / n["contrastive"]) / (t["greedy"] / n["greedy"]), '"$rows"', '"$runs"' }' "$out/times.txt"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, --threads $threads"
