#!/usr/bin/env bash
# Reproduces assets/demo-model: a small T5 (3+3 layers, d_model 128, 6000-piece SentencePiece
# vocabulary with byte fallback) trained FROM SCRATCH with `t5studio train` on ../shared/data:
#   - JGLUE JSTS pairs with label >= 4, both directions: "paraphrase: <ja>" -> <ja>
#   - Tatoeba cmn-eng: "translate English to Chinese: " / "translate Chinese to English: "
# Adafactor (relative step sizes), 6000 steps of 32 pairs, 1 thread: ~21 minutes on a shared 2-core
# machine (capped at 30 by --max-time); eval loss 2.75;
# fp32 weights (~9 MB).
#
# usage: packaging/train_demo.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
WORK="${2:-$ROOT/build/demo-train}"
SHARED="${T5S_SHARED_DIR:-$ROOT/../shared}"
T5STUDIO="$BUILD/app/t5studio"
THREADS="${THREADS:-1}"
[ -x "$T5STUDIO" ] || { echo "train_demo.sh: $T5STUDIO not built (packaging/build.sh first)" >&2; exit 1; }
[ -d "$SHARED/data" ] || { echo "train_demo.sh: $SHARED/data not found" >&2; exit 1; }

echo "== data" >&2
python3 "$ROOT/packaging/make_demo_data.py" "$SHARED/data" "$WORK/data"

echo "== training (log: $WORK/run/train_log.jsonl)" >&2
"$T5STUDIO" train --init-config "$ROOT/packaging/demo_config.json" --vocab-size 6000 \
  --data "$WORK/data/train.jsonl" --eval-data "$WORK/data/eval.jsonl" --max-eval-pairs 300 \
  --out "$WORK/run" --steps "${STEPS:-6000}" --batch-size 32 --optimizer adafactor \
  --max-grad-norm 1.0 --max-source-len 64 --max-target-len 64 \
  --eval-every 500 --save-every 500 --keep-last 1 --seed 42 --threads "$THREADS" --log-every 25 \
  --max-time "${MAX_TIME:-1800}" ${RESUME:+--resume}

echo "== copying to assets/demo-model" >&2
DEST="$ROOT/assets/demo-model"
mkdir -p "$DEST"
cp "$WORK/run/final/"{config.json,model.safetensors,spiece.model,tokenizer_config.json,special_tokens_map.json,generation_config.json} "$DEST/"
python3 - "$WORK/run/train_log.jsonl" "$DEST/training_summary.json" <<'PY'
import json, sys
steps, evals = [], []
for line in open(sys.argv[1], encoding="utf-8"):
    j = json.loads(line)
    (evals if "eval_loss" in j else steps).append(j)
steps = [s for s in steps if "loss" in s]
out = {"steps": steps[-1]["step"] if steps else 0,
       "elapsed_s": steps[-1]["elapsed_s"] if steps else 0,
       "final_train_loss": steps[-1]["loss"] if steps else None,
       "evals": [{"step": e["step"], "eval_loss": e["eval_loss"]} for e in evals],
       "last_samples": evals[-1]["samples"] if evals else []}
json.dump(out, open(sys.argv[2], "w", encoding="utf-8"), ensure_ascii=False, indent=2)
PY
du -sh "$DEST" >&2
