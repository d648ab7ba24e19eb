#!/usr/bin/env bash
# Runs never mix, outputs say what they are. `train --out DIR` refuses a folder that holds another
# run (exit 2, naming the folder, --resume and --overwrite) and leaves it untouched; --resume refuses
# a different run (naming the field and both values) and never reports a stale "final_loss": 0;
# --overwrite clears the old run's files, not the user's. `generate --output` takes its format from
# the file's extension, refuses an existing file without --force (as export does) and writes atomically.
# Usage: test_cli_runs.sh T5STUDIO TEST_DATA_DIR WORK_DIR
set -u
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$@"

# The hash of every file under a folder: "nothing was replaced" is this value unchanged.
tree_hash() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1); }

# --- train: two runs, one folder -----------------------------------------------------------------
for i in $(seq 1 12); do printf '{"source": "the cat number %d is here", "target": "here is cat %d"}\n' "$i" "$i"; done >"$work/a.jsonl"
cp "$work/a.jsonl" "$work/b.jsonl"
train=("$bin" train --model "$model" --batch-size 2 --threads 1 --eval-split 0 --save-every 2)
run="$work/run"
"${train[@]}" --data "$work/a.jsonl" --out "$run" --steps 4 --source-prefix "paraphrase: " >"$work/first.json" 2>"$work/first.err" \
  && ok || bad "first train run: $(tail -2 "$work/first.err")"
[ -d "$run/checkpoint-4" ] && [ -d "$run/checkpoint-2" ] && [ -d "$run/final" ] && ok || bad "first run: $(ls "$run")"
before=$(tree_hash "$run")

# A second run without --resume / --overwrite: refused, nothing touched.
expect_code "second run into a run's folder" 2 "$run.*--resume.*--overwrite" \
  "${train[@]}" --data "$work/a.jsonl" --out "$run" --steps 2 --source-prefix "summarize: "
[ "$(tree_hash "$run")" = "$before" ] && ok || bad "the refused run changed $run"
# --data-history would rewrite OUT/history-pairs.jsonl: also refused before anything is written.
expect_code "second run with --data-history" 2 "already holds a training run" \
  "${train[@]}" --data-history "$work/none.db" --out "$run" --steps 2
[ "$(tree_hash "$run")" = "$before" ] && ok || bad "the refused --data-history run changed $run"

# --resume against a different run: refused, naming the field and both values.
expect_code "--resume with another prefix" 2 "source-prefix was 'paraphrase: ', now 'summarize: '" \
  "${train[@]}" --data "$work/a.jsonl" --out "$run" --steps 6 --source-prefix "summarize: " --resume
expect_code "--resume with another data file" 2 "--data was '[^']*/a.jsonl', now '[^']*/b.jsonl'" \
  "${train[@]}" --data "$work/b.jsonl" --out "$run" --steps 6 --source-prefix "paraphrase: " --resume
expect_code "--resume with another max-source-len" 2 "--max-source-len was 128, now 64" \
  "${train[@]}" --data "$work/a.jsonl" --out "$run" --steps 6 --source-prefix "paraphrase: " --max-source-len 64 --resume
[ "$(tree_hash "$run")" = "$before" ] && ok || bad "a refused --resume changed $run"
expect_code "--resume and --overwrite" 2 "--resume or --overwrite" \
  "${train[@]}" --data "$work/a.jsonl" --out "$run" --steps 6 --resume --overwrite

# --resume of the same run that has no step left: the loss it ended with, never 0.
"${train[@]}" --data "$work/a.jsonl" --out "$run" --steps 4 --source-prefix "paraphrase: " --resume >"$work/again.json" 2>"$work/again.err" \
  && ok || bad "--resume of a finished run: $(tail -2 "$work/again.err")"
py "$work/first.json" "$work/again.json" "$run/checkpoint-4/trainer_state.json" <<'PY' && ok || bad "--resume final_loss: $(cat "$work/again.json")"
import json, sys
first, again, state = (json.load(open(p)) for p in sys.argv[1:4])
assert again["steps"] == 4 and again["final_loss"] > 0, again
close = lambda a, b: abs(a - b) <= 1e-5 * abs(b)  # the CLI prints 6 significant digits
assert close(again["final_loss"], state["last_loss"]) and again["final_loss"] == first["final_loss"], (first, again, state)
assert state["run"]["source_prefix"] == "paraphrase: " and state["run"]["data_file"].endswith("/a.jsonl"), state["run"]
PY

# --overwrite: the old run's files go, the user's stay; the new run starts clean.
echo "my notes" >"$run/notes.txt"
"${train[@]}" --data "$work/b.jsonl" --out "$run" --steps 2 --source-prefix "summarize: " --overwrite >/dev/null 2>"$work/over.err" \
  && ok || bad "--overwrite: $(tail -2 "$work/over.err")"
