#!/usr/bin/env bash
# `generate --recipe`: with greedy settings a two-step back-translation recipe gives exactly what
# running its two legs by hand gives (`generate --prefix ... --json`, the first run's outputs fed to
# the second), for --text and for an --input file in several batches; every candidate carries its
# route; a seeded sampling recipe gives the same output twice; protected spans survive both legs;
# candidates pooled from two steps; sharded and resumed runs (greedy and seeded sampling) give the
# whole run's rows; routes and the recipe kept in the history and its JSONL/CSV/TSV exports; bad
# recipes refused in one line. Uses the demo model
# (assets/demo-model: an English <-> Chinese translator and paraphraser).
# Usage: test_cli_recipes.sh T5STUDIO TEST_DATA_DIR WORK_DIR
set -u
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$@"
demo="$data/../../assets/demo-model"
recipes="$(dirname "${BASH_SOURCE[0]}")/../../assets/recipes"
bt="$recipes/demo-back-translation-zh.json"
to_zh="translate English to Chinese: "
to_en="translate Chinese to English: "
common=(--model "$demo" --max-new-tokens 24)

# The texts of the first candidate of each result of a --json document, one per line.
first_texts() { python3 -c "import json,sys; [print(r['candidates'][0]['text']) for r in json.load(open(sys.argv[1]))['results']]" "$1"; }

# --- --text: the recipe equals the two legs by hand --------------------------------------------
texts=("I like green tea." "The weather is nice today." "She reads a book in the library.")
targs=(); for t in "${texts[@]}"; do targs+=(--text "$t"); done
"$bin" generate "${common[@]}" --prefix "$to_zh" --json "${targs[@]}" >"$work/leg1.json" && ok || bad "leg 1 by hand failed"
pargs=(); while IFS= read -r p; do pargs+=(--text "$p"); done < <(first_texts "$work/leg1.json")
"$bin" generate "${common[@]}" --prefix "$to_en" --json "${pargs[@]}" >"$work/leg2.json" && ok || bad "leg 2 by hand failed"
"$bin" generate "${common[@]}" --recipe "$bt" --json "${targs[@]}" >"$work/recipe.json" && ok || bad "generate --recipe --text failed"
py "$work/leg1.json" "$work/leg2.json" "$work/recipe.json" <<'PY' && ok || bad "--text: the recipe differs from the legs by hand"
import json, sys
leg1, leg2, rec = (json.load(open(p))["results"] for p in sys.argv[1:4])
assert len(rec) == len(leg1) == len(leg2) == 3
for a, b, r in zip(leg1, leg2, rec):
    assert len(r["candidates"]) == 1, r
    c = r["candidates"][0]
    assert c["text"] == b["candidates"][0]["text"] and c["ids"] == b["candidates"][0]["ids"], (c, b)
    assert c["route"] == [{"step": "pivot", "text": a["candidates"][0]["text"]}, {"step": "back", "text": c["text"]}], c["route"]
    assert r["input"] == a["input"]
    assert c["change"] is not None and c["back_score"] is not None  # judged against the source
PY

# --- --input in batches of 2: the recipe equals the legs by hand, line for line ----------------
printf '%s\n' "I like green tea." "The weather is nice today." "She reads a book in the library." \
  "We will meet tomorrow." "My brother plays football." >"$work/in.txt"
"$bin" generate "${common[@]}" --prefix "$to_zh" --input "$work/in.txt" --batch-size 2 >"$work/leg1.jsonl" && ok || bad "file leg 1 failed"
python3 -c "
import json, sys
for line in open(sys.argv[1]):
    print(json.dumps({'text': json.loads(line)['candidates'][0]['text']}, ensure_ascii=False))" "$work/leg1.jsonl" >"$work/pivot.jsonl"
"$bin" generate "${common[@]}" --prefix "$to_en" --input "$work/pivot.jsonl" --batch-size 2 >"$work/leg2.jsonl" && ok || bad "file leg 2 failed"
"$bin" generate "${common[@]}" --recipe "$bt" --input "$work/in.txt" --batch-size 2 >"$work/recipe.jsonl" && ok || bad "generate --recipe --input failed"
py "$work/leg1.jsonl" "$work/leg2.jsonl" "$work/recipe.jsonl" <<'PY' && ok || bad "--input: the recipe differs from the legs by hand"
import json, sys
leg1, leg2, rec = ([json.loads(l) for l in open(p)] for p in sys.argv[1:4])
assert len(rec) == len(leg1) == len(leg2) == 5, (len(rec), len(leg1), len(leg2))
for i, (a, b, r) in enumerate(zip(leg1, leg2, rec)):
    assert r["index"] == i and r["total_rows"] == 5
    c = r["candidates"][0]
    assert c["text"] == b["candidates"][0]["text"] and c["ids"] == b["candidates"][0]["ids"], (i, c, b)
    assert [leg["step"] for leg in c["route"]] == ["pivot", "back"]
    assert c["route"][0]["text"] == a["candidates"][0]["text"], (c["route"], a)
