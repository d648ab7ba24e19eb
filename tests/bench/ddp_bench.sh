#!/usr/bin/env bash
# Data-parallel training on one machine: 2 ranks x 1 thread (Gloo on 127.0.0.1) against 1 rank x
# 2 threads, the same global batch, t5-small shape (random weights, tests/bench/make_models.py),
# English->Chinese Tatoeba pairs. Prints the mean step time of each and, for 2 ranks, the share of
# the step rank 0 spends in the gradient all-reduce (train_log.jsonl "allreduce_s").
#   tests/bench/ddp_bench.sh [STEPS=30] [GLOBAL_BATCH=16]
# Not a test: the numbers depend on the machine and its load.
set -euo pipefail
steps=${1:-30} batch=${2:-16}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/build/app/t5studio
out=$root/tests/bench/out/ddp
py=$root/.venv/bin/python
mkdir -p "$out"
model=$("$py" "$root/tests/bench/make_models.py" --models small | "$py" -c 'import json,sys; print(json.loads(sys.stdin.readline())["hf"])')
head -n 4000 "$root/../shared/data/tatoeba-cmn-eng/cmn-eng.tsv" | awk -F'\t' 'BEGIN{print "source\ttarget"} {print $1"\t"$2}' >"$out/pairs.tsv"
common=(train --model "$model" --data "$out/pairs.tsv" --steps "$steps" --dropout 0 --eval-split 0 --device cpu --seed 1
        --max-source-len 32 --max-target-len 32 --lr 1e-4)

rm -rf "$out/one" "$out/two"
"$bin" "${common[@]}" --out "$out/one" --threads 2 --batch-size "$batch" >/dev/null 2>"$out/one.err"
port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for r in 0 1; do
  RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$bin" "${common[@]}" --out "$out/two" --threads 1 --batch-size $((batch / 2)) >/dev/null 2>"$out/two.rank$r.err" &
done
wait
"$py" - "$out" "$steps" <<'PY'
import json, sys
out, steps = sys.argv[1], int(sys.argv[2])
def steps_of(run):
    return [json.loads(l) for l in open(f"{out}/{run}/train_log.jsonl") if '"loss"' in l]
for run, label in (("one", "1 rank x 2 threads"), ("two", "2 ranks x 1 thread")):
    s = steps_of(run)
    warm = s[2:]  # the first two steps include allocator and thread-pool warm-up
    dt = (warm[-1]["elapsed_s"] - s[1]["elapsed_s"]) / len(warm)
    ar = sum(x.get("allreduce_s", 0.0) for x in warm) / len(warm)
    tok = sum(x["tokens_per_s"] for x in warm) / len(warm)
    line = f"{label}: {dt * 1000:.0f} ms/step, {tok:.0f} tokens/s"
    if run == "two":
        line += f", all-reduce {ar * 1000:.0f} ms/step ({100 * ar / dt:.0f}% of the step)"
    print(line)
PY
