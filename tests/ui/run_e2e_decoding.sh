#!/usr/bin/env bash
# End-to-end test of Paste settings and Advanced decoding in the desktop app under Xvfb, on the tiny
# test model: the humarin paraphraser card's generate() recipe pasted over a sampling workspace
# becomes its settings (5 beams in 5 groups, diversity 3.0, max_length 128 as 127 new tokens, beam
# search) with input_ids listed as not applied, and a generation runs with them; a multi-line JSON
# object with a bookkeeping and an unknown key; a list field typed into the Advanced decoding
# section, refused while it is not valid JSON and applied once it is. Screenshots: paste_settings,
# advanced_decoding (Workspace).
# usage: run_e2e_decoding.sh APP MODEL_DIR OUT_DIR
set -euo pipefail
app=$1; model=$2; out=$3
rm -rf "$out"; mkdir -p "$out/config" "$out/screenshots"
script="$out/decoding.script"
recipe='model.generate(input_ids, num_beams=5, num_beam_groups=5, diversity_penalty=3.0, repetition_penalty=10.0, no_repeat_ngram_size=2, max_length=128)'

{
  echo "frames 3"
  echo "wait_model 300"
  # A sampling workspace; the random-weight model's byte pieces often form no character: keep those candidates.
  echo 'option {"drop_invalid_text": false, "do_sample": true, "temperature": 0.8}'
  echo "paste_settings $recipe"
  echo 'expect_settings {"num_beams": 5, "num_beam_groups": 5, "diversity_penalty": 3.0, "repetition_penalty": 10.0, "no_repeat_ngram_size": 2, "max_new_tokens": 127, "do_sample": false, "temperature": 0.8}'
  echo "expect_not_applied input_ids"
  echo "frames 3"
  echo "screenshot paste_settings Workspace"
  echo "key f2"
  echo "frames 2"
  echo "type The quick brown fox jumps over the lazy dog."
  echo "key ctrl+enter"
  echo "wait_idle 120"
  echo "expect_candidates 1"
  echo 'paste_settings {"num_beams": 4, "num_beam_groups": 2,\n  "transformers_version": "4.55.4", "frobnicate": 1}'
  echo 'expect_settings {"num_beams": 4, "num_beam_groups": 2, "diversity_penalty": 3.0, "max_new_tokens": 127}'
  echo "expect_not_applied transformers_version frobnicate"
  echo "field_text suppress_tokens [5, x"
  echo "expect_field_error suppress_tokens"
  echo 'expect_settings {"suppress_tokens": []}'
  echo "field_text suppress_tokens [5, 6]"
  echo 'expect_settings {"suppress_tokens": [5, 6]}'
  echo "frames 3"
  echo "screenshot advanced_decoding Workspace"
  echo "key ctrl+enter"
  echo "wait_idle 120"
  echo "expect_candidates 1"
  echo "log done"
} > "$script"

xvfb-run -a -s "-screen 0 1600x1000x24" \
  "$app" --model "$model" --history "$out/history.db" --config-dir "$out/config" \
         --test-script "$script" --screenshot-dir "$out/screenshots" --size 1600x1000
for shot in paste_settings advanced_decoding; do
  test -s "$out/screenshots/$shot.png"
done
echo "ui_e2e_decoding: ok"
