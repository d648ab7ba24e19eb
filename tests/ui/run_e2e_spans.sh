#!/usr/bin/env bash
# End-to-end test of protected spans in the desktop app under Xvfb, on the bundled demo
# model: the number detector switched on, a word of the source selected with shift+left and
# protected with Ctrl+P (a mark labelled LOC), a generation whose every candidate keeps every span
# (highlighted with its label tag), a second one with few new tokens so that spans have to be
# forced (the forced mark), a labelled JSONL file (spans / entities / label) through the batch
# panel with per-row span counts, and an export of the history whose rows keep their spans.
# Then "Review rows" brings row 1 into the workspace with its spans as marks and its label.
# Screenshots: spans_source, spans_candidates, spans_forced, spans_review (Workspace), spans_batch
# (Batch panel), spans_history (History: the newest generation with spans, highlighted), spans_window.
# usage: run_e2e_spans.sh APP UI_TEST_DIR MODEL_DIR OUT_DIR
set -euo pipefail
app=$1; src=$2; model=$3; out=$4
rm -rf "$out"; mkdir -p "$out/config" "$out/screenshots"
script="$out/spans.script"
export_file="$out/export.jsonl"

{
  echo "frames 3"
  echo "wait_model 300"
  # beam search: the same candidates every run
  echo 'option {"do_sample": false, "num_beams": 4, "num_return_sequences": 4, "max_new_tokens": 32, "no_copy": false, "distinct": false}'
  echo "protect numbers on"
  echo "mark_label LOC"
  echo "key f2"
  echo "frames 2"
  echo "type 鈴木さんは3月15日に東京へ行きます。"
  echo "frames 2"
  for _ in 1 2 3 4 5 6; do echo "key left"; done   # the cursor after 東京
  for _ in 1 2; do echo "key shift+left"; done     # 東京 selected
  echo "key ctrl+p"
  echo "frames 2"
  echo "expect_marks 1 LOC"
  echo "expect_source_spans 3"                     # 3, 15 (numbers) and 東京 (the mark)
  echo "screenshot spans_source Workspace"
  echo "key ctrl+enter"
  echo "wait_idle 120"
  echo "expect_candidates 2"
  echo "expect_span_candidates"
  echo "frames 3"
  echo "screenshot spans_candidates Workspace"
  # Too few new tokens for the model to write every sentinel itself: the decoder forces them.
  echo 'option {"max_new_tokens": 4}'
  echo "key ctrl+enter"
  echo "wait_idle 120"
  echo "expect_span_candidates"
  echo "expect_forced"
  echo "frames 3"
  echo "screenshot spans_forced Workspace"
  echo 'option {"max_new_tokens": 32}'
  echo "key ctrl+b"
  echo "type $src/ner_rows.jsonl"
  echo "key enter"
  echo "wait_idle"
  echo "expect_batch_labels 5"
  echo "run_batch"
  echo "wait_idle 300"
  echo "expect_batch_spans"
  echo "frames 3"
  echo "screenshot spans_batch Batch augmentation"
  echo "key ctrl+r"                                # review the rows: row 1 comes with its spans as marks
  echo "wait_idle 120"
  echo "expect_marks 2"
  echo "expect_source_spans 4"                     # 田中, 東京 (the file) and 3, 15 (numbers)
  echo "expect_span_candidates"
  echo "frames 3"
  echo "screenshot spans_review Workspace"
  echo "history_spans"
  echo "frames 3"
  echo "screenshot spans_history History"
  echo "export_all $export_file"
  echo "wait_idle"
  echo "screenshot spans_window"
  echo "log done"
} > "$script"

xvfb-run -a -s "-screen 0 1600x1000x24" \
  "$app" --model "$model" --history "$out/history.db" --config-dir "$out/config" \
         --test-script "$script" --screenshot-dir "$out/screenshots" --size 1600x1000
for shot in spans_source spans_candidates spans_forced spans_batch spans_review spans_history spans_window; do
  test -s "$out/screenshots/$shot.png"
done

# The export keeps the spans: every candidate row of a generation with spans has them, at offsets
# that hold the source span's text; the batch rows' file spans are among them.
python3 - "$export_file" "$src/ner_rows.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
labelled = {}
for l in open(sys.argv[2], encoding="utf-8"):
    r = json.loads(l)
    labelled[r["text"]] = [tuple(s) for s in r.get("spans", r.get("entities", []))]
with_spans = [r for r in rows if r.get("source_spans")]
assert with_spans, "no exported row has source_spans"
checked = 0
for r in with_spans:
    src_pieces = sorted((r["source"][s:e], lab) for s, e, lab in r["source_spans"])
    for s, e, lab in labelled.get(r["source"], []):
        assert [s, e, lab] in r["source_spans"], f"the file's span {s, e, lab} is not in {r['source_spans']}"
    if r["kind"] != "candidate" or r.get("target_spans") is None:
        continue
    tgt_pieces = sorted((r["target"][s:e], lab) for s, e, lab in r["target_spans"])
    assert src_pieces == tgt_pieces, f"{r['target']!r}: spans {tgt_pieces} != source {src_pieces}"
    checked += 1
batch_sources = {r["source"] for r in with_spans} & set(labelled)
assert len(batch_sources) >= 5, f"only {len(batch_sources)} labelled rows exported with spans"
print(f"export: {checked} candidate rows keep their spans; {len(batch_sources)} labelled rows")
PY
echo "ui_e2e_spans: ok ($(ls "$out/screenshots" | wc -l) screenshots in $out/screenshots)"
