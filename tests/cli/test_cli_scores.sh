#!/usr/bin/env bash
# The quality-score part of the t5studio CLI contract: per-candidate scores and filters in
# `generate`, dropped candidates in the history, `sts`, and `export --with-scores / --dedupe near`.
# Usage: test_cli_scores.sh T5STUDIO TEST_DATA_DIR WORK_DIR
set -u
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$@"
py_field() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

# --- scores on every candidate; existing fields unchanged ---------------------------------------
"$bin" generate --model "$model" --text "Tom is a good boy." --prefix "paraphrase: " --beams 4 --num-return 3 --max-new-tokens 8 \
  --rank auto --json >"$work/scores.json" && ok || bad "generate with scores failed"
py "$work/scores.json" <<'PY' && ok || bad "score fields: $(head -c 600 "$work/scores.json")"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert set(r) >= {"input", "candidates", "diversity"} and r["input"] == "Tom is a good boy.", r.keys()
assert 0 <= r["diversity"] <= 1, r["diversity"]
bs = [c["back_score"] for c in r["candidates"]]
for c in r["candidates"]:
    assert set(c) == {"text", "ids", "score", "similarity", "back_score", "change", "fluency"}, c.keys()
    assert c["similarity"] is None and c["back_score"] <= 0 and 0 <= c["change"] <= 1 and c["fluency"] <= 0, c
assert bs == sorted(bs, reverse=True), bs  # rank auto without an embedder: back_score
assert "dropped" not in r
PY
# back_score = -(score's per-token loss) for (prefix + candidate -> source), within 1e-5.
cand=$(py "$work/scores.json" <<'PY'
import json, sys; print(json.load(open(sys.argv[1]))["results"][0]["candidates"][0]["text"])
PY
)
"$bin" score --model "$model" --source "paraphrase: $cand" --target "Tom is a good boy." --json >"$work/loss.json" && ok || bad "score failed"
py "$work/scores.json" "$work/loss.json" <<'PY' && ok || bad "back_score != -loss"
import json, sys
back = json.load(open(sys.argv[1]))["results"][0]["candidates"][0]["back_score"]
loss = json.load(open(sys.argv[2]))["loss"]
assert abs(back + loss) < 1e-5, (back, loss)
PY

# --- --no-model-scores: same candidates, back_score / similarity null, fluency and change kept -------
"$bin" generate --model "$model" --text "Tom is a good boy." --prefix "paraphrase: " --beams 4 --num-return 3 --max-new-tokens 8 \
  --no-model-scores --json >"$work/lean.json" && ok || bad "generate --no-model-scores failed"
"$bin" generate --model "$model" --text "Tom is a good boy." --prefix "paraphrase: " --beams 4 --num-return 3 --max-new-tokens 8 \
  --json >"$work/full.json" && ok || bad "generate (rank none) failed"
py "$work/lean.json" "$work/full.json" <<'PY' && ok || bad "--no-model-scores: $(head -c 600 "$work/lean.json")"
import json, sys
lean, full = (json.load(open(f))["results"][0]["candidates"] for f in sys.argv[1:3])
assert [c["ids"] for c in lean] == [c["ids"] for c in full] and len(lean) == 3
for l, f in zip(lean, full):
    assert set(l) == set(f) and l["back_score"] is None and l["similarity"] is None and f["back_score"] is not None, (l, f)
    assert l["score"] == f["score"] and l["fluency"] == f["fluency"] and l["change"] == f["change"], (l, f)
PY

# --- filters: every returned candidate satisfies them; dropped ones keep their reason -------------
# (--keep-invalid-text: the random-weight model's byte-fallback pieces rarely form characters, and
# these checks are about the score filters.)
"$bin" generate --model "$model" --text "Tom is a good boy." --text "猫が好きです。" --sample --seed 5 --num-return 4 --max-new-tokens 8 \
  --keep-invalid-text --temperature 1.3 --min-change 0.3 --max-change 0.97 --min-back-score -9 --near-duplicate 0.6 --max-rounds 3 --keep-dropped \
  --history "$work/h.db" --json >"$work/filtered.json" && ok || bad "generate with filters failed"
