#!/usr/bin/env bash
# Set up, build and open the T5 Studio desktop app on the bundled demo model (or on the model
# folder given as the first argument, e.g. a Hugging Face t5-small / flan-t5 / mT5 download, or
# ORG/NAME[@REV] of a model in the Hugging Face cache, e.g. after `t5studio pull ORG/NAME`).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The runtime profile has no Catch2: build the app, not the test suite.
T5S_SETUP_PROFILE="${T5S_SETUP_PROFILE:-runtime}" "$root/packaging/build.sh" -DT5S_BUILD_TESTS=OFF
model="${1:-}"
if [ -z "$model" ]; then
  if [ -f "$root/assets/demo-model/config.json" ]; then model="$root/assets/demo-model"
  else model="$root/tests/data/models/flan-gated-gelu-bf16"; fi
fi
app="${T5S_BUILD_DIR:-$root/build}/app/t5studio"
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  echo "[run] no display: running the headless front end instead (t5studio generate)" >&2
  exec "$app" generate --model "$model" --text "${T5S_TEXT:-猫が好きです。}" --sample --num-return 4 --distinct --seed 1 --max-new-tokens 24
fi
exec "$app" --model "$model"
