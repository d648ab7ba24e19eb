#!/usr/bin/env bash
# Batch augmentation of a large file as a Slurm array: one task per GPU, each task generates its
# share of the rows (every N-th batch of --batch-size rows; see `t5studio generate` in README.md),
# a last job merges the parts in global row order. Resubmitting a failed task resumes it: rows
# already in its part are skipped.
#
#   sbatch packaging/slurm-augment.sh      # 16 shards
#   scontrol requeue <jobid>_3             # rerun task 3 in its array: it resumes its part
# (A task submitted on its own sees an array of one: run it with --shard 3/16 instead of
# --shard-from-env.)
#SBATCH --job-name=t5s-augment
#SBATCH --array=0-15
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=4
#SBATCH --mem=16G
#SBATCH --time=12:00:00
#SBATCH --output=logs/augment-%A_%a.out
set -euo pipefail

MODEL=${MODEL:-/models/t5-paraphrase}
INPUT=${INPUT:-/data/rows.txt}        # one text per line, or JSONL with "text"
OUT_DIR=${OUT_DIR:-/data/augmented}
SEED=${SEED:-1234}                    # every shard derives its per-batch seeds from this one
mkdir -p "$OUT_DIR" logs

# The shard comes from SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT.
# --batch-size must be the same number in every task (it defines the shards' batches).
t5studio generate --model "$MODEL" --input "$INPUT" --device cuda --dtype bf16 \
  --batch-size 64 --sample --seed "$SEED" --num-return 4 --top-p 0.9 --max-new-tokens 64 \
  --shard-from-env --out "$OUT_DIR/part-${SLURM_ARRAY_TASK_ID}.jsonl"

# Merge once every task is done, e.g. as a dependent job:
#   sbatch --dependency=afterok:$ARRAY_JOB_ID --wrap \
#     "t5studio merge --out $OUT_DIR/augmented.jsonl $OUT_DIR/part-*.jsonl"
# merge fails, listing the rows, when a part is missing or a row appears twice.
