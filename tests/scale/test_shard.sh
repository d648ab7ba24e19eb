#!/usr/bin/env bash
# Sharded batch augmentation end to end: 3 shards run as 3 processes with the variables a Slurm
# array sets, merged, are byte-identical to the unsharded run (greedy and seeded sampling; also
# 2 shards by --shard); a missing shard makes `merge` fail naming the rows; duplicates too; a
# shard whose output a kill cut off reruns, keeps its complete batches and finishes the rest.
# Usage: test_shard.sh T5STUDIO MODEL_DIR WORK_DIR
set -u
bin=$1 model=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }

# 11 rows (a short last batch), one blank line (not a row) and a JSONL-style row.
{
  for i in 0 1 2 3 4; do echo "Tom is a good boy number $i."; done
  echo
  echo '{"text": "猫が好きです。"}'
  echo "我们走吧。"; echo "I like green tea."; echo "It is raining today."; echo "今日は暑いです。"; echo "Let us go home."
} >"$work/in.txt"
gen=("$bin" generate --model "$model" --input "$work/in.txt" --batch-size 2 --max-new-tokens 6 --threads 1)

run_case() {  # NAME EXTRA_FLAGS...
  local name=$1; shift
  "${gen[@]}" "$@" --out "$work/$name-full.jsonl" >"$work/$name-full.summary" || { bad "$name: unsharded run failed"; return; }
  [ "$(wc -l <"$work/$name-full.jsonl")" = 11 ] && ok "$name: unsharded run wrote 11 rows" || bad "$name: unsharded row count"
  # stdout mode (no --out) prints the same lines.
  "${gen[@]}" "$@" >"$work/$name-stdout.jsonl" && cmp -s "$work/$name-stdout.jsonl" "$work/$name-full.jsonl" \
    && ok "$name: stdout and --out agree" || bad "$name: stdout differs from --out"
  local pids=()
  for i in 0 1 2; do
    SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=3 \
      "${gen[@]}" "$@" --shard-from-env --out "$work/$name-part$i.jsonl" >"$work/$name-part$i.summary" 2>"$work/$name-part$i.err" &
    pids+=($!)
  done
  local failed=0
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  [ $failed = 0 ] && ok "$name: 3 array tasks ran" || { bad "$name: an array task failed: $(cat "$work"/$name-part*.err)"; return; }
  "$bin" merge --out "$work/$name-merged.jsonl" "$work/$name-part0.jsonl" "$work/$name-part1.jsonl" "$work/$name-part2.jsonl" \
    >"$work/$name-merge.out" && ok "$name: merge of 3 shards" || bad "$name: merge failed"
  cmp -s "$work/$name-merged.jsonl" "$work/$name-full.jsonl" && ok "$name: 3 shards merged == unsharded, byte for byte" \
    || bad "$name: 3 shards merged differ from the unsharded run"
  # N = 2 through --shard I/N, parts given out of order.
  "${gen[@]}" "$@" --shard 1/2 --out "$work/$name-two1.jsonl" >/dev/null && "${gen[@]}" "$@" --shard 0/2 --out "$work/$name-two0.jsonl" >/dev/null \
    && "$bin" merge --out "$work/$name-merged2.jsonl" "$work/$name-two1.jsonl" "$work/$name-two0.jsonl" >/dev/null \
    && cmp -s "$work/$name-merged2.jsonl" "$work/$name-full.jsonl" && ok "$name: 2 shards merged == unsharded" \
    || bad "$name: 2 shards merged differ"
}
run_case greedy
run_case sampled --sample --seed 7 --num-return 2 --top-k 20
python3 - "$work/sampled-full.jsonl" <<'PY' && ok "sampled: per-batch seeds differ, rows carry index and total_rows" || bad "sampled: seeds/index fields"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["index"] for r in rows] == list(range(11)), "index"
assert all(r["total_rows"] == 11 for r in rows)
seeds = [r["seed"] for r in rows]
assert seeds[0] == seeds[1] and len(set(seeds)) == 6, seeds  # one seed per batch of 2, 6 batches
PY

# A missing shard: merge fails (exit 1), names the rows, writes nothing.
out=$("$bin" merge --out "$work/missing.jsonl" "$work/greedy-part0.jsonl" "$work/greedy-part2.jsonl" 2>&1); rc=$?
[ $rc = 1 ] && [[ "$out" == *"4 missing rows: 2-3, 8-9"* ]] && [ ! -e "$work/missing.jsonl" ] \
  && ok "missing shard: merge fails naming rows 2-3, 8-9" || bad "missing shard: rc=$rc '$out'"
