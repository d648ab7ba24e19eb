#!/usr/bin/env bash
# The throughput an augmentation shard gets from one device, for the "on paper" estimate in
# packaging/README.md: `generate --input` with the flags of packaging/slurm-augment.sh (sampling,
# 4 candidates, top-p 0.9) on English Tatoeba rows, t5-small shape (random weights: every candidate
# runs to --max-new-tokens, so tokens/row is the cap, the worst case), then `merge` of the part.
# Prints rows/s and generated tokens/s (candidate tokens / wall time of the whole process, model
# load included) per thread count.
#   tests/bench/augment_bench.sh [ROWS=256] [MAX_NEW_TOKENS=32] [DEVICE=cpu] [THREADS="1 2"]
# Not a test. On a GPU: DEVICE=cuda THREADS=1, and --dtype bf16 is added.
set -euo pipefail
rows=${1:-256} max_new=${2:-32} device=${3:-cpu} threads=${4:-"1 2"}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/build/app/t5studio
out=$root/tests/bench/out/augment
py=$root/.venv/bin/python
mkdir -p "$out"
model=$("$py" "$root/tests/bench/make_models.py" --models small | "$py" -c 'import json,sys; print(json.loads(sys.stdin.readline())["hf"])')
cut -f1 "$root/../shared/data/tatoeba-cmn-eng/cmn-eng.tsv" | head -n "$rows" >"$out/rows.txt"
dtype=fp32; [ "$device" = cuda ] && dtype=bf16
for t in $threads; do
  rm -f "$out/part.jsonl"
  start=$(date +%s.%N)
  "$bin" generate --model "$model" --input "$out/rows.txt" --device "$device" --dtype "$dtype" --threads "$t" \
    --batch-size 64 --sample --seed 1 --num-return 4 --top-p 0.9 --max-new-tokens "$max_new" --out "$out/part.jsonl" >/dev/null
  end=$(date +%s.%N)
  mstart=$(date +%s.%N)
  "$bin" merge --out "$out/merged.jsonl" "$out/part.jsonl" >/dev/null
  mend=$(date +%s.%N)
  "$py" - "$out/part.jsonl" "$start" "$end" "$t" "$mstart" "$mend" <<'PY'
import json, sys
path, start, end, threads, mstart, mend = sys.argv[1], *map(float, sys.argv[2:])
rows = [json.loads(l) for l in open(path)]
tokens = sum(len(c["ids"]) for r in rows for c in r["candidates"])
wall = end - start
print(f"threads {threads:.0f}: {len(rows)} rows in {wall:.1f} s = {len(rows) / wall:.1f} rows/s, "
      f"{tokens} candidate tokens = {tokens / wall:.0f} tokens/s ({tokens / len(rows):.0f} tokens/row); "
      f"merge {len(rows) / (mend - mstart):.0f} rows/s")
PY
done
