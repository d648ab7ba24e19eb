#!/usr/bin/env bash
# One rule, one answer, one document: an empty text is refused by --text as by a file row, with the
# same words; the exit codes the docs state (docs/cli.md, docs/model-store.md) and the README's quick
# start are the program's; `t5studio --help` lists the desktop app's own flags; every subcommand
# takes --json, and train's and merge's say what they did.
# Usage: test_cli_consistency.sh T5STUDIO TEST_DATA_DIR WORK_DIR
set -u
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
readme="$root/README.md"
cli_doc="$root/docs/cli.md"          # the guide to the command line: the general exit-code rule
store_doc="$root/docs/model-store.md"  # pull's exit-code table
bin_abs="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"  # the quick start runs from the repository root

# --- an empty text: refused everywhere, in the same words ----------------------------------------
# `--text ""` used to generate from nothing (exit 0) while a file row with "" was a bad row.
expect_code "--text ''" 1 "^t5studio generate: --text: empty text$" "$bin" generate --model "$model" --text ""
expect_code "--text of blanks" 1 "^t5studio generate: --text: empty text$" "$bin" generate --model "$model" --text $' \t '
expect_code "an empty --text after a good one" 1 "--text: empty text$" "$bin" generate --model "$model" --text "hello" --text ""
printf '{"text": "hello"}\n{"text": ""}\n' >"$work/empty.jsonl"
expect_code "a file row with an empty text" 1 "empty.jsonl:2: empty text$" "$bin" generate --model "$model" --input "$work/empty.jsonl"

# --- the documented exit codes are the program's ---------------------------------------------------
# The pull table's row that names "not a repository id" gives the code `pull a/b/c` exits with.
stated=$(grep -E '^\| [0-9]+ \|.*not a repository id' "$store_doc" | head -1 | cut -d'|' -f2 | tr -d ' ')
"$bin" pull a/b/c >/dev/null 2>"$work/err"; rc=$?
[ -n "$stated" ] && [ "$rc" = "$stated" ] && ok || bad "pull a/b/c exits $rc, docs/model-store.md's table says '${stated:-nothing}'"
grep -q "not a repository id" "$work/err" && ok || bad "pull a/b/c: $(cat "$work/err")"
# The general rule docs/cli.md states: 2 usage, 1 bad input/file.
grep -q "exit code (2 usage, 1 bad input/file" "$cli_doc" && ok || bad "docs/cli.md lost its exit-code rule"
expect_code "an unknown flag is a usage error" 2 "unknown|not a flag|--no-such" "$bin" info --no-such-flag

# --- --help lists the desktop app's own flags ------------------------------------------------------
"$bin" --help >"$work/help" 2>&1
# The app's flag table (app/desktop/desktop_flags.cpp: one {"name", "VALUE", "help"} row a flag) and
# the footer of --help (app/main.cpp) are written apart: each flag of the table must be in the footer.
spec="$root/app/desktop/desktop_flags.cpp"
app_flags=$(sed -nE 's/^ *\{"([a-z-]+)", "[A-Za-z]*", ".*/--\1/p' "$spec")
[ "$(echo "$app_flags" | wc -w)" -ge 5 ] && ok || bad "found no flag table in $spec: '$app_flags'"
for f in $app_flags; do grep -qE -- "$f( |$)" "$work/help" && ok || bad "t5studio --help lacks the app's $f"; done

# --- --json on every subcommand -------------------------------------------------------------------
subs=$(sed -n '/^Subcommands:/,/^$/p' "$work/help" | awk 'NF {print $1}' | grep -vE '^(Subcommands:|help|version)$')
[ "$(echo "$subs" | wc -l)" -ge 14 ] && ok || bad "listed subcommands: $subs"
for s in $subs; do "$bin" "$s" --help 2>&1 | grep -qE -- "^ +--json( |$)" && ok || bad "$s --help lacks --json"; done

# merge --json: the result names the part files too (the line without --json is unchanged).
printf '{"index": 0, "total_rows": 2}\n' >"$work/p0.jsonl"; printf '{"index": 1, "total_rows": 2}\n' >"$work/p1.jsonl"
"$bin" merge --out "$work/m.jsonl" "$work/p0.jsonl" "$work/p1.jsonl" >"$work/plain.json" 2>"$work/err" && ok || bad "merge: $(cat "$work/err")"
[ "$(json "$work/plain.json" 'sorted(d)')" = "['out', 'parts', 'rows']" ] && ok || bad "merge without --json: $(cat "$work/plain.json")"
rm -f "$work/m.jsonl"
"$bin" merge --json --out "$work/m.jsonl" "$work/p0.jsonl" "$work/p1.jsonl" >"$work/merge.json" 2>"$work/err" && ok || bad "merge --json: $(cat "$work/err")"
[ "$(json "$work/merge.json" 'd["rows"], len(d["part_files"]), d["out"].endswith("m.jsonl")')" = "2 2 True" ] && ok \
  || bad "merge --json: $(cat "$work/merge.json")"

# train --json: every stdout line is JSON, progress events then one "done" with the run's files.
for i in $(seq 1 8); do printf '{"source": "the cat number %d is here", "target": "here is cat %d"}\n' "$i" "$i"; done >"$work/pairs.jsonl"
"$bin" train --json --model "$model" --data "$work/pairs.jsonl" --out "$work/run" --steps 2 --save-every 1 --batch-size 2 \
  --threads 1 --eval-split 0 >"$work/train.out" 2>"$work/train.err" && ok || bad "train --json: $(tail -2 "$work/train.err")"
py "$work/train.out" "$work/run" >"$work/train.check" <<'EOF'
import json, os, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
done = lines[-1]
print(all(l.get("event") for l in lines), [l["event"] for l in lines].count("step") >= 1, done["event"] == "done",
      done["steps"] == 2, os.path.samefile(done["out"], sys.argv[2]), os.path.isdir(done["final_model"]),
      len(done["checkpoints"]) >= 1 and all(os.path.isdir(c) for c in done["checkpoints"]), "final_loss" in done)
EOF
[ "$(cat "$work/train.check")" = "True True True True True True True True" ] && ok || bad "train --json: $(cat "$work/train.check") $(cat "$work/train.out")"
grep -q "^step 2/2" "$work/train.err" && ok || bad "train --json: the text progress left stderr: $(head -3 "$work/train.err")"

# --- README's quick start works offline on the demo model, before any `pull` -----------------------
quick=$(sed -n '/^## Quick start/,/^```$/p' "$readme" | grep -E '^build/app/t5studio generate ')
[ -n "$quick" ] && ok || bad "README has no quick start block"
quick_line=$(grep -n '^## Quick start' "$readme" | head -1 | cut -d: -f1)
pull_line=$(grep -n 't5studio pull ' "$readme" | head -1 | cut -d: -f1)
[ -n "$quick_line" ] && [ -n "$pull_line" ] && [ "$quick_line" -lt "$pull_line" ] && ok || bad "the quick start ($quick_line) is not before pull ($pull_line)"
n=0
while IFS= read -r line; do
  [ -z "$line" ] && continue
  n=$((n + 1))
  cmd="${line%%#*}"  # the command without its comment
  (cd "$root" && export HF_HUB_OFFLINE=1 && eval "\"$bin_abs\" ${cmd#build/app/t5studio }") >"$work/quick$n.out" 2>"$work/quick$n.err" \
    && [ -s "$work/quick$n.out" ] && ok || bad "quick start: $line: $(tail -2 "$work/quick$n.err")"
done <<<"$quick"
[ $n -ge 1 ] && ok || bad "no quick-start command ran"

finish cli_consistency
