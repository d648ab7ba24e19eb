#!/usr/bin/env bash
# End-to-end: the real app under Xvfb opens files it cannot use and says so on screen,
# staying up: a history whose page headers were overwritten, an unrelated SQLite file as history,
# a model whose weights file is truncated, and a JSONL with broken rows. Each case runs the app once
# with a test script that waits for the message (expect_error), takes a screenshot of the panel, then
# finishes normally (exit 0 = the app was still running). Damaged/foreign files must be unchanged.
# usage: run_e2e_files.sh APP MODEL_DIR OUT_DIR
set -euo pipefail
app=$1; model=$2; out=$3
rm -rf "$out"; mkdir -p "$out/screenshots"
cases=0

run_app() {  # NAME SCRIPT_LINES... -- APP_ARGS...
  local name=$1; shift
  local script="$out/$name.script"
  : > "$script"
  while [ "$1" != "--" ]; do echo "$1" >> "$script"; shift; done
  shift
  mkdir -p "$out/$name-config"
  xvfb-run -a -s "-screen 0 1400x900x24" "$app" "$@" --config-dir "$out/$name-config" --test-script "$script" \
    --screenshot-dir "$out/screenshots" --size 1400x900 > "$out/$name.log" 2>&1 ||
    { echo "ui_e2e_files: case $name failed:"; tail -20 "$out/$name.log"; exit 1; }
  grep -h "error shown" "$out/$name.log" | sed "s/^/  $name: /"
  cases=$((cases + 1))
}

# An SQLite file of several pages, then its last page's b-tree header overwritten with zeros (the
# open-time check finds this before the file is read as a history; test_history covers real ones).
damaged="$out/damaged.sqlite"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)'); c.executemany('INSERT INTO t (body) VALUES (?)', [('row %d ' % i * 20,) for i in range(300)]); c.commit()" "$damaged"
page_size=$(od -An -tu1 -j16 -N2 "$damaged" | awk '{print $1 * 256 + $2}')
pages=$(( $(stat -c %s "$damaged") / page_size ))
head -c 8 /dev/zero | dd of="$damaged" bs=1 seek=$(( (pages - 1) * page_size )) conv=notrunc status=none
cp "$damaged" "$out/damaged.copy"
run_app history_damaged "frames 3" "wait_model 300" "key ctrl+f" "expect_error is damaged" "frames 3" \
  "screenshot history_damaged History" "screenshot history_damaged_window" "log done" \
  -- --model "$model" --history "$damaged"
cmp "$damaged" "$out/damaged.copy"

# An unrelated SQLite file (another program's) chosen as the history: refused, not converted.
foreign="$out/notes.sqlite"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)'); c.execute(\"INSERT INTO notes (body) VALUES ('mine')\"); c.commit()" "$foreign"
cp "$foreign" "$out/notes.copy"
run_app history_foreign "frames 3" "wait_model 300" "key ctrl+f" "expect_error not a T5 Studio history" "frames 3" \
  "screenshot history_foreign History" "log done" \
  -- --model "$model" --history "$foreign"
cmp "$foreign" "$out/notes.copy"

# A model folder whose model.safetensors was cut in half.
trunc="$out/truncated-model"
cp -r "$model" "$trunc"
weights="$trunc/model.safetensors"
truncate -s $(( $(stat -c %s "$weights") / 2 )) "$weights"
run_app model_truncated "frames 3" "expect_error model.safetensors" "frames 3" "screenshot model_truncated Model" \
  "screenshot model_truncated_window" "log done" \
  -- --model "$trunc" --history "$out/model-case.sqlite"

# A JSONL data file with broken rows: loaded with its good rows, the bad ones named file:line.
jsonl="$out/broken.jsonl"
printf '%s\n' '{"text": "the first good row"}' '{"text": "broken' '{"text": 42}' '{"text": "the last good row"}' > "$jsonl"
run_app jsonl_broken "frames 3" "wait_model 300" "key ctrl+b" "type $jsonl" "key enter" "wait_idle" \
  "expect_error broken.jsonl:2" "frames 3" "screenshot jsonl_broken Batch augmentation" "log done" \
  -- --model "$model" --history "$out/jsonl-case.sqlite"

echo "ui_e2e_files: ok ($cases cases, app stayed up in each; screenshots in $out/screenshots)"
