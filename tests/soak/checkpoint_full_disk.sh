#!/usr/bin/env bash
# Full disk during checkpoint writes: `t5studio train --out` on a 3 MB tmpfs (mostly taken by a
# filler file) that fills up at the second checkpoint. Expected: exit 1 (not a crash) with a one-line "disk full" error, the
# newest complete checkpoint loads, and once space is freed `--resume` continues from it.
# Needs root to mount the tmpfs: otherwise prints the reason and exits 77 (ctest: skipped).
# usage: checkpoint_full_disk.sh T5STUDIO MODEL_DIR WORK_DIR
set -uo pipefail
app=$1; model=$2; work=$3
rm -rf "$work"; mkdir -p "$work/disk"
if ! mount -t tmpfs -o size=3m tmpfs "$work/disk" 2>"$work/mount.err"; then
  echo "SKIP: cannot mount a tmpfs ($(tr -s "\n " "  " < "$work/mount.err")): the full-disk check needs root"; exit 77
fi
trap 'umount -l "$work/disk"' EXIT
for i in $(seq 1 40); do
  printf '{"source": "paraphrase: the cat number %d is here", "target": "here is cat %d"}\n' "$i" "$i"
done > "$work/data.jsonl"
head -c $((1400 * 1024)) /dev/zero > "$work/disk/filler"  # leaves room for two checkpoints (~750 KB each)
out="$work/disk/run"
train=("$app" train --model "$model" --data "$work/data.jsonl" --out "$out" --steps 400 --batch-size 4
       --save-every 2 --keep-last 1000 --eval-every 0 --threads 1 --seed 7)
fail() { echo "checkpoint_full_disk: $*"; exit 1; }
"${train[@]}" > "$work/train.out" 2> "$work/train.err"; rc=$?
[ $rc -eq 1 ] || fail "train on a full disk exited $rc (expected 1): $(tail -3 "$work/train.err")"
last=$(tail -1 "$work/train.err")
echo "$last" | grep -q "disk full" || fail "last error line lacks 'disk full': $last"
newest=$(ls -d "$out"/checkpoint-* 2>/dev/null | sed 's/.*checkpoint-//' | sort -n | tail -1)
[ -n "$newest" ] || fail "no checkpoint was written before the disk filled"
"$app" generate --model "$out/checkpoint-$newest" --text "the cat" --max-new-tokens 2 --threads 1 > /dev/null 2> "$work/gen.err" ||
  fail "checkpoint-$newest does not load: $(tail -1 "$work/gen.err")"
# Free space (the filler, and what the failed save left), then resume: it goes on from the newest checkpoint.
rm -f "$work/disk/filler"
rm -rf "$out"/.tmp-* "$out"/.old-*
"${train[@]}" --steps $((newest + 10)) --keep-last 2 --resume > "$work/resume.out" 2> "$work/resume.err" ||
  fail "--resume after freeing space failed: $(tail -2 "$work/resume.err")"
grep -q "resumed from $out/checkpoint-$newest" "$work/resume.err" "$work/resume.out" || fail "did not resume from checkpoint-$newest"
echo "checkpoint_full_disk: ok (3 MB tmpfs: disk full after checkpoint-$newest: \"$last\"; it loads; --resume continued)"
