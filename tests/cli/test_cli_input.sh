#!/usr/bin/env bash
# The one input reader in the CLI contract (and 27): the same file is accepted or refused
# the same way by generate --input, train --data and sts --data (one-line "file:line: reason",
# exit 1; --skip-bad-rows / --on-bad-row skip go on), labelled rows in every format (JSONL, CSV, TSV,
# Label Studio) come out of `generate --output` in their own format with each candidate's spans at
# their offsets (checked with Python's code-point slicing) and the row's label, the history keeps the
# label for `export` (--with-labels, --format labelstudio).
# Usage: test_cli_input.sh T5STUDIO TEST_DATA_DIR WORK_DIR
set -u
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$@"

# --- one file, three front ends, one answer ---------------------------------------------------------
printf '%s\n' '{"text": "a cat", "target": "a kitten", "sentence1": "a cat", "sentence2": "a kitten", "label": 4.5}' \
  '' '{"text": "broken' '{"text": "two dogs", "target": "2 dogs", "sentence1": "two dogs", "sentence2": "2 dogs", "label": 5}' \
  '{"text": "a car", "target": "an auto", "sentence1": "a car", "sentence2": "a plane", "label": 1.5}' >"$work/same.jsonl"
want="same.jsonl:3: malformed JSON line"
expect_code "generate --input refuses the bad row" 1 "$want" "$bin" generate --model "$model" --input "$work/same.jsonl" --max-new-tokens 4
expect_code "train --on-bad-row fail refuses it the same way" 1 "$want" "$bin" train --model "$model" --data "$work/same.jsonl" \
  --out "$work/run" --steps 1 --on-bad-row fail
expect_code "sts refuses it the same way" 1 "$want" "$bin" sts --baseline chrf --data "$work/same.jsonl"
"$bin" generate --model "$model" --input "$work/same.jsonl" --max-new-tokens 4 --skip-bad-rows >"$work/skip.out" 2>"$work/skip.err" \
  && ok || bad "generate --skip-bad-rows failed: $(cat "$work/skip.err")"
[ "$(wc -l <"$work/skip.out")" = 3 ] && ok || bad "generate --skip-bad-rows: want 3 rows, got $(wc -l <"$work/skip.out")"
grep -q "skipped bad row .*$want" "$work/skip.err" && ok || bad "generate --skip-bad-rows does not name the row: $(cat "$work/skip.err")"
"$bin" sts --baseline chrf --data "$work/same.jsonl" --skip-bad-rows --json >"$work/sts.json" 2>"$work/sts.err" && ok || bad "sts --skip-bad-rows failed"
[ "$(json "$work/sts.json" 'd["pairs"]')" = 3 ] && ok || bad "sts --skip-bad-rows: want 3 pairs"
grep -q "$want" "$work/sts.err" && ok || bad "sts --skip-bad-rows does not name the row"
# The same rows as CSV are read the same way (the header names the columns; a stray quote is bad).
printf 'text,target,sentence1,sentence2,label\r\na cat,a kitten,a cat,a kitten,4.5\r\n"bro"ken,x,x,x,1\r\n' >"$work/same.csv"
want="same.csv:3: stray quote"
expect_code "generate: CSV stray quote" 1 "$want" "$bin" generate --model "$model" --input "$work/same.csv"
expect_code "train: CSV stray quote" 1 "$want" "$bin" train --model "$model" --data "$work/same.csv" --out "$work/run2" --steps 1 --on-bad-row fail
expect_code "sts: CSV stray quote" 1 "$want" "$bin" sts --baseline chrf --data "$work/same.csv"
expect_code "--output-format without --output" 2 "--output-format goes with --output" "$bin" generate --model "$model" --input "$work/same.jsonl" --output-format csv

# --- labelled rows in, labelled rows out, in each format ---------------------------------------------
py "$work" <<'PY'
import csv, json, sys
w = sys.argv[1]
rows = [("我在北京住了3年", [[2, 4, "LOC"]], "travel"),
        ("Zu\u0308rich ❤️ 🍕 at 7 pm, said \"Ann\"", [[0, 7, "CITY"], [11, 12, "FOOD"], [28, 31, "PER"]], "food"),
        ("no spans\there", [], "none")]
with open(f"{w}/rows.jsonl", "w") as f:
    for t, s, l in rows:
        f.write(json.dumps({"text": t, "spans": s, "label": l}, ensure_ascii=False) + "\n")
for name, sep in (("rows.csv", ","), ("rows.tsv", "\t")):
    with open(f"{w}/{name}", "w", newline="") as f:
        out = csv.writer(f, delimiter=sep, lineterminator="\r\n" if sep == "," else "\n")
        out.writerow(["text", "label", "spans"])
        for t, s, l in rows:
            out.writerow([t, l, json.dumps(s, ensure_ascii=False) if s else ""])
