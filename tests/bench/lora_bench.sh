#!/usr/bin/env bash
# LoRA (r 8, q,v) vs full fine-tuning on the t5-base shape with random weights, CPU, batch 8,
# 128 source / 64 target tokens, fp32 compute, no gradient checkpointing (the same in every arm):
# peak RSS and median step time, one process per measurement, the arms alternating (full, LoRA
# with the base held in fp32, bf16, int8, full, ...) in the same run. Then the trainable
# parameters of r=8 q,v on the flan-t5-base / large / xl shapes (computed from their configs).
#
#   bash tests/bench/lora_bench.sh [BUILD_DIR=build] [ROUNDS=2] [STEPS=3] [BASES="fp32 bf16 int8"]
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${2:-2}
STEPS=${3:-3}
BASES=${4:-fp32 bf16 int8}
BIN="$BUILD/tests/t5s_lora_bench"
[ -x "$BIN" ] || { echo "build it first: cmake --build $BUILD --target t5s_lora_bench" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

for ((i = 0; i < ROUNDS; i++)); do
  "$BIN" --mode full --steps "$STEPS" --batch 8 --src 128 --tgt 64 | tee -a "$TMP/runs.jsonl"
  for base in $BASES; do
    "$BIN" --mode lora --base "$base" --steps "$STEPS" --batch 8 --src 128 --tgt 64 --r 8 --targets q,v | tee -a "$TMP/runs.jsonl"
  done
done
python3 - "$TMP/runs.jsonl" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
modes = list(dict.fromkeys(r["mode"] for r in runs))
by = {m: [r for r in runs if r["mode"] == m] for m in modes}
peak = {m: max(r["peak_rss_bytes"] for r in v) for m, v in by.items()}
step = {m: statistics.median(r["step_s"] for r in v) for m, v in by.items()}
mib = lambda b: b / 2**20
for m in modes:
    r = by[m][0]
    print(f"{m:10s}: peak RSS {mib(peak[m]):.0f} MiB, step {step[m]:.2f} s, weights {mib(r['weights_heap_bytes']):.0f} MiB, "
          f"kept for backward {mib(r['forward_saved_bytes']):.0f} MiB ({r['trainable']} trainable)")
for m in modes:
    if m != "full":
        print(f"{m} / full: peak {100 * peak[m] / peak['full']:.1f} % (aim <= 45 %), "
              f"step time {100 * step[m] / step['full']:.1f} % (aim <= 100 %)")
PY

# flan-t5 shapes (config.json fields that decide the parameter count).
for spec in "base 768 2048 12 12" "large 1024 2816 16 24" "xl 2048 5120 32 24"; do
  read -r name d ff heads layers <<<"$spec"
  cat >"$TMP/flan-t5-$name.json" <<JSON
{"model_type": "t5", "d_model": $d, "d_ff": $ff, "d_kv": 64, "num_heads": $heads, "num_layers": $layers,
 "num_decoder_layers": $layers, "vocab_size": 32128, "feed_forward_proj": "gated-gelu", "tie_word_embeddings": false}
JSON
  "$BIN" --count "$TMP/flan-t5-$name.json" --r 8 --targets q,v
done
