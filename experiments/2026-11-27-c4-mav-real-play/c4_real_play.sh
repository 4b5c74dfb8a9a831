#!/bin/bash
# One round of training a Connect Four MAV on positions from its own play (the experiment of this folder's
# README.md, "Positions from real play"; the sixth to ninth runs of the shipped model), from the repository root:
#
#   experiments/2026-11-27-c4-mav-real-play/c4_real_play.sh MODEL32 OUT [EXPORT]
#
# MODEL32: the float32 model to start from (tools/export_checkpoint.py RUN MODEL32); OUT: the round's folder.
# 1. games of the searchless MAV of MODEL32 against basic MCTS at 100 simulations (2,000 games, OPEN1 openings,
#    default 1,000 random 4-ply ones, seed SEED1, default 21) and 400 (1,000 games, OPEN2 default random:4:500,
#    SEED2 default 22): OUT/games/*.sqlite; give each round its own openings (the seventh run scores 50.5 %
#    against MCTS 100 from the openings of the round that trained it, 43.8 % over the evaluation openings);
# 2. every distinct position of them, solver-annotated (2M nodes a position, over it left out): OUT/play-data;
# 3. the empty-board data (DATA, default runs/c4exp-data) plus those positions listed twice: OUT/mix-data
#    (manifests and links to the shards);
# 4. 4,000 steps of 32 on it from MODEL32: OUT/train, exported to EXPORT (default OUT/train/model.safetensors).
# Every step resumes when run again: the match stores continue, finished data sets are kept, training
# continues from its checkpoint.
set -euo pipefail
M=$1
OUT=$2
EXPORT=${3:-$OUT/train/model.safetensors}
DATA=${DATA:-runs/c4exp-data}
[ -f "$M" ] || { echo "c4_real_play.sh: no model file $M" >&2; exit 2; }
mkdir -p "$OUT/games"
[ "${M%.safetensors}" != "$M" ] || { echo "c4_real_play.sh: $M is not a .safetensors file" >&2; exit 2; }
OMP_NUM_THREADS=1 python -m mavgame match "mav=mav:model=$M" mcts-100=uct:sims=100 --game connect_four \
  --openings "${OPEN1:-random:4:1000}" --seed "${SEED1:-21}" --workers 2 --no-progress --out "$OUT/games/mav-mcts100.sqlite" | tail -n 3
OMP_NUM_THREADS=1 python -m mavgame match "mav=mav:model=$M" mcts-400=uct:sims=400 --game connect_four \
  --openings "${OPEN2:-random:4:500}" --seed "${SEED2:-22}" --workers 2 --no-progress --out "$OUT/games/mav-mcts400.sqlite" | tail -n 3
if [ ! -f "$OUT/play-data/train/manifest.json" ]; then
  rm -rf "$OUT/play-data"
  python -m mavgame.analysis.c4_play_positions "$OUT/games/mav-mcts100.sqlite" "$OUT/games/mav-mcts400.sqlite" \
    --out "$OUT/play-data" --max-nodes 2000000 --workers 2 --val-fraction 0.01
fi
python -m mavgame.datasets.merge "$OUT/mix-data" "$DATA" "$OUT/play-data:2"
python -m mavgame train --data "$OUT/mix-data" --out "$OUT/train" --preset small --line-pos 64 --steps 4000 \
  --batch-size 32 --lr 5e-4 --warmup 100 --seed 4 --threads 2 --workers 0 --p-after 0 --eval-every 2000 \
  --gen-eval-positions 128 --checkpoint-every 250 --init-from "$M" \
  --finished-repeat 2 --outcome-weight 8 --example-option k_terminal_prev=1 --mirror 0.5 \
  --final-eval-positions 2000 --ood-games 200 --no-progress --export "$EXPORT" --export-dtype float16
