#!/usr/bin/env bash
# End-to-end test of the desktop app under Xvfb: a 20-row file worked through with the keyboard
# alone (generate, edit, accept, reject, undo, next), an export checked against the decisions made,
# a PNG of each panel, and frame-time p50/p99 (idle / generating / exporting).
# usage: run_e2e.sh APP UI_TEST_DIR MODEL_DIR OUT_DIR
set -euo pipefail
app=$1; src=$2; model=$3; out=$4
rm -rf "$out"; mkdir -p "$out/config" "$out/screenshots"
rows="$src/rows20.txt"
embedder="$src/../data/embedder/xlmr_mean_norm"
export_file="$out/export.jsonl"
script="$out/e2e.script"
extra=()


{
  echo "frames 3"
  echo "wait_model 300"
  # The random-weight test model's byte-fallback pieces often form no character: keep those candidates.
  echo 'option {"drop_invalid_text": false}'
  echo "screenshot model Model"
  echo "load_embedder $embedder"          # the Model panel's embedding-model slot
  echo "wait_embedder 120"
  echo "screenshot model_embedder Model"
  echo "key ctrl+b"
  echo "type $rows"
  echo "key enter"
  echo "wait_idle"
  echo "screenshot batch Batch augmentation"
  echo "key ctrl+r"                       # review the rows one by one: row 1 generates
  echo "wait_idle 120"
  echo "expect_candidates 2"
  echo "screenshot workspace_row1 Workspace"
  echo "key shift+enter"                  # row 1: accept candidate 1, next
  echo "wait_idle 120"
  echo "key down"                         # row 2: edit candidate 2 in place
  echo "key e"
  echo "frames 2"
  echo "key ctrl+end"
  echo "type （編集済み）"
  echo "frames 1"
  echo "screenshot workspace_editing Workspace"
  echo "key enter"
  echo "frames 1"
  echo "key up"                           # reject candidate 1, then undo the reject
  echo "key r"
  echo "frames 1"
  echo "key ctrl+z"
  echo "frames 1"
  echo "screenshot workspace_after_undo Workspace"
  echo "key n"                            # next row without accepting more
  echo "wait_idle 120"
  echo "key r"                            # row 3: reject, redo/undo of an accept
  echo "key down"
  echo "key a"
  echo "key ctrl+z"
  echo "key ctrl+y"
  echo "key n"
  echo "wait_idle 120"
  echo "key a"                            # row 4: accept then undo -> nothing kept
  echo "key ctrl+z"
  echo "key n"
  echo "wait_idle 120"
  for i in $(seq 5 19); do                # rows 5..19: accept-and-next
    echo "key shift+enter"
    echo "wait_idle 120"
  done
  echo "key 2"                            # row 20: accept candidate 2
  echo "key a"
  echo "wait_idle"
  echo "key ctrl+shift+e"
  echo "frames 1"
  echo "type $export_file"
  echo "key enter"
  echo "wait_idle"
  echo "expect_export $export_file"
  echo "screenshot export Export"
  echo "key ctrl+f"
  echo "type 天気"
  echo "wait_idle"
  echo "frames 3"
  echo "screenshot history History"
  echo "frames 60"
  echo "screenshot monitor Monitor"
  echo "key f1"
  echo "frames 2"
  echo "screenshot help Keys (F1)"
  echo "key f1"
  echo "frames 2"
  echo "screenshot window"
  echo "train_history 4 $out/trained"     # Training panel: the session's accepted pairs as data
  echo "wait_idle 300"
  echo "show_past_runs"
  echo "expect_training_run 4"
  echo "frames 3"
  echo "screenshot training Training"
  echo "frames 120"                       # idle frames
  echo "fill_history 20000"
  echo "wait_idle 300"
  echo "export_all $out/export_all.jsonl"
  echo "wait_idle 300"
  echo "log done"
} > "$script"

xvfb-run -a -s "-screen 0 1600x1000x24" \
  "$app" --model "$model" --history "$out/history.db" --config-dir "$out/config" \
         --test-script "$script" --screenshot-dir "$out/screenshots" --size 1600x1000 "${extra[@]}"
test -s "$out/screenshots/workspace_row1.png"
test -s "$out/export_all.jsonl"
test -s "$out/trained/final/model.safetensors"
test -s "$out/trained/history-pairs.jsonl"
echo "ui_e2e: ok ($(ls "$out/screenshots" | wc -l) screenshots in $out/screenshots)"
