#!/usr/bin/env bash
# Crash loop for checkpoints: `t5studio train` on a tiny model saving a checkpoint every
# step is killed with SIGKILL at a random moment shortly after a new checkpoint appears (so many
# kills land inside the next checkpoint write), ITERATIONS times. After every kill: the newest
# checkpoint is complete and loads (`t5studio generate` on it), and the next start with --resume
# continues from exactly that checkpoint. Prints one "crash loop (checkpoints): ..." line of counts.
# usage: checkpoint_crash_loop.sh T5STUDIO MODEL_DIR WORK_DIR [ITERATIONS]   (exit 0 = no failure)
set -uo pipefail
app=$1; model=$2; work=$3; iterations=${4:-10}
rm -rf "$work"; mkdir -p "$work"
out="$work/out"; log="$work/train.log"
for i in $(seq 1 40); do
  printf '{"source": "paraphrase: the cat number %d is here", "target": "here is cat %d"}\n' "$i" "$i"
done > "$work/data.jsonl"
train=("$app" train --model "$model" --data "$work/data.jsonl" --out "$out" --steps 100000 --batch-size 4
       --save-every 1 --keep-last 2 --eval-every 0 --threads 1 --seed 7 --log-every 1)
complete_files=(config.json model.safetensors spiece.model generation_config.json training_state.safetensors trainer_state.json)

newest_checkpoint() {  # the highest checkpoint-N with its trainer_state.json (what --resume picks)
  local best=-1 d n
  for d in "$out"/checkpoint-*; do
    [ -f "$d/trainer_state.json" ] || continue
    n=${d##*/checkpoint-}
    [[ $n =~ ^[0-9]+$ ]] && [ "$n" -gt "$best" ] && best=$n
  done
  echo "$best"
}

kills=0; incomplete=0; unloadable=0; resume_wrong=0; leftovers=0
previous=-1
for it in $(seq 1 "$iterations"); do
  args=("${train[@]}"); [ "$it" -gt 1 ] && args+=(--resume)
  : > "$log"
  "${args[@]}" >> "$log" 2>&1 &
  pid=$!
  # Wait (deadline 120 s) for a checkpoint newer than the one we resumed from, then a random 0-400 ms.
  deadline=$((SECONDS + 120))
  while [ "$(newest_checkpoint)" -le "$previous" ] && kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do
    sleep 0.05
  done
  sleep "0.$(printf '%03d' $((RANDOM % 400)))"
  if kill -9 "$pid" 2>/dev/null; then kills=$((kills + 1)); fi
  wait "$pid" 2>/dev/null
  if [ "$it" -gt 1 ]; then
    # The run just killed must have resumed from the newest checkpoint the previous kill left.
    grep -q "resumed from $out/checkpoint-$previous at step $previous" "$log" ||
      { resume_wrong=$((resume_wrong + 1)); echo "iteration $it: did not resume from checkpoint-$previous:"; head -5 "$log"; }
  fi
  newest=$(newest_checkpoint)
  if [ "$newest" -lt 0 ]; then incomplete=$((incomplete + 1)); echo "iteration $it: no checkpoint"; continue; fi
  for f in "${complete_files[@]}"; do
    [ -s "$out/checkpoint-$newest/$f" ] || { incomplete=$((incomplete + 1)); echo "iteration $it: checkpoint-$newest lacks $f"; break; }
  done
  if ! "$app" generate --model "$out/checkpoint-$newest" --text "the cat" --max-new-tokens 2 --threads 1 > "$work/gen.out" 2>&1; then
    unloadable=$((unloadable + 1)); echo "iteration $it: checkpoint-$newest does not load: $(tail -1 "$work/gen.out")"
  fi
  leftovers=$(find "$out" -maxdepth 1 -name '.*' | wc -l)
  previous=$newest
done
echo "crash loop (checkpoints): $iterations iterations, $kills killed, newest checkpoint incomplete $incomplete," \
     "not loadable $unloadable, --resume not from the newest $resume_wrong, temp dirs left now $leftovers"
[ $((incomplete + unloadable + resume_wrong)) -eq 0 ] && [ "$kills" -eq "$iterations" ]