PY

# --- seeded sampling: the same output twice, and fan-out ----------------------------------------
cat >"$work/sampled.json" <<EOF
{"steps": [{"name": "pivot", "prefix": "$to_zh", "do_sample": true, "top_k": 20, "num_return_sequences": 2},
           {"name": "back", "from": "pivot", "prefix": "$to_en", "do_sample": true, "top_k": 20, "num_return_sequences": 2}],
 "candidates": ["back"]}
EOF
for n in 1 2; do
  "$bin" generate "${common[@]}" --recipe "$work/sampled.json" --seed 11 --json --keep-dropped "${targs[@]}" >"$work/sampled$n.json" \
    && ok || bad "sampling recipe run $n failed"
  "$bin" generate "${common[@]}" --recipe "$work/sampled.json" --seed 11 --input "$work/in.txt" --batch-size 2 >"$work/sampled$n.jsonl" \
    && ok || bad "sampling recipe --input run $n failed"
done
cmp -s "$work/sampled1.json" "$work/sampled2.json" && ok || bad "seeded sampling recipe (--text) differs between runs"
cmp -s "$work/sampled1.jsonl" "$work/sampled2.jsonl" && ok || bad "seeded sampling recipe (--input) differs between runs"
py "$work/sampled1.json" <<'PY' && ok || bad "sampling recipe: fan-out or seed wrong: $(head -c 600 "$work/sampled1.json")"
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    assert r["seed"] == 11, r.get("seed")
    routes = [c["route"] for c in r["candidates"]] + [d["route"] for d in r["dropped"] if "route" in d]
    assert 1 <= len(r["candidates"]) <= 4, r  # 2 pivots x 2 backs, every one that passes
    assert all([leg["step"] for leg in route] == ["pivot", "back"] for route in routes), routes
    assert len({route[0]["text"] for route in routes}) <= 2
PY

# --- protected spans survive both legs ----------------------------------------------------------
"$bin" generate "${common[@]}" --recipe "$bt" --protect numbers --json --keep-dropped \
  --text "I bought 12 apples for 5 dollars." --text "The meeting is at 3 pm on Friday." >"$work/spans.json" && ok || bad "recipe --protect failed"
py "$work/spans.json" <<'PY' && ok || bad "recipe --protect: spans not kept: $(head -c 800 "$work/spans.json")"
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    src = r["input"]
    want = sorted(src[s:e] for s, e, _ in r["spans"])
    assert want, r
    kept = r["candidates"]
    assert kept or all(d["reason"] == "lost_span" for d in r["dropped"]), r
    for c in kept:
        assert sorted(c["text"][s:e] for s, e, _ in c["spans"]) == want, c
        for leg in c["route"]:  # the pivot carried every span, and the candidate got them back
            for piece in want:
                assert leg["text"].count(piece) == src.count(piece), (leg, piece)
PY

# --- pooled: a paraphrase step and a back-translation, judged together -------------------------
"$bin" generate "${common[@]}" --recipe "$recipes/demo-paraphrase-and-back-translation.json" --json "${targs[@]}" \
  >"$work/pooled.json" && ok || bad "pooled recipe failed"
py "$work/pooled.json" <<'PY' && ok || bad "pooled recipe: $(head -c 800 "$work/pooled.json")"
import json, sys
steps = set()
for r in json.load(open(sys.argv[1]))["results"]:
    for c in r["candidates"]:
        steps.add(c["route"][-1]["step"])
        assert c["change"] is not None
assert steps <= {"paraphrase", "back"} and steps, steps
PY

# --- a step on a model of its own (a second copy loaded once) gives what the loaded model gives --
demo_abs="$(cd "$demo" && pwd)"
cat >"$work/own-model.json" <<EOF
{"steps": [{"name": "pivot", "prefix": "$to_zh"},
           {"name": "back", "from": "pivot", "model": "$demo_abs", "prefix": "$to_en"}],
 "candidates": ["back"]}
