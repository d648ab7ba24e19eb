#!/usr/bin/env bash
# LoRA (r 8, q,v) vs full fine-tuning on the t5-base shape with random weights, CPU, batch 8,
# 128 source / 64 target tokens: peak RSS and median step time, one process per measurement,
# the two modes alternating (full, lora, full, lora, ...) in the same run. Then the trainable
# parameters of r=8 q,v on the flan-t5-base / large / xl shapes (computed from their configs).
#
#   bash tests/bench/lora_bench.sh [BUILD_DIR=build] [ROUNDS=2] [STEPS=3]
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${2:-2}
STEPS=${3:-3}
BIN="$BUILD/tests/t5s_lora_bench"
[ -x "$BIN" ] || { echo "build it first: cmake --build $BUILD --target t5s_lora_bench" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

for ((i = 0; i < ROUNDS; i++)); do
  for mode in full lora; do
    "$BIN" --mode "$mode" --steps "$STEPS" --batch 8 --src 128 --tgt 64 --r 8 --targets q,v | tee -a "$TMP/runs.jsonl"
  done
done
python3 - "$TMP/runs.jsonl" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
by = {m: [r for r in runs if r["mode"] == m] for m in ("full", "lora")}
peak = {m: max(r["peak_rss_bytes"] for r in v) for m, v in by.items()}
step = {m: statistics.median(r["step_s"] for r in v) for m, v in by.items()}
print(f"full FT: peak RSS {peak['full'] / 2**20:.0f} MiB, step {step['full']:.2f} s ({by['full'][0]['trainable']} trainable)")
print(f"LoRA   : peak RSS {peak['lora'] / 2**20:.0f} MiB, step {step['lora']:.2f} s ({by['lora'][0]['trainable']} trainable)")
print(f"LoRA / full: peak {100 * peak['lora'] / peak['full']:.1f} % (aim <= 45 %), step time {100 * step['lora'] / step['full']:.1f} % (aim <= 100 %)")
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
