#!/usr/bin/env bash
# What group (diverse) beam search costs next to plain beam search with as many beams: the
# humarin/chatgpt_paraphraser_on_T5_base card's recipe (5 beams in 5 groups, diversity_penalty 3,
# repetition_penalty 10, no_repeat_ngram_size 2) against the same without groups, on the demo
# model (assets/demo-model), one process each, alternating plain / group RUNS times.
# Prints per run the wall time (model load included), generated tokens and ms per token, then the
# group / plain ratio of the total times and of the per-token times, and the CPU.
#   tests/bench/group_beam_bench.sh [ROWS=64] [MAX_NEW_TOKENS=32] [RUNS=1] [THREADS=1]
# Not a test.
set -euo pipefail
rows=${1:-64} max_new=${2:-32} runs=${3:-1} threads=${4:-1}
source "$(dirname "$0")/demo_bench_lib.sh"
demo_bench_setup group_beam "$rows"
common=(--model "$model" --input "$out/rows.txt" --threads "$threads" --prefix "paraphrase: " --beams 5 --num-return 5
        --repetition-penalty 10.0 --no-repeat-ngram 2 --max-new-tokens "$max_new" --batch-size 8 --no-model-scores)
rm -f "$out/times.txt"
for _ in $(seq "$runs"); do
  demo_bench_run plain
  demo_bench_run group --num-beam-groups 5 --diversity-penalty 3.0
done
awk '{ t[$1] += $2; n[$1] += $3 }
     END { printf "group / plain: %.2fx the time, %.2fx the time per generated token (%d rows, %d runs each)\n",
           t["group"] / t["plain"], (t["group"] / n["group"]) / (t["plain"] / n["plain"]), '"$rows"', '"$runs"' }' "$out/times.txt"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, --threads $threads"