out=$("$bin" merge --out "$work/dup.jsonl" "$work/greedy-part0.jsonl" "$work/greedy-part1.jsonl" "$work/greedy-part2.jsonl" "$work/greedy-part1.jsonl" 2>&1); rc=$?
[ $rc = 1 ] && [[ "$out" == *"4 duplicated rows: 2-3, 8-9"* ]] && ok "duplicated shard: merge fails naming the rows" || bad "duplicate: rc=$rc '$out'"
out=$("$bin" merge --out "$work/x.jsonl" "$work/in.txt" 2>&1); rc=$?
[ $rc = 1 ] && [[ "$out" == *"in.txt:1: not a generate --input output line"* ]] && ok "merge names a foreign file and line" || bad "foreign: rc=$rc '$out'"

# Killed shard: what SIGKILL mid-batch leaves (one complete batch, then one line of the next and a
# cut line) -> the rerun keeps the complete batch, redoes the rest, equals the uninterrupted part.
for name in greedy sampled; do
  flags=(); [ $name = sampled ] && flags=(--sample --seed 7 --num-return 2 --top-k 20)
  full=$work/$name-part1.jsonl cut=$work/$name-cut1.jsonl  # shard 1/3 owns batches 1 and 4: rows 2, 3, 8, 9
  { head -n 3 "$full"; sed -n 4p "$full" | head -c 25; } >"$cut"
  SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=3 "${gen[@]}" "${flags[@]}" --shard-from-env --out "$cut" >"$work/$name-resume.summary" \
    && cmp -s "$cut" "$full" && grep -q '"rows_resumed":2' "$work/$name-resume.summary" \
    && ok "$name: killed shard resumes (2 rows kept, 2 redone) == uninterrupted" || bad "$name: resume: $(cat "$work/$name-resume.summary")"
done
# A real SIGKILL of a running shard, then a rerun: same lines as the uninterrupted shard.
for i in $(seq 1 40); do echo "Sentence number $i is here."; done >"$work/long.txt"
long=("$bin" generate --model "$model" --input "$work/long.txt" --batch-size 2 --max-new-tokens 6 --threads 1 --shard 0/2)
"${long[@]}" --out "$work/long-ref.jsonl" >/dev/null
"${long[@]}" --out "$work/long-killed.jsonl" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 200); do [ -s "$work/long-killed.jsonl" ] && break; sleep 0.05; done
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
"${long[@]}" --out "$work/long-killed.jsonl" >"$work/long.summary" && cmp -s "$work/long-killed.jsonl" "$work/long-ref.jsonl" \
  && ok "SIGKILLed shard reruns to the same output ($(cat "$work/long.summary"))" || bad "SIGKILLed shard rerun differs"

# Bad shard settings: one line, usage exit code.
expect_usage() {  # WHAT PATTERN CMD...
  local what=$1 pat=$2; shift 2
  local out; out=$("$@" 2>&1 >/dev/null); local rc=$?
  [ $rc = 2 ] && [[ "$out" == *"$pat"* ]] && ok "$what" || bad "$what: rc=$rc '$out'"
}
expect_usage "--shard 3/3 refused" "I must be below N" "${gen[@]}" --shard 3/3
expect_usage "--shard without --input refused" "need --input" "$bin" generate --model "$model" --text hi --shard 0/2
expect_usage "sampling shards need --seed" "needs --seed" "${gen[@]}" --shard 0/2 --sample
expect_usage "Indexed Job needs --shards" "needs --shards N" env JOB_COMPLETION_INDEX=1 "${gen[@]}" --shard-from-env
expect_usage "no array variables" "neither SLURM_ARRAY_TASK_ID" env -u SLURM_ARRAY_TASK_ID -u JOB_COMPLETION_INDEX "${gen[@]}" --shard-from-env
JOB_COMPLETION_INDEX=1 "${gen[@]}" --shard-from-env --shards 3 --out "$work/k8s1.jsonl" >/dev/null && cmp -s "$work/k8s1.jsonl" "$work/greedy-part1.jsonl" \
  && ok "Kubernetes JOB_COMPLETION_INDEX=1 --shards 3 == Slurm task 1 of 3" || bad "JOB_COMPLETION_INDEX shard differs"

[ $fails = 0 ] && echo "all shard checks passed" || echo "$fails shard checks failed"
exit $((fails > 0))
