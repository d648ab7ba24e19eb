#!/usr/bin/env bash
# Streaming `generate --input`: the file is read lazily, so a shard's peak memory does not grow with
# the file. The same 16 rows are generated from a 2,000-row and a 1,000,000-row file (shard 0 of N
# owns global batches 0 and N); the peak RSS differs by far less than the big file's size (a reader
# that loads the file would hold every row). Also: the lines carry the rows' global indices and
# texts, a rerun resumes (nothing regenerated), a cut last batch is redone, and a malformed row far
# down a JSONL file is named (file:line) before any model is loaded.
# Usage: test_stream.sh T5STUDIO MODEL_DIR WORK_DIR
set -u
bin=$1 model=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }

python3 - "$work" <<'PY'
import sys
work = sys.argv[1]
words = ["Tom is a good boy", "I like green tea", "It is raining today", "Let us go home"]
for name, n in (("small", 2000), ("big", 1000000)):
    with open(f"{work}/{name}.txt", "w") as f:
        f.writelines(f"{words[i % 4]}, row {i} of the input file.\n" for i in range(n))
with open(f"{work}/bad.jsonl", "w") as f:
    f.writelines('{"text": "row %d"}\n' % i for i in range(50000))
    f.write('{"text": 7}\n')
PY
# Peak RSS (kB) of a command, from wait4 (python's resource module).
peak_kb() {
  python3 -c 'import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if rc == 0 else -1)' "$@"
}
gen=("$bin" generate --model "$model" --batch-size 8 --max-new-tokens 4 --threads 1)

small_kb=$(peak_kb "${gen[@]}" --input "$work/small.txt" --shard 0/125 --out "$work/small.jsonl")
big_kb=$(peak_kb "${gen[@]}" --input "$work/big.txt" --shard 0/62500 --out "$work/big.jsonl")
file_kb=$(($(stat -c %s "$work/big.txt") / 1024))
if [ "$small_kb" -gt 0 ] && [ "$big_kb" -gt 0 ]; then
  growth=$((big_kb - small_kb))
  [ $growth -lt $((file_kb / 4)) ] && ok "peak RSS 2,000 rows ${small_kb} kB, 1,000,000 rows ${big_kb} kB (+${growth} kB; file ${file_kb} kB)" \
    || bad "peak RSS grows with the file: ${small_kb} -> ${big_kb} kB (file ${file_kb} kB)"
else
  bad "a streaming run failed"
fi
python3 - "$work/big.jsonl" <<'PY' && ok "global indices and texts preserved (rows 0-7, 500000-500007)" || bad "wrong rows"
import json, sys
words = ["Tom is a good boy", "I like green tea", "It is raining today", "Let us go home"]
rows = [json.loads(l) for l in open(sys.argv[1])]
want = list(range(8)) + list(range(500000, 500008))
got = [r["index"] for r in rows]
assert got == want, got
for r in rows:
    i = r["index"]
    assert r["input"] == f"{words[i % 4]}, row {i} of the input file.", r
    assert r["total_rows"] == 1000000 and r["candidates"], r
PY
cp "$work/big.jsonl" "$work/big-complete.jsonl"
summary=$("${gen[@]}" --input "$work/big.txt" --shard 0/62500 --out "$work/big.jsonl")
[[ "$summary" == *'"rows_resumed":16'* && "$summary" == *'"rows_written":0'* ]] && cmp -s "$work/big.jsonl" "$work/big-complete.jsonl" \
  && ok "rerun resumes: nothing regenerated" || bad "rerun: $summary"
head -c -20 "$work/big-complete.jsonl" >"$work/big.jsonl"  # a kill cut the last line
summary=$("${gen[@]}" --input "$work/big.txt" --shard 0/62500 --out "$work/big.jsonl")
[[ "$summary" == *'"rows_resumed":8'* && "$summary" == *'"rows_written":8'* ]] && cmp -s "$work/big.jsonl" "$work/big-complete.jsonl" \
  && ok "a cut batch is redone: the file equals the complete run" || bad "cut batch: $summary"
out=$("$bin" generate --model /nonexistent-model-dir --input "$work/bad.jsonl" 2>&1); rc=$?
[ $rc = 1 ] && [[ "$out" == *"bad.jsonl:50001"*'"text"'* ]] && ok "malformed row named before the model loads: $out" \
  || bad "malformed row: rc=$rc $out"
[ $fails = 0 ] && echo "all streaming checks passed" || echo "$fails streaming checks failed"
exit $((fails > 0))