EOF
"$bin" generate "${common[@]}" --recipe "$work/own-model.json" --json "${targs[@]}" >"$work/own-model-out.json" \
  && ok || bad "recipe with a step model failed"
py "$work/recipe.json" "$work/own-model-out.json" <<'PY' && ok || bad "a step on its own model differs from the loaded model"
import json, sys
a, b = (json.load(open(p))["results"] for p in sys.argv[1:3])
assert [[c["text"] for c in r["candidates"]] for r in a] == [[c["text"] for c in r["candidates"]] for r in b]
assert [[c["route"] for c in r["candidates"]] for r in a] == [[c["route"] for c in r["candidates"]] for r in b]
PY

# --- shards and resume: the same rows as one whole run ------------------------------------------
# Rows of JSONL files merged and ordered by "index" must equal the whole run's, line for line.
same_rows() {
  python3 - "$@" <<'PY'
import json, sys
whole = [json.loads(l) for l in open(sys.argv[1])]
parts = sorted((json.loads(l) for p in sys.argv[2:] for l in open(p)), key=lambda r: r["index"])
assert len(whole) == 5 and parts == whole, (len(parts), [r["index"] for r in parts])
PY
}
for run in greedy sampled; do
  if [ $run = greedy ]; then rargs=(--recipe "$bt"); whole="$work/recipe.jsonl"
  else rargs=(--recipe "$work/sampled.json" --seed 11); whole="$work/sampled1.jsonl"; fi
  rm -f "$work/$run-s0.jsonl" "$work/$run-s1.jsonl"
  for i in 0 1; do
    "$bin" generate "${common[@]}" "${rargs[@]}" --input "$work/in.txt" --batch-size 2 --shard $i/2 --out "$work/$run-s$i.jsonl" \
      >/dev/null && ok || bad "$run recipe shard $i/2 failed"
  done
  same_rows "$whole" "$work/$run-s0.jsonl" "$work/$run-s1.jsonl" && ok || bad "$run recipe: shards 0/2 + 1/2 differ from the whole run"
  # A run killed after its first batch (and halfway through writing the second): the --out file as
  # it left it; the rerun resumes there.
  { head -n 2 "$whole"; head -n 3 "$whole" | tail -n 1 | head -c 40; } >"$work/$run-resumed.jsonl"
  "$bin" generate "${common[@]}" "${rargs[@]}" --input "$work/in.txt" --batch-size 2 --out "$work/$run-resumed.jsonl" \
    >"$work/$run-resume-summary.json" && ok || bad "$run recipe resume failed"
  grep -q '"rows_resumed":2' "$work/$run-resume-summary.json" && ok || bad "$run recipe resume: $(cat "$work/$run-resume-summary.json")"
  same_rows "$whole" "$work/$run-resumed.jsonl" && ok || bad "$run recipe: the resumed run differs from the whole run"
done
# A recipe whose steps sample while the request does not: each batch gets its seed as a sampling
# `generate` would (derived from --seed and its first row), not the request's for every batch.
"$bin" generate "${common[@]}" --sample --seed 11 --input "$work/in.txt" --batch-size 2 >"$work/plain-sampled.jsonl" \
  && ok || bad "plain sampled run failed"
py "$work/plain-sampled.jsonl" "$work/sampled1.jsonl" <<'PY' && ok || bad "sampling recipe: per-batch seeds differ from generate's"
import json, sys
plain, rec = ([json.loads(l)["seed"] for l in open(p)] for p in sys.argv[1:3])
assert rec == plain and len(set(rec)) == 3 and 11 not in rec, (rec, plain)
PY
expect_code "sampling recipe shard without --seed" 2 "samples: with --shard it needs --seed" \
  "$bin" generate --model "$demo" --recipe "$work/sampled.json" --input "$work/in.txt" --batch-size 2 --shard 0/2

# --- routes in the history and its exports ------------------------------------------------------
rm -f "$work/h.sqlite"
"$bin" generate "${common[@]}" --recipe "$bt" --input "$work/in.txt" --batch-size 2 --keep-dropped --history "$work/h.sqlite" \
  >"$work/recorded.jsonl" && ok || bad "recipe run with --history failed"
