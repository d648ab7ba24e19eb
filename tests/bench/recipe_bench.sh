#!/usr/bin/env bash
# What a recipe costs next to running its legs by hand: a greedy back-translation (the demo model's
# English -> Chinese -> English, assets/recipes/demo-back-translation-zh.json) over ROWS rows as one
# `generate --recipe` process, against the two legs as two separate batch jobs (`generate --input`
# for the forward leg, its candidates written as the back leg's input file, `generate --input` for
# the back leg), alternating RUNS times. Both sides judge their candidates with the same defaults
# (back_score by the loaded model), so the recipe's single judging round and the back job's
# judging compare; the forward job's own judging is the hand-run's extra cost, as a user pays it.
# Also checks that the recipe's candidates equal the back leg's (greedy: they must).
# Prints per run the wall time (processes, model loads and the file hand-over included), then the
# recipe / two-legs ratio and the CPU.
#   tests/bench/recipe_bench.sh [ROWS=64] [RUNS=3] [THREADS=2] [BATCH=16]
# Not a test.
set -euo pipefail
rows=${1:-64} runs=${2:-3} threads=${3:-2} batch=${4:-16}
source "$(dirname "$0")/demo_bench_lib.sh"
demo_bench_setup recipe "$rows"
recipe=$root/assets/recipes/demo-back-translation-zh.json
common=(--model "$model" --threads "$threads" --batch-size "$batch" --max-new-tokens 48)
now() { date +%s.%N; }
recipe_run() {
  rm -f "$out/recipe.jsonl"
  "$bin" generate "${common[@]}" --input "$out/rows.txt" --recipe "$recipe" --out "$out/recipe.jsonl" >/dev/null
}
legs_run() {
  rm -f "$out/pivot.jsonl" "$out/back.jsonl"
  "$bin" generate "${common[@]}" --input "$out/rows.txt" --prefix "translate English to Chinese: " --out "$out/pivot.jsonl" >/dev/null
  "$py" -c 'import json,sys
for l in open(sys.argv[1]):
    print(json.dumps({"text": json.loads(l)["candidates"][0]["text"]}, ensure_ascii=False))' "$out/pivot.jsonl" >"$out/pivot_rows.jsonl"
  "$bin" generate "${common[@]}" --input "$out/pivot_rows.jsonl" --prefix "translate Chinese to English: " --out "$out/back.jsonl" >/dev/null
}
rm -f "$out/times.txt"
for _ in $(seq "$runs"); do
  for side in recipe legs; do
    start=$(now)
    "${side}_run"
    end=$(now)
    echo "$side $(echo "$end - $start" | bc)" | tee -a "$out/times.txt"
  done
done
"$py" - "$out/recipe.jsonl" "$out/back.jsonl" <<'PY'
import json, sys
recipe = [[c["text"] for c in json.loads(l)["candidates"]] for l in open(sys.argv[1])]
legs = [[c["text"] for c in json.loads(l)["candidates"]] for l in open(sys.argv[2])]
same = sum(r == l for r, l in zip(recipe, legs))
print(f"recipe candidates equal the back leg's on {same} of {len(recipe)} rows")
PY
awk '{ t[$1] += $2; n[$1]++ }
     END { printf "recipe / two legs as separate jobs: %.3fx the time (%.2f s vs %.2f s mean, %d rows, %d runs each)\n",
                  t["recipe"] / t["legs"], t["recipe"] / n["recipe"], t["legs"] / n["legs"], '"$rows"', n["recipe"] }' "$out/times.txt"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, --threads $threads"
