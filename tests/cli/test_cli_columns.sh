#!/usr/bin/env bash
# The column rule in the CLI: the ten files of tests/data/columns (the same three rows as plain text,
# JSON lines keyed text / sentence / input / sentence1, CSV headed Text / sentence, TSV headed source /
# SRC, a TSV without a header) give generate --input the same inputs and train --data the same pairs
# (its data report); a file naming no known column is refused with the columns it has and the flag.
# serve takes texts over HTTP only (no file jobs), so it has no file to read here.
# Usage: test_cli_columns.sh T5STUDIO TEST_DATA_DIR WORK_DIR
set -u
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$@"
model="$data/../../assets/demo-model"  # the demo model: small, trained on JSTS-like rows
cols="$data/columns"
no_header() { [ "$1" = headerless.tsv ] && echo --no-header; }

# The rows as written, read without t5studio.
want="$(python3 -c 'import json, sys; [print(json.loads(l)["text"]) for l in open(sys.argv[1], encoding="utf-8")]' "$cols/text.jsonl")"
# generate's inputs, in row order.
inputs() { python3 -c 'import json, sys; [print(r["input"]) for r in sorted((json.loads(l) for l in open(sys.argv[1], encoding="utf-8")), key=lambda r: r["index"])]' "$1"; }

# The reproduction: a CSV headed `sentence` failed with "header has no text column (looked for text)".
"$bin" generate --model "$model" --input "$cols/sentence.csv" --max-new-tokens 4 >"$work/repro.out" 2>"$work/repro.err" \
  && ok || bad "generate --input sentence.csv: $(cat "$work/repro.err")"

for f in plain.txt text.jsonl sentence.jsonl input.jsonl jsts.jsonl Text.csv sentence.csv source.tsv src.tsv headerless.tsv; do
  # shellcheck disable=SC2046
  if "$bin" generate --model "$model" --input "$cols/$f" $(no_header "$f") --max-new-tokens 4 >"$work/$f.gen" 2>"$work/$f.err"; then
    [ "$(inputs "$work/$f.gen")" = "$want" ] && ok || bad "generate --input $f: inputs $(inputs "$work/$f.gen")"
  else
    bad "generate --input $f: $(cat "$work/$f.err")"
  fi
  [ "$f" = plain.txt ] && continue  # no targets: not a training file
  # shellcheck disable=SC2046
  if "$bin" train --model "$model" --data "$cols/$f" $(no_header "$f") --out "$work/run-$f" --steps 1 --batch-size 3 \
      --eval-split 0 --samples 0 >/dev/null 2>"$work/$f.train"; then
    grep -E '^(data|source tokens|target tokens):' "$work/$f.train" >"$work/$f.report"
    grep -q '^data: 3 pairs' "$work/$f.report" && ok || bad "train --data $f: $(head -c 400 "$work/$f.train")"
    [ "$f" = text.jsonl ] && continue  # the reference report the others are compared with
    cmp -s "$work/$f.report" "$work/text.jsonl.report" && ok || bad "train --data $f: another data report: $(cat "$work/$f.report")"
  else
    bad "train --data $f: $(tail -3 "$work/$f.train")"
  fi
done

# JSTS rows: sts reads them as they are (sentence1, sentence2, label).
"$bin" sts --baseline chrf --data "$cols/jsts.jsonl" --json >"$work/sts.json" 2>"$work/sts.err" && ok || bad "sts jsts.jsonl: $(cat "$work/sts.err")"
[ "$(json "$work/sts.json" 'd["pairs"]')" = 3 ] && ok || bad "sts jsts.jsonl: want 3 pairs"
# The same pairs without a header (column 3 the label), and under other names.
python3 -c 'import json, sys; [print(r["sentence1"], r["sentence2"], r["label"], sep="\t") for r in map(json.loads, open(sys.argv[1], encoding="utf-8"))]' \
  "$cols/jsts.jsonl" >"$work/jsts.tsv"
"$bin" sts --baseline chrf --data "$work/jsts.tsv" --no-header --json >"$work/sts2.json" 2>"$work/sts2.err" && ok || bad "sts --no-header: $(cat "$work/sts2.err")"
[ "$(json "$work/sts2.json" '(d["pairs"], d["spearman"])')" = "$(json "$work/sts.json" '(d["pairs"], d["spearman"])')" ] && ok \
  || bad "sts --no-header: another answer than the JSTS rows"
sed 's/"sentence1"/"a"/; s/"sentence2"/"b"/' "$cols/jsts.jsonl" >"$work/ab.jsonl"
"$bin" sts --baseline chrf --data "$work/ab.jsonl" --text-field a --target-field b --json >"$work/sts3.json" 2>"$work/sts3.err" \
  && ok || bad "sts --text-field/--target-field: $(cat "$work/sts3.err")"
[ "$(json "$work/sts3.json" 'd["spearman"]')" = "$(json "$work/sts.json" 'd["spearman"]')" ] && ok || bad "sts --text-field: another answer"

# Nothing matches: one line naming the columns the file has and the flag; the flag reads it.
printf 'question,answer\nwhere?,here\nwhen?,now\n' >"$work/qa.csv"
expect_code "generate: no text column" 1 'header has no text column \(looked for "text"/"sentence".*the header has "question"/"answer"; name one with --text-field NAME\)' \
  "$bin" generate --model "$model" --input "$work/qa.csv" --max-new-tokens 4
"$bin" generate --model "$model" --input "$work/qa.csv" --text-field Question --max-new-tokens 4 >"$work/qa.gen" 2>"$work/qa.err" \
  && ok || bad "generate --text-field Question: $(cat "$work/qa.err")"
[ "$(inputs "$work/qa.gen")" = "$(printf 'where?\nwhen?')" ] && ok || bad "generate --text-field: inputs $(inputs "$work/qa.gen")"
expect_code "train: no target column" 1 'header has no target column .*name one with --target-field NAME' \
  "$bin" train --model "$model" --data "$work/qa.csv" --text-field question --out "$work/run-qa" --steps 1
"$bin" train --model "$model" --data "$work/qa.csv" --text-field question --target-field answer --out "$work/run-qa" --steps 1 \
  --eval-split 0 --samples 0 >/dev/null 2>"$work/qa.train" && ok || bad "train --text-field/--target-field: $(tail -2 "$work/qa.train")"
expect_code "--text-field without --input" 2 "--text-field goes with --input" "$bin" generate --model "$model" --text hi --text-field x
for cmd in generate train sts; do
  "$bin" $cmd --help | grep -q -- '--no-header' && ok || bad "$cmd --help lacks --no-header"
done

finish "cli_columns"
