#!/usr/bin/env bash
# Data-parallel training on one machine, t5-small shape (random weights, tests/bench/make_models.py),
# English->Chinese Tatoeba pairs, the same global batch for every peer:
#   one      1 rank x 2 threads
#   serial   2 ranks x 1 thread (Gloo on 127.0.0.1), gradients all-reduced after the backward
#            (T5S_DDP_OVERLAP=off)
#   overlap  2 ranks x 1 thread, 25 MiB buckets all-reduced during the backward (the default)
# The peers alternate, ROUNDS times. Prints each one's mean step time and, for 2 ranks,
# the time rank 0 waits for the gradient all-reduce after its backward (train_log.jsonl
# "allreduce_s": all of it when serial, only what the backward did not hide when overlapped).
#   tests/bench/ddp_bench.sh [STEPS=12] [GLOBAL_BATCH=8] [ROUNDS=2]
# Not a test: the numbers depend on the machine and its load.
set -euo pipefail
steps=${1:-12} batch=${2:-8} rounds=${3:-2}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/build/app/t5studio
out=$root/tests/bench/out/ddp
py=$root/.venv/bin/python
mkdir -p "$out"
model=$("$py" "$root/tests/bench/make_models.py" --models small | "$py" -c 'import json,sys; print(json.loads(sys.stdin.readline())["hf"])')
head -n 4000 "$root/../shared/data/tatoeba-cmn-eng/cmn-eng.tsv" | awk -F'\t' 'BEGIN{print "source\ttarget"} {print $1"\t"$2}' >"$out/pairs.tsv"
common=(train --model "$model" --data "$out/pairs.tsv" --steps "$steps" --dropout 0 --eval-split 0 --device cpu --seed 1
        --max-source-len 32 --max-target-len 32 --lr 1e-4)

two_ranks() {  # RUN OVERLAP(on|off)
  local port; port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  for r in 0 1; do
    T5S_DDP_OVERLAP=$2 RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      "$bin" "${common[@]}" --out "$out/$1" --threads 1 --batch-size $((batch / 2)) >/dev/null 2>"$out/$1.rank$r.err" &
  done
  wait
}
runs=()
for round in $(seq 1 "$rounds"); do
  rm -rf "$out/one-$round" "$out/serial-$round" "$out/overlap-$round"
  "$bin" "${common[@]}" --out "$out/one-$round" --threads 2 --batch-size "$batch" >/dev/null 2>"$out/one-$round.err"
  two_ranks "serial-$round" off
  two_ranks "overlap-$round" on
  runs+=("one-$round" "serial-$round" "overlap-$round")
done
"$py" - "$out" "${runs[@]}" <<'PY'
import json, sys
from collections import defaultdict
out, runs = sys.argv[1], sys.argv[2:]
labels = {"one": "1 rank x 2 threads", "serial": "2 ranks x 1 thread, all-reduce after the backward",
          "overlap": "2 ranks x 1 thread, all-reduce overlapping the backward"}
agg = defaultdict(list)
for run in runs:
    s = [json.loads(l) for l in open(f"{out}/{run}/train_log.jsonl") if '"loss"' in l]
    warm = s[2:]  # the first two steps include allocator and thread-pool warm-up
    dt = (warm[-1]["elapsed_s"] - s[1]["elapsed_s"]) / len(warm)
    ar = sum(x.get("allreduce_s", 0.0) for x in warm) / len(warm)
    early = warm[-1].get("allreduce_buckets_overlapped")
    print(f"{run:10s} {dt * 1000:7.0f} ms/step  all-reduce wait {ar * 1000:6.0f} ms ({100 * ar / dt:4.1f}%)"
          + (f"  buckets [in backward, all] {early}" if early else ""))
    agg[run.split("-")[0]].append((dt, ar))
print("mean over rounds:")
for kind, v in agg.items():
    dt = sum(x[0] for x in v) / len(v); ar = sum(x[1] for x in v) / len(v)
    extra = f", all-reduce wait {ar * 1000:.0f} ms/step ({100 * ar / dt:.1f}% of the step)" if kind != "one" else ""
    print(f"  {labels[kind]}: {dt * 1000:.0f} ms/step{extra}")
PY