tasks = []
for t, s, l in rows:
    result = [{"from_name": "ner", "to_name": "text", "type": "labels",
               "value": {"start": a, "end": b, "text": t[a:b], "labels": [lab]}} for a, b, lab in s]
    result.append({"from_name": "c", "to_name": "text", "type": "choices", "value": {"choices": [l]}})
    tasks.append({"data": {"text": t}, "annotations": [{"result": result}]})
json.dump(tasks, open(f"{w}/rows.json", "w"), ensure_ascii=False)
PY
for input in rows.jsonl rows.csv rows.tsv rows.json; do
  "$bin" generate --model "$model" --input "$work/$input" --protect numbers --max-new-tokens 8 --beams 2 --num-return 2 \
    --output "$work/out-$input" --history "$work/h.db" >"$work/summary.json" 2>"$work/gen.err" && ok || bad "generate --output ($input): $(cat "$work/gen.err")"
  py "$work/rows.jsonl" "$work/out-$input" "$work/summary.json" <<'PY' && ok || bad "--output $input: $(head -c 1500 "$work/out-$input")"
import csv, json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
path = sys.argv[2]
summary = json.loads(open(sys.argv[3]).read())
if path.endswith(".jsonl"):
    out = [json.loads(l) for l in open(path)]
    got = [(o["text"], o["spans"], o["label"], o["source"]) for o in out]
elif path.endswith(".json"):
    tasks = json.load(open(path))
    got = []
    for t in tasks:
        res = t["predictions"][0]["result"]
        spans = [[r["value"]["start"], r["value"]["end"], r["value"]["labels"][0]] for r in res if r["type"] == "labels"]
        for r in res:
            if r["type"] == "labels":
                assert t["data"]["text"][r["value"]["start"]:r["value"]["end"]] == r["value"]["text"], r
        label = next(r["value"]["choices"][0] for r in res if r["type"] == "choices")
        got.append((t["data"]["text"], spans, label, t["data"]["source"]))
else:
    sep = "," if path.endswith(".csv") else "\t"
    out = list(csv.DictReader(open(path, newline=""), delimiter=sep))
    got = [(o["text"], json.loads(o["spans"]) if o["spans"] else [], o["label"], o["source"]) for o in out]
assert summary["rows"] == len(got) and summary["inputs"] == 3 and len(got) == 6, (summary, len(got))
by_source = {r["text"]: r for r in rows}
for text, spans, label, source in got:
    row = by_source[source]
    assert label == row["label"], (label, row)
    want = sorted((row["text"][a:b], l) for a, b, l in row["spans"])
    assert sorted((text[a:b], l) for a, b, l in spans) == want, (text, spans, want)
PY
done
# The history kept each row's label: export writes it (CSV columns, Label Studio choices, JSONL key).
"$bin" history --history "$work/h.db" --accept 1:0 >/dev/null && ok || bad "history --accept failed"
"$bin" export --history "$work/h.db" --format csv --with-labels --out "$work/export.csv" 2>/dev/null && ok || bad "export --with-labels failed"
"$bin" export --history "$work/h.db" --format labelstudio --out "$work/export.json" 2>/dev/null && ok || bad "export --format labelstudio failed"
"$bin" export --history "$work/h.db" --format jsonl --out "$work/export.jsonl" 2>/dev/null && ok || bad "export jsonl failed"
py "$work" <<'PY' && ok || bad "export with labels: $(head -c 1200 "$work/export.json")"
import csv, json, sys
w = sys.argv[1]
rows = list(csv.DictReader(open(f"{w}/export.csv", newline="")))
assert len(rows) == 24 and {r["label"] for r in rows} == {"travel", "food", "none"}, [r["label"] for r in rows]
for r in rows:
    if r["target_spans"]:
        src = sorted((r["source"][a:b], l) for a, b, l in json.loads(r["source_spans"]) if l != "number")
        assert sorted((r["target"][a:b], l) for a, b, l in json.loads(r["target_spans"]) if l != "number") == src, r
tasks = json.load(open(f"{w}/export.json"))
assert len(tasks) == 24 and sum("annotations" in t for t in tasks) == 1, len(tasks)
for t in tasks:
    for r in (t.get("annotations") or t["predictions"])[0]["result"]:
        if r["type"] == "labels":
            assert t["data"]["text"][r["value"]["start"]:r["value"]["end"]] == r["value"]["text"], r
assert {json.loads(l)["label"] for l in open(f"{w}/export.jsonl")} == {"travel", "food", "none"}
PY
"$bin" history --history "$work/h.db" --json >"$work/hist.json" && ok || bad "history --json failed"
[ "$(json "$work/hist.json" 'sorted({g["label"] for g in d["generations"]})')" = "['food', 'none', 'travel']" ] && ok || bad "history --json lacks the rows' labels"
expect_code "export: unknown format" 2 "jsonl, csv, tsv, labelstudio or hf-dataset" "$bin" export --history "$work/h.db" --format xml --out "$work/x"

finish "cli_input"