[ ! -e "$run/checkpoint-4" ] && [ -d "$run/checkpoint-2" ] && [ -d "$run/final" ] && ok || bad "--overwrite left: $(ls -a "$run")"
[ "$(cat "$run/notes.txt")" = "my notes" ] && ok || bad "--overwrite removed the user's file"
[ "$(json "$run/checkpoint-2/trainer_state.json" "d['run']['source_prefix']")" = "summarize: " ] && ok || bad "--overwrite: checkpoint-2 is not the new run's"
[ "$(wc -l <"$run/train_log.jsonl")" = 2 ] && ok || bad "--overwrite: train_log.jsonl holds $(wc -l <"$run/train_log.jsonl") lines, want the new run's 2"
# A folder that holds no run is never cleared; an empty one is fine.
mkdir -p "$work/home" && echo "keep" >"$work/home/thesis.tex"
expect_code "--overwrite on a folder that is not a run's" 2 "home is not empty and holds no training run" \
  "${train[@]}" --data "$work/a.jsonl" --out "$work/home" --steps 2 --overwrite
[ "$(cat "$work/home/thesis.tex")" = keep ] && [ "$(ls "$work/home")" = thesis.tex ] && ok || bad "--overwrite touched a folder that is not a run's"
mkdir -p "$work/empty"
"${train[@]}" --data "$work/a.jsonl" --out "$work/empty" --steps 2 --overwrite >/dev/null 2>"$work/empty.err" && ok || bad "--overwrite on an empty folder: $(tail -2 "$work/empty.err")"
"$bin" train --help | grep -qE -- "^ +--overwrite +[a-z]" && ok || bad "train --help lacks --overwrite"
# A run still writing its folder: neither --overwrite nor --resume touches it.
"${train[@]}" --data "$work/a.jsonl" --out "$work/live" --steps 100000 --save-every 1 >/dev/null 2>&1 &
live=$!
deadline=$((SECONDS + 60))
until [ -s "$work/live/train_log.jsonl" ] || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
[ -s "$work/live/train_log.jsonl" ] && ok || bad "the live run logged no step in 60 s"
expect_code "--overwrite of a folder a run is writing" 2 "live: another training run is writing to it right now" \
  "${train[@]}" --data "$work/a.jsonl" --out "$work/live" --steps 2 --overwrite
expect_code "--resume of a folder a run is writing" 2 "another training run is writing to it right now" \
  "${train[@]}" --data "$work/a.jsonl" --out "$work/live" --steps 2 --resume
kill -0 $live 2>/dev/null && ok || bad "the live run died while others were refused"
kill -9 $live; wait $live 2>/dev/null
"${train[@]}" --data "$work/a.jsonl" --out "$work/live" --steps 100001 --save-every 1 --max-time 0.5 --resume >/dev/null 2>"$work/live.err" \
  && ok || bad "--resume after the writer died: $(tail -2 "$work/live.err")"

# --- generate --output: the name says the format; an existing file is kept --------------------------
printf '%s\n' '{"text": "Tom is a good boy.", "label": "a"}' '{"text": "我们走吧。", "label": "b"}' >"$work/in.jsonl"
gen=("$bin" generate --model "$model" --input "$work/in.jsonl" --max-new-tokens 4 --threads 1)
"${gen[@]}" --output "$work/o.tsv" >"$work/o.json" 2>"$work/o.err" && ok || bad "generate --output o.tsv: $(cat "$work/o.err")"
[ "$(head -1 "$work/o.tsv")" = "$(printf 'text\tlabel\tspans\tsource')" ] && ok || bad "--output o.tsv is not TSV: $(head -c 200 "$work/o.tsv")"
[ "$(json "$work/o.json" "d['format']")" = tsv ] && ok || bad "--output o.tsv summary: $(cat "$work/o.json")"
tsv_before=$(sha256sum <"$work/o.tsv")
expect_code "--output onto an existing file" 1 "o.tsv already exists.*--force" "${gen[@]}" --output "$work/o.tsv"
[ "$(sha256sum <"$work/o.tsv")" = "$tsv_before" ] && ok || bad "a refused --output changed the file"
"${gen[@]}" --output "$work/o.tsv" --force --max-new-tokens 2 >/dev/null 2>"$work/force.err" && ok || bad "--output --force: $(cat "$work/force.err")"
[ "$(head -1 "$work/o.tsv")" = "$(printf 'text\tlabel\tspans\tsource')" ] && [ "$(sha256sum <"$work/o.tsv")" != "$tsv_before" ] && ok || bad "--force did not replace o.tsv"
"${gen[@]}" --output "$work/o.csv" >/dev/null 2>&1 && [ "$(head -1 "$work/o.csv" | tr -d '\r')" = "text,label,spans,source" ] && ok || bad "--output o.csv is not CSV"
"${gen[@]}" --output "$work/o.jsonl" >/dev/null 2>&1 && py "$work/o.jsonl" <<'PY' && ok || bad "--output o.jsonl is not JSONL: $(head -c 200 "$work/o.jsonl")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 2 and {r["label"] for r in rows} == {"a", "b"}, rows
PY
"${gen[@]}" --output "$work/o.out" --output-format csv >/dev/null 2>&1 && [ "$(head -1 "$work/o.out" | tr -d '\r')" = "text,label,spans,source" ] \
  && ok || bad "--output o.out --output-format csv is not CSV"
expect_code "--output name and --output-format disagree" 2 "o2.tsv.*tsv.*--output-format csv" "${gen[@]}" --output "$work/o2.tsv" --output-format csv
[ ! -e "$work/o2.tsv" ] && ok || bad "a refused --output left a file"
"$bin" generate --help | grep -qE -- "^ +--force +[a-z]" && ok || bad "generate --help lacks --force"

finish cli_runs
