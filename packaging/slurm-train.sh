#!/usr/bin/env bash
# Data-parallel fine-tuning with srun: one task per GPU; each task reads SLURM_PROCID (rank),
# SLURM_NTASKS (world size) and SLURM_LOCALID (its GPU); rank 0's host and a port are exported as
# MASTER_ADDR / MASTER_PORT. --batch-size is per rank: the global batch is batch-size x tasks
# (x grad-accum), and the losses and updates equal one process with the global batch.
# Rank 0 alone writes checkpoints, the log and the history; resubmitting with --resume continues
# from the newest checkpoint, also with a different number of tasks.
#SBATCH --job-name=t5s-train
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=8
#SBATCH --time=24:00:00
#SBATCH --output=logs/train-%j.out
set -euo pipefail

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=${MASTER_PORT:-29500}
OUT=${OUT:-/data/runs/paraphrase-ft}
mkdir -p logs

srun t5studio train --model /models/t5-base --data /data/pairs.jsonl --out "$OUT" \
  --device cuda --precision bf16 --batch-size 16 --grad-accum 2 --lr 3e-4 --epochs 3 \
  --save-every 500 --dist-timeout 300 --resume
