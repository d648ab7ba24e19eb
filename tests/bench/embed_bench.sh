#!/usr/bin/env bash
# What scoring candidates with a sentence embedder adds to generation: t5-small shape sampling
# 8 candidates for each input vs embedding every source + candidate with a MiniLM-shaped embedder
# (12 layers, d 384), random weights, CPU, same threads, alternating. Writes out/embed_bench.json.
#   tests/bench/embed_bench.sh [--threads N] [--rounds R] [--inputs N] [--dtype fp32|bf16|int8]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PY="$ROOT/.venv/bin/python"
OUT="$ROOT/tests/bench/out"
mkdir -p "$OUT"
T5_DIR=$("$PY" "$ROOT/tests/bench/make_models.py" --models small | "$PY" -c 'import json,sys; print(json.loads(sys.stdin.readline())["hf"])')
EMB_DIR=$("$PY" "$ROOT/tests/bench/make_embedder.py")
cmake --build "$ROOT/build" --target t5s_embed_bench >/dev/null
"$ROOT/build/tests/t5s_embed_bench" --model "$T5_DIR" --embedder "$EMB_DIR" "$@" | tee "$OUT/embed_bench.json"
