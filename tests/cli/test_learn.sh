#!/usr/bin/env bash
# `t5studio learn` contract: a history's decisions (generate --history, history --accept/
# --edit/--reject) train v1; exit codes 0 adopted / 6 waiting / 5 rejected; --list, --restore; a
# generation made with v1's adapter names adapter_version 1 in the history.
# Usage: test_learn.sh T5STUDIO TEST_DATA_DIR WORK_DIR
set -u
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$@"
h="$work/history.sqlite"; dir="$work/learning"

texts=()
for i in $(seq 1 24); do texts+=(--text "item number $i"); done
"$bin" generate --model "$model" --max-new-tokens 3 --threads 1 --history "$h" "${texts[@]}" --json >/dev/null && ok || bad "generate --history"
"$bin" history --history "$h" --limit 100 --json >"$work/list.json" && ok || bad "history --json"
decisions=()
for g in $(json "$work/list.json" "' '.join(str(g['id']) for g in d['generations'])"); do
  if [ $((g % 4)) -eq 0 ]; then decisions+=(--accept "$g:0"); else decisions+=(--edit "$g:0=the same answer for all of them"); fi
done
"$bin" history --history "$h" "${decisions[@]}" >/dev/null && ok || bad "history --accept/--edit"

"$bin" learn --model "$model" --history "$h" --adapter-dir "$dir" --every 100 --json >"$work/wait.json"; rc=$?
[ $rc -eq 6 ] && [ "$(json "$work/wait.json" "d['status']")" = waiting ] && ok || bad "--every 100 with 24 pairs: exit $rc, $(cat "$work/wait.json")"

"$bin" learn --model "$model" --history "$h" --adapter-dir "$dir" --max-steps 12 --lr 0.02 --threads 1 --json >"$work/r1.json" 2>"$work/r1.err"; rc=$?
[ $rc -eq 0 ] && [ "$(json "$work/r1.json" "d['status'] == 'adopted' and d['version'] == 1 and d['loss_after'] < d['loss_before']")" = True ] \
  && ok || bad "round 1: exit $rc, $(cat "$work/r1.json") $(tail -2 "$work/r1.err")"
[ -f "$dir/v0001/adapter_model.safetensors" ] && [ -f "$dir/v0001/manifest.json" ] && ok || bad "v0001 folder"
# The manifest keeps the round's curve (loss per step) and settings; a new adapter is LoRA on every linear layer.
[ "$(json "$dir/v0001/manifest.json" "len(d['train_losses']) == d['steps'] == $(json "$work/r1.json" "d['steps']") and d['settings']['lr'] == 0.02 and d['settings']['lora_targets'] == 'all-linear'")" = True ] \
  && ok || bad "v0001 manifest curve/settings: $(head -c 600 "$dir/v0001/manifest.json")"

"$bin" learn --model "$model" --history "$h" --adapter-dir "$dir" --json >"$work/r2.json"; rc=$?
[ $rc -eq 6 ] && ok || bad "no new pairs: exit $rc (want 6)"

"$bin" learn --adapter-dir "$dir" --list --json >"$work/ls.json" && ok || bad "--list"
[ "$(json "$work/ls.json" "d['current'] == 1 and len(d['versions']) == 1 and d['versions'][0]['manifest']['pairs_new'] > 0")" = True ] && ok || bad "--list: $(cat "$work/ls.json")"
"$bin" learn --adapter-dir "$dir" --restore 0 >/dev/null && ok || bad "--restore 0"
[ "$(python3 -c "import json; print(json.load(open('$dir/current.json'))['version'])")" = 0 ] && ok || bad "current.json after --restore 0"
"$bin" learn --adapter-dir "$dir" --restore 3 >/dev/null 2>"$work/err"; rc=$?
[ $rc -eq 1 ] && grep -q "no adapter version 3" "$work/err" && ok || bad "--restore 3: exit $rc $(cat "$work/err")"
"$bin" learn --adapter-dir "$dir" --restore 1 >/dev/null && ok || bad "--restore 1"

"$bin" generate --model "$model" --adapter "$dir/v0001" --max-new-tokens 3 --threads 1 --history "$h" --text "item number 99" --json >/dev/null && ok || bad "generate --adapter v0001"
"$bin" history --history "$h" --limit 1 --json >"$work/last.json" && ok || bad "history last"
[ "$(json "$work/last.json" "d['generations'][0]['adapter_version']")" = 1 ] && ok || bad "adapter_version in the history: $(cat "$work/last.json")"

# A new adapter's shape from the flags: rank and targets land in its PEFT config.
"$bin" learn --model "$model" --history "$h" --adapter-dir "$work/qv" --max-steps 2 --lr 0.02 --lora-r 2 --lora-targets q,v --epochs 1 \
  --threads 1 --json >"$work/qv.json" 2>/dev/null; rc=$?
[ $rc -eq 0 ] || [ $rc -eq 5 ] && ok || bad "--lora-r/--lora-targets round: exit $rc $(cat "$work/qv.json")"
m="$work/qv/v0001/manifest.json"; [ -f "$m" ] || m="$work/qv/rejected/r1.json"  # adopted or not, the manifest says
[ "$(json "$m" "d['steps'] == 2 and d['settings']['lora_r'] == 2 and d['settings']['lora_targets'] == ['q', 'v']")" = True ] \
  && ok || bad "--lora-r 2 --lora-targets q,v --max-steps 2: $(head -c 600 "$m")"
"$bin" learn --model "$model" --history "$h" --adapter-dir "$work/qv" --epochs 0 >/dev/null 2>"$work/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--epochs" "$work/err" && ok || bad "--epochs 0: exit $rc $(cat "$work/err")"

finish "learn CLI"
