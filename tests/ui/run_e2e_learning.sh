#!/usr/bin/env bash
# End-to-end test of the learning loop in the desktop app under Xvfb: the bundled demo
# model, rows reviewed one by one in the workspace with candidates accepted and edited; with
# "learn from my decisions" on, the 6th decision starts a round by itself (generation goes on
# meanwhile), then two more rounds through "learn now"; the Learning window lists the versions
# with their held-out losses and training curves, "use this one" goes back to the base and
# forward to the newest. The annotator has a house style the rounds can learn: most edits append
# the same mark to the candidate (a round is adopted only when held-out decisions get likelier, and
# the model's own candidates accepted as they are carry almost no signal: such rounds were adopted
# or rejected by a hair, 7.10 -> 7.09 or 7.11).
# Screenshots: learn_workspace (the switch and the status line), learn_versions (the Learning
# window), learn_base (the base back in use), learn_window (the whole app). Then the app is opened
# again with the same settings: the model comes up with the version the loop was using.
# usage: run_e2e_learning.sh APP UI_TEST_DIR MODEL_DIR OUT_DIR
set -euo pipefail
app=$1; src=$2; model=$3; out=$4
rm -rf "$out"; mkdir -p "$out/config" "$out/screenshots" "$out/data"
rows="$src/rows20.txt"
script="$out/learning.script"

accept_next() {  # accept candidate 1 of the current row, next row (generates)
  for _ in $(seq "$1"); do echo "key shift+enter"; echo "wait_idle 120"; done
}
mark="（確認済み）"
edit_next() {  # candidate 1 edited in the house style (the mark appended), next row (generates)
  for _ in $(seq "$1"); do echo "decide edit 1 +$mark"; echo "key n"; echo "wait_idle 120"; done
}

{
  echo "frames 3"
  echo "wait_model 300"
  # beam search: the same candidates every run, so the rounds (seeded) train on the same pairs
  echo 'option {"do_sample": false, "num_beams": 4, "num_return_sequences": 4, "max_new_tokens": 32}'
  echo "learn_settings 6 30"              # a round every 6 accepted/edited candidates, 30 steps at most
  echo "learn_switch on"
  echo "key ctrl+b"
  echo "type $rows"
  echo "key enter"
  echo "wait_idle"
  echo "key ctrl+r"                       # review the rows: row 1 generates
  echo "wait_idle 120"
  echo "expect_candidates 2"
  accept_next 1                           # row 1 accepted
  edit_next 3                             # rows 2-4 edited
  echo "decide accept 2"                  # row 5: candidate 2
  echo "key n"
  echo "wait_idle 120"
  echo "decide edit 1 +$mark"             # row 6: an edited candidate, the 6th pair: a round starts
  echo "key n"                            # generation goes on while it trains
  echo "wait_idle 120"
  echo "wait_learn 600"
  echo "learn_switch off"
  edit_next 4                             # rows 7-10
  echo "decide edit 2 編集した言い換えです。$mark"
  echo "key n"
  echo "wait_idle 120"
  echo "learn_now"                        # round 2
  echo "wait_learn 600"
  accept_next 1                           # row 12
  edit_next 4                             # rows 13-16
  echo "learn_now"                        # round 3
  echo "wait_learn 600"
  echo "learn_switch on"
  echo "expect_versions 1 -2"             # at least one adopted version, the newest in use
  echo "frames 3"
  echo "screenshot learn_workspace Workspace"
  echo "open_learning"
  echo "frames 3"
  echo "screenshot learn_versions Learning"
  echo "use_version 0"                    # "use this one" on the base row
  echo "expect_versions 1 0"
  echo "frames 3"
  echo "screenshot learn_base Learning"
  echo "use_version latest"
  echo "expect_versions 1 -2"
  echo "key n"                            # a generation with the newest version
  echo "wait_idle 120"
  echo "frames 3"
  echo "screenshot learn_window"
  echo "log done"
} > "$script"

XDG_DATA_HOME="$out/data" xvfb-run -a -s "-screen 0 1600x1000x24" \
  "$app" --model "$model" --history "$out/history.db" --config-dir "$out/config" \
         --test-script "$script" --screenshot-dir "$out/screenshots" --size 1600x1000
for shot in learn_versions learn_workspace learn_base learn_window; do
  test -s "$out/screenshots/$shot.png"
done
ls "$out"/data/t5studio/learning/*/v0001/manifest.json
grep -q '"learn"' "$out/config/settings.json" || { echo "settings.json has no learn settings"; exit 1; }

# The app again, same settings and data: the switch is on, so the model opens with the version in use.
printf 'frames 3\nwait_model 300\nexpect_versions 1 -2\nlog done\n' > "$out/reopen.script"
XDG_DATA_HOME="$out/data" xvfb-run -a -s "-screen 0 1600x1000x24" \
  "$app" --model "$model" --history "$out/history.db" --config-dir "$out/config" \
         --test-script "$out/reopen.script" --screenshot-dir "$out/screenshots" --size 1600x1000 | tee "$out/reopen.log"
grep -Eq "v[0-9]+ in use, active adapter '.*/v[0-9]{4}'" "$out/reopen.log" || { echo "reopened without the learned version"; exit 1; }
echo "ui_e2e_learning: ok ($(ls "$out/screenshots" | wc -l) screenshots in $out/screenshots)"