"$bin" generate "${common[@]}" --prefix "$to_zh" --text "A plain one." --history "$work/h.sqlite" >/dev/null && ok || bad "plain run with --history failed"
"$bin" history --history "$work/h.sqlite" --json --limit 10 >"$work/history.json" && ok || bad "history --json failed"
for f in jsonl csv tsv; do
  "$bin" export --history "$work/h.sqlite" --format $f --out "$work/export.$f" >/dev/null 2>&1 && ok || bad "export --format $f failed"
done
py "$work/recorded.jsonl" "$work/history.json" "$work/export.jsonl" "$work/export.csv" "$work/export.tsv" "$bt" <<'PY' \
  && ok || bad "routes in the history or the exports: $(head -c 1500 "$work/history.json")"
import csv, hashlib, json, os, sys
run = [json.loads(l) for l in open(sys.argv[1])]
routes = {(r["input"], c["text"]): c["route"] for r in run for c in r["candidates"]}
gens = json.load(open(sys.argv[2]))["generations"]
assert len(gens) == 6, len(gens)
sha = hashlib.sha256(open(sys.argv[6], "rb").read()).hexdigest()
for g in gens:
    if g["input"] == "A plain one.":
        assert "recipe" not in g and all("route" not in c for c in g["candidates"]), g
        continue
    assert g["recipe"] == {"file": os.path.abspath(sys.argv[6]), "sha256": sha}, g["recipe"]
    for c in g["candidates"]:
        assert c["route"] == routes[(g["input"], c["text"])], (c, routes)
rows = [json.loads(l) for l in open(sys.argv[3])]
assert len(rows) == len(routes) + 1
for r in rows:
    assert r.get("route") == routes.get((r["source"], r["target"])), r
for path, sep in ((sys.argv[4], ","), (sys.argv[5], "\t")):
    table = list(csv.DictReader(open(path, newline=""), delimiter=sep))
    assert list(table[0].keys())[-1] == "route"
    for r in table:
        want = routes.get((r["source"], r["target"]))
        assert (json.loads(r["route"]) if r["route"] else None) == want, (path, r)
PY

# --- refusals: one line naming the file and the step --------------------------------------------
echo '{"steps": [{"name": "a", "from": "b"}, {"name": "b"}], "candidates": ["a"]}' >"$work/later.json"
expect_code "recipe forward from" 1 "recipe .*later.json: step 'a': 'from' 'b' is a later step" \
  "$bin" generate --model "$demo" --recipe "$work/later.json" --text hi
echo '{"steps": [{"name": "a", "num_beamz": 2}], "candidates": ["a"]}' >"$work/unknown.json"
expect_code "recipe unknown setting" 1 "recipe .*unknown.json: step 'a': unknown setting 'num_beamz'" \
  "$bin" generate --model "$demo" --recipe "$work/unknown.json" --text hi
echo '{"steps": [{"name": "a", "model": "no-such-model"}], "candidates": ["a"]}' >"$work/nomodel.json"
expect_code "recipe missing model" 1 "recipe .*nomodel.json: step 'a': 'model' folder .*no-such-model does not exist" \
  "$bin" generate --model "$demo" --recipe "$work/nomodel.json" --text hi
echo '{"steps": [{"name": "a"}], "candidates": ["z"]}' >"$work/cand.json"
expect_code "recipe unknown candidate" 1 "recipe .*cand.json: candidates: 'z' is no step" \
  "$bin" generate --model "$demo" --recipe "$work/cand.json" --text hi
# A step model too big for the memory free now is refused before any step model loads (exit 4, as
# running out of memory), naming the recipe and the model with its estimate. Its folder has only a
# config.json claiming a 65536-wide, 96-layer T5: loading it would fail differently.
mkdir -p "$work/huge"
echo '{"model_type": "t5", "vocab_size": 250112, "d_model": 65536, "d_kv": 1024, "d_ff": 262144, "num_layers": 96,
  "num_decoder_layers": 96, "num_heads": 64, "tie_word_embeddings": false}' >"$work/huge/config.json"
echo '{"steps": [{"name": "a", "model": "huge"}], "candidates": ["a"]}' >"$work/huge.json"
expect_code "recipe models over free memory" 4 "recipe .*huge.json: its step models need about .* GB .*huge .* GB) but only .* GB are free on cpu" \
  "$bin" generate --model "$demo" --recipe "$work/huge.json" --text hi
expect_code "recipe missing file" 1 "recipe .*none.json: no such file" "$bin" generate --model "$demo" --recipe "$work/none.json" --text hi

finish cli_recipes