py "$work/filtered.json" <<'PY' && ok || bad "filters not satisfied: $(head -c 800 "$work/filtered.json")"
import json, sys
sys.path.insert(0, "")
results = json.load(open(sys.argv[1]))["results"]
dropped = 0
for r in results:
    for c in r["candidates"]:
        assert 0.3 <= c["change"] <= 0.97 and c["back_score"] >= -9, c
    for d in r["dropped"]:
        reason = d["reason"]
        assert reason.split("<")[0].split(">")[0] in ("change", "back_score", "near_duplicate"), reason
        if reason.startswith("change<"): assert d["change"] < 0.3 + 1e-9, d
        if reason.startswith("change>"): assert d["change"] > 0.97 - 1e-9, d
        if reason.startswith("back_score<"): assert d["back_score"] < -9 + 1e-9, d
    dropped += len(r["dropped"])
assert dropped > 0, "expected some candidates dropped"
PY
py "$work/h.db" "$work/filtered.json" <<'PY' && ok || bad "dropped candidates not in the history"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
want = sorted((d["text"], d["reason"]) for r in json.load(open(sys.argv[2]))["results"] for d in r["dropped"])
got = sorted(db.execute("SELECT text, reason FROM dropped_candidates").fetchall())
assert got == want, (got, want)
assert db.execute("SELECT count(*) FROM candidates WHERE back_score IS NULL OR change IS NULL").fetchone()[0] == 0
settings = json.loads(db.execute("SELECT settings_json FROM generations LIMIT 1").fetchone()[0])
assert settings["min_change"] == 0.3 and settings["near_duplicate"] == 0.6 and settings["min_similarity"] is None, settings
PY

# --- bad settings: one line naming the field --------------------------------------------------------
expect_code "min-change out of range" 1 "min_change must be in \[0, 1\]" "$bin" generate --model "$model" --text hi --min-change 1.5
expect_code "min-back-score positive" 1 "min_back_score must be a finite log-probability <= 0" "$bin" generate --model "$model" --text hi --min-back-score 2
expect_code "near-duplicate 0" 1 "near_duplicate must be in \(0, 1\]" "$bin" generate --model "$model" --text hi --near-duplicate 0
expect_code "unknown rank" 1 "unknown rank 'length' \(expected auto, similarity, back_score, fluency or none\)" "$bin" generate --model "$model" --text hi --rank length
expect_code "similarity without embedder" 1 "min_similarity/max_similarity need an embedder" "$bin" generate --model "$model" --text hi --min-similarity 0.8
expect_code "min-change not a number" 2 "min-change" "$bin" generate --model "$model" --text hi --min-change abc

# --- sts: the chrF baseline equals sacrebleu + scipy; back_score runs on the same pairs ---------------
pairs="$data/sts/jsts-valid-48.jsonl"
"$bin" sts --baseline chrf --data "$pairs" --json >"$work/sts_chrf.json" && ok || bad "sts --baseline chrf failed"
py "$work/sts_chrf.json" "$data/goldens/sts_chrf.json" <<'PY' && ok || bad "sts chrf differs from scipy: $(cat "$work/sts_chrf.json")"
import json, sys
got, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert got["pairs"] == want["pairs"] == 48 and got["scorer"] == "chrf", got
assert abs(got["spearman"] - want["spearman"]) < 1e-9 and abs(got["pearson"] - want["pearson"]) < 1e-9, (got, want)
PY
"$bin" sts --model "$model" --prefix "paraphrase: " --data "$pairs" --limit 16 --json >"$work/sts_back.json" && ok || bad "sts --model failed"
py "$work/sts_back.json" <<'PY' && ok || bad "sts --model output: $(cat "$work/sts_back.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["scorer"] == "back_score" and d["pairs"] == 16 and -1 <= d["spearman"] <= 1 and -1 <= d["pearson"] <= 1, d
PY
printf '{"sentence1": "a", "sentence2": "b", "label": 1}\n{"sentence1": "a", "sentence2": "b"}\n' >"$work/nolabel.jsonl"
expect_code "sts row without label" 1 "nolabel.jsonl:2: needs a numeric field \"label\"" "$bin" sts --baseline chrf --data "$work/nolabel.jsonl"
expect_code "sts two scorers" 2 "give one scorer" "$bin" sts --baseline chrf --model "$model" --data "$pairs"
expect_code "sts embedder folder without modules" 1 "$work" "$bin" sts --embedder "$work" --data "$pairs"
# sts --embedder: each pair's similarity is the cosine of the two `embed` embeddings.
embedder="$data/embedder/xlmr_mean_norm"
"$bin" sts --embedder "$embedder" --data "$pairs" --limit 8 --scores "$work/sts_sim.jsonl" --json >"$work/sts_sim.json" && ok || bad "sts --embedder failed"
first_pair=$(head -1 "$work/sts_sim.jsonl")
s1=$(py_field "$first_pair" sentence1); s2=$(py_field "$first_pair" sentence2)
"$bin" embed --embedder "$embedder" --text "$s1" --text "$s2" --json >"$work/sts_embed.json" && ok || bad "embed of the first pair failed"
py "$work/sts_sim.json" "$work/sts_sim.jsonl" "$work/sts_embed.json" <<'PY' && ok || bad "sts --embedder output: $(cat "$work/sts_sim.json")"
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["scorer"] == "similarity" and d["pairs"] == 8 and -1 <= d["spearman"] <= 1, d
first = json.loads(open(sys.argv[2]).readline())
a, b = json.load(open(sys.argv[3]))["embeddings"]
cos = sum(x * y for x, y in zip(a, b)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))
assert abs(first["similarity"] - cos) < 1e-5, (first, cos)
PY
# generate --embedder: every candidate has a similarity, and --min-similarity holds for all returned.
"$bin" generate --model "$model" --embedder "$embedder" --text "the cat sat on the mat" --sample --seed 3 --num-return 4 \
    --min-similarity 0.5 --keep-dropped --json >"$work/gen_sim.json" && ok || bad "generate --embedder failed"
