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
source "$(dirname "$0")/demo_bench_lib.sh"
demo_bench_setup contrastive "$rows"
common=(--model "$model" --input "$out/rows.txt" --threads "$threads" --max-new-tokens "$max_new" --min-new-tokens "$max_new"
        --batch-size 8 --no-model-scores)
rm -f "$out/times.txt"
for _ in $(seq "$runs"); do
  demo_bench_run greedy
  demo_bench_run contrastive --penalty-alpha 0.6 --top-k "$top_k"
done
awk '{ t[$1] += $2; n[$1] += $3 }
     END { printf "contrastive / greedy: %.2fx the time, %.2fx the time per generated token (%d rows, %d runs each, top_k '"$top_k"')\n",
           t["contrastive"] / t["greedy"], (t["contrastive"] / n["contrastive"]) / (t["greedy"] / n["greedy"]), '"$rows"', '"$runs"' }' "$out/times.txt"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, --threads $threads"
