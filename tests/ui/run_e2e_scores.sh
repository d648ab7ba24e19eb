#!/usr/bin/env bash
# End-to-end test of the quality scores in the desktop app under Xvfb: an embedding model loaded in
# the Model panel, a generation whose candidates carry similarity / back_score / change / fluency,
# the sort control reordering them, a threshold slider moved during the session (the bars recolour
# at once, the next generation filters by it), a batch with kept / dropped counts by reason, the
# History panel's dropped candidates, and screenshots of each.
# usage: run_e2e_scores.sh APP UI_TEST_DIR MODEL_DIR OUT_DIR
set -euo pipefail
app=$1; src=$2; model=$3; out=$4
rm -rf "$out"; mkdir -p "$out/config" "$out/screenshots"
embedder="$src/../data/embedder/xlmr_mean_norm"
rows="$out/rows5.txt"
head -n 5 "$src/rows20.txt" > "$rows"
script="$out/scores.script"

cat > "$script" <<SCRIPT
frames 3
wait_model 300
load_embedder $embedder
wait_embedder 120
# beam search: deterministic candidates, one round, so the checks below see fixed numbers
option {"do_sample": false, "num_beams": 4, "num_return_sequences": 4, "max_new_tokens": 12, "rank": "none", "no_copy": false, "distinct": false}
key f2
frames 2
type 今日はとても良い天気なので、公園まで歩きます。
frames 1
key ctrl+enter
wait_idle 120
expect_candidates 4
expect_scores
expect_order
sort back_score
expect_order
sort fluency
expect_order
sort auto
expect_order
sort similarity
expect_order
screenshot scores_sorted Workspace
# move the min similarity slider between the shown values: the bars recolour this frame
split_threshold min_similarity
frames 2
expect_window
screenshot scores_threshold Workspace
# the next generation runs with it (rank similarity too)
key ctrl+enter
wait_idle 120
expect_filtered
expect_order
screenshot scores_filtered Workspace
key ctrl+b
type $rows
key enter
wait_idle
run_batch
wait_idle 300
expect_batch_counts
screenshot batch_counts Batch augmentation
history_dropped
frames 3
screenshot history_dropped History
sort similarity
frames 2
screenshot window
log done
SCRIPT

xvfb-run -a -s "-screen 0 1600x1000x24" \
  "$app" --model "$model" --history "$out/history.db" --config-dir "$out/config" \
         --test-script "$script" --screenshot-dir "$out/screenshots" --size 1600x1000
for shot in scores_sorted scores_threshold scores_filtered batch_counts history_dropped window; do
  test -s "$out/screenshots/$shot.png"
done
echo "ui_e2e_scores: ok ($(ls "$out/screenshots" | wc -l) screenshots in $out/screenshots)"
