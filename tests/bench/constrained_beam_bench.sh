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
source "$(dirname "$0")/demo_bench_lib.sh"
demo_bench_setup constrained_beam "$rows"
common=(--model "$model" --input "$out/rows.txt" --threads "$threads" --prefix "paraphrase: " --beams 4 --num-return 2
        --max-new-tokens "$max_new" --batch-size 8 --no-model-scores)
rm -f "$out/times.txt"
for _ in $(seq "$runs"); do
  demo_bench_run plain
  demo_bench_run constrained --force-words "very,today|now"
  demo_bench_run plain_fixed --min-new-tokens "$max_new"
  demo_bench_run constrained_fixed --min-new-tokens "$max_new" --force-words "very,today|now"
done
awk '{ t[$1] += $2; n[$1] += $3 }
     END { for (s = 0; s < 2; s++) {
             c = s ? "constrained_fixed" : "constrained"; p = s ? "plain_fixed" : "plain"
             printf "%s / %s: %.2fx the time, %.2fx the time per generated token (%d rows, %d runs each)\n",
                    c, p, t[c] / t[p], (t[c] / n[c]) / (t[p] / n[p]), '"$rows"', '"$runs"' } }' "$out/times.txt"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, --threads $threads"
