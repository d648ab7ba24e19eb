#!/usr/bin/env bash
# End-to-end test of recipes in the desktop app under Xvfb, on the bundled demo model (an English <->
# Chinese translator): the shipped en-zh-en back-translation recipe picked in the workspace, a
# generation through it with every candidate showing the route "pivot > back" (its last leg's text is
# the candidate's); one accepted with Shift+Enter and exported as any candidate; the editor refusing an unknown
# setting in one line naming it, fixed as typed, saved as a file and run again from that file.
# Then a rows file through the Batch panel with a recipe (the workspace's picker, shown in the panel):
# every row's candidate with its route, and the history's batch candidates with theirs.
# Screenshots: recipe_routes, recipe_editor (Workspace), recipe_batch (Batch augmentation).
# usage: run_e2e_recipes.sh APP UI_TEST_DIR DEMO_MODEL_DIR OUT_DIR
set -euo pipefail
app=$1; model=$3; out=$4
rm -rf "$out"; mkdir -p "$out/config" "$out/screenshots"
script="$out/recipes.script"
one_step='{"steps": [{"name": "pivot", "prefix": "translate English to Chinese: ", "max_new_tokens": 24},\n {"name": "back", "from": "pivot", "prefix": "translate Chinese to English: ", "max_new_tokens": 24}],\n "candidates": ["back"]}'
# One output per step, whatever the panel's per-row count (it is the default of steps that set none).
batch_recipe='{"steps": [{"name": "pivot", "prefix": "translate English to Chinese: ", "max_new_tokens": 24, "num_return_sequences": 1, "num_beams": 1},\n {"name": "back", "from": "pivot", "prefix": "translate Chinese to English: ", "max_new_tokens": 24, "num_return_sequences": 1, "num_beams": 1}],\n "candidates": ["back"]}'
printf '%s\n' "I like green tea." "The weather is nice today." "She reads a book in the library." >"$out/rows.txt"

{
  echo "frames 3"
  echo "wait_model 300"
  echo "recipe demo-back-translation-zh.json"
  echo "key f2"
  echo "frames 2"
  echo "type I like green tea."
  echo "key ctrl+enter"
  echo "wait_idle 300"
  echo "expect_candidates 1"
  echo "expect_routes pivot > back"
  echo "frames 3"
  echo "screenshot recipe_routes Workspace"
  echo "key shift+enter"                  # accept the first candidate as ever: it is exported with its source
  echo "wait_idle"
  echo "key ctrl+shift+e"
  echo "frames 1"
  echo "type $out/export.jsonl"
  echo "key enter"
  echo "wait_idle"
  echo "expect_export $out/export.jsonl"
  echo 'recipe_text {"steps": [{"name": "pivot", "num_bemas": 2}], "candidates": ["pivot"]}'
  echo "expect_recipe_error num_bemas"
  echo "recipe_text $one_step"
  echo "save_recipe $out/mine.json"
  echo "recipe none"
  echo "recipe $out/mine.json"
  echo "frames 3"
  echo "screenshot recipe_editor Workspace"
  echo "key ctrl+enter"
  echo "wait_idle 300"
  echo "expect_routes pivot > back"
  echo "recipe_text $batch_recipe"
  echo "key ctrl+b"
  echo "type $out/rows.txt"
  echo "key enter"
  echo "wait_idle"
  echo "run_batch"
  echo "wait_idle 300"
  echo "expect_batch_routes pivot > back"
  echo "frames 3"
  echo "screenshot recipe_batch Batch augmentation"
  echo "log done"
} > "$script"

xvfb-run -a -s "-screen 0 1600x1000x24" \
  "$app" --model "$model" --history "$out/history.db" --config-dir "$out/config" \
         --test-script "$script" --screenshot-dir "$out/screenshots" --size 1600x1000
for shot in recipe_routes recipe_editor recipe_batch; do
  test -s "$out/screenshots/$shot.png"
done
test -s "$out/mine.json"
test "$(wc -l < "$out/export.jsonl")" -eq 1  # the one accepted candidate
# The batch's rows are in the history, every candidate with its route.
python3 - "$out/history.db" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT g.origin, c.text, c.route FROM generations g JOIN candidates c ON c.generation_id = g.id "
                  "WHERE g.origin LIKE 'batch:%'").fetchall()
assert rows, "no batch candidates in the history"
for origin, text, route in rows:
    legs = json.loads(route)
    assert [leg["step"] for leg in legs] == ["pivot", "back"] and legs[-1]["text"] == text, (origin, text, route)
print(f"history: {len(rows)} batch candidates with their routes")
PY
echo "ui_e2e_recipes: ok"
