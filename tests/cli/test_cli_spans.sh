#!/usr/bin/env bash
# The protected-spans part of the t5studio CLI contract: `generate --protect` and
# `--protect-regex`, --input JSONL rows with "spans" / "entities" (code points) and "label", every
# candidate's "spans" (code points into its own text, checked with Python's str slicing) and
# "forced_spans", spans kept in the history, one-line errors.
# Usage: test_cli_spans.sh T5STUDIO TEST_DATA_DIR WORK_DIR
set -u
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$@"

# --- --text with detectors and a regex: beam and sampling --------------------------------------
for mode in "--beams 3 --num-return 2" "--sample --num-return 3 --seed 5 --top-k 20"; do
  # shellcheck disable=SC2086
  # --keep-invalid-text: the random-weight model's byte-fallback pieces rarely form characters; this is about spans.
  "$bin" generate --model "$model" --text "Send 3 kg to {customer_name} by Friday, ref AB-77" --protect numbers,placeholders \
    --protect-regex 'AB-[0-9]+' --max-new-tokens 10 $mode --json --keep-dropped --keep-invalid-text >"$work/text.json" && ok || bad "generate --protect ($mode) failed"
  py "$work/text.json" <<'PY' && ok || bad "--protect ($mode): $(head -c 800 "$work/text.json")"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
src = r["input"]
want = sorted((src[s:e], label) for s, e, label in r["spans"])
assert want == sorted([("3 kg", "number"), ("{customer_name}", "placeholder"), ("AB-77", "regex")]), want
assert r["candidates"], r
for c in r["candidates"]:
    got = sorted((c["text"][s:e], label) for s, e, label in c["spans"])
    assert got == want, (c["text"], c["spans"])
    for piece, _ in want:
        assert c["text"].count(piece) == src.count(piece), (c["text"], piece)
    assert isinstance(c["forced_spans"], int) and 0 <= c["forced_spans"] <= 3, c
assert all(d["reason"] != "lost_span" for d in r.get("dropped", [])), r["dropped"]
PY
done

# Without --protect nothing changes: no "spans" keys.
"$bin" generate --model "$model" --text "Send 3 kg" --max-new-tokens 4 --json >"$work/plain.json" && ok || bad "plain generate failed"
py "$work/plain.json" <<'PY' && ok || bad "plain output gained span fields: $(head -c 400 "$work/plain.json")"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert "spans" not in r and all("spans" not in c and "forced_spans" not in c for c in r["candidates"]), r
PY

# --- --input JSONL: explicit spans (CJK, emoji, combining characters), "entities", labels -------
py "$work/rows.jsonl" <<'PY'
import json, sys
rows = [
    {"text": "我在北京住了3年", "spans": [[2, 4, "LOC"]], "label": "travel"},
    {"text": "Zu\u0308rich ❤️ 🍕 at 7 pm", "entities": [[0, 7, "CITY"], [11, 12, "FOOD"]], "label": 3},
    {"text": "no spans here", "label": "none"},
]
with open(sys.argv[1], "w") as f:
    for r in rows:
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
PY
"$bin" generate --model "$model" --input "$work/rows.jsonl" --protect numbers --max-new-tokens 8 --beams 2 --num-return 2 \
  --history "$work/h.db" >"$work/rows.out" && ok || bad "generate --input with spans failed"
py "$work/rows.jsonl" "$work/rows.out" <<'PY' && ok || bad "--input spans: $(head -c 1200 "$work/rows.out")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
out = [json.loads(l) for l in open(sys.argv[2])]
assert len(out) == 3 and [o["label"] for o in out] == [r["label"] for r in rows], out
for row, o in zip(rows, out):
    src = row["text"]
    given = row.get("spans") or row.get("entities") or []
    want = sorted((src[s:e], l) for s, e, l in o.get("spans", []))
    for s, e, l in given:
        assert (src[s:e], l) in want, (want, given)
    if not want:
        assert "spans" not in o
        continue
    assert len(o["candidates"]) == 2, o
    for c in o["candidates"]:
        assert sorted((c["text"][s:e], l) for s, e, l in c["spans"]) == want, (c, want)
assert sorted(("我在北京住了3年"[s:e], l) for s, e, l in out[0]["spans"]) == [("3", "number"), ("北京", "LOC")]
assert sorted((rows[1]["text"][s:e], l) for s, e, l in out[1]["spans"]) == [("7", "number"), ("Zu\u0308rich", "CITY"), ("🍕", "FOOD")]
PY
# The history keeps them (in the settings JSON: no schema change).
sqlite3 "$work/h.db" "select settings_json from generations order by id limit 1" >"$work/settings.json" 2>/dev/null \
  || python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select settings_json from generations order by id limit 1").fetchone()[0])' "$work/h.db" >"$work/settings.json"
py "$work/settings.json" <<'PY' && ok || bad "history spans: $(head -c 600 "$work/settings.json")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["protect"] == "numbers", s
assert sorted(x[2] for x in s["spans"]["input"]) == ["LOC", "number"], s["spans"]
assert len(s["spans"]["candidates"]) == 2 and all(len(c) == 2 for c in s["spans"]["candidates"]), s["spans"]
PY

# export --format jsonl carries them: the source's spans and each accepted candidate's at its own offsets.
"$bin" history --history "$work/h.db" --accept 1:0 --accept 2:1 >/dev/null && ok || bad "history --accept failed"
"$bin" export --history "$work/h.db" --format jsonl --out "$work/export.jsonl" --accepted-only >/dev/null 2>"$work/export.err" && ok || bad "export failed"
py "$work/export.jsonl" <<'PY' && ok || bad "export spans: $(head -c 800 "$work/export.jsonl")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 2, rows
for r in rows:
    src = sorted((r["source"][s:e], l) for s, e, l in r["source_spans"])
    assert sorted((r["target"][s:e], l) for s, e, l in r["target_spans"]) == src, r
PY

# --- errors: one line naming the field ------------------------------------------------------------
expect_code "unknown detector" 1 "protect: unknown detector 'dates'" "$bin" generate --model "$model" --text hi --protect dates
expect_code "bad regex" 1 "protect_regex" "$bin" generate --model "$model" --text hi --protect-regex "(unclosed"
printf '{"text": "abc", "spans": [[1, 9, "X"]]}\n' >"$work/bad.jsonl"
expect_code "span past the end" 1 "bad.jsonl:1: \"spans\": span \[1, 9\] is not inside the text \(3 code points\)" "$bin" generate --model "$model" --input "$work/bad.jsonl"
printf '{"text": "abcdef", "spans": [[0, 3, "X"], [2, 5, "Y"]]}\n' >"$work/overlap.jsonl"
expect_code "overlapping spans" 1 "overlap.jsonl:1: \"spans\": two spans overlap at code point 2" "$bin" generate --model "$model" --input "$work/overlap.jsonl"
printf '{"text": "abc", "spans": [["a", 2, "X"]]}\n' >"$work/type.jsonl"
expect_code "span offsets not integers" 1 "type.jsonl:1: \"spans\": span offsets must be integers" "$bin" generate --model "$model" --input "$work/type.jsonl"

finish "cli_spans"