py "$work/gen_sim.json" <<'PY' && ok || bad "generate --embedder scores: $(cat "$work/gen_sim.json")"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert all(isinstance(c["similarity"], float) and c["similarity"] >= 0.5 for c in r["candidates"]), r
assert all(d["reason"].startswith("similarity<") for d in r["dropped"] if d["similarity"] is not None and d["similarity"] < 0.5), r
PY

# --- export: score columns, filters on them, near dedupe ---------------------------------------------
"$bin" export --history "$work/h.db" --format csv --out "$work/scores.csv" --with-scores 2>/dev/null && ok || bad "export --with-scores failed"
head -1 "$work/scores.csv" | grep -q "created_at,similarity,back_score,change,fluency" && ok || bad "export score columns: $(head -1 "$work/scores.csv")"
"$bin" export --history "$work/h.db" --format jsonl --out "$work/changed.jsonl" --with-scores --min-change 0.5 2>/dev/null && ok || bad "export --min-change failed"
py "$work/changed.jsonl" <<'PY' && ok || bad "export --min-change rows"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert all(r["change"] >= 0.5 for r in rows), rows
PY
"$bin" export --history "$work/h.db" --format jsonl --out "$work/near.jsonl" --dedupe near --near-threshold 0.5 --json >"$work/near.json" 2>/dev/null \
  && ok || bad "export --dedupe near failed"
"$bin" export --history "$work/h.db" --format jsonl --out "$work/exact.jsonl" --dedupe --json >"$work/exact.json" 2>/dev/null && ok || bad "bare --dedupe failed"
py "$work/near.json" "$work/exact.json" <<'PY' && ok || bad "near dedupe summary: $(cat "$work/near.json")"
import json, sys
near, exact = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert "near_duplicates_skipped" in near and near["rows_written"] + near["near_duplicates_skipped"] == exact["rows_written"] + exact["duplicates_skipped"], (near, exact)
PY
expect_code "near threshold out of range" 2 "--near-threshold must be in \(0, 1\] \(got 1.5\)" \
  "$bin" export --history "$work/h.db" --format jsonl --out "$work/x.jsonl" --dedupe near --near-threshold 1.5
expect_code "history --limit out of range" 2 "--limit must be in \[1, 10000\] \(got 0\)" "$bin" history --history "$work/h.db" --limit 0
expect_code "dedupe mode" 2 "--dedupe must be exact or near, got 'fuzzy'" "$bin" export --history "$work/h.db" --format jsonl --out "$work/x.jsonl" --dedupe fuzzy

finish "cli_scores"
