#!/bin/bash
# The league games of Figure 8 (experiments/2026-12-02-c4-training-overlap/README.md), from the repository
# root: the shipped Connect Four MAV, searchless and MAV-MCTS at 100 simulations, against basic MCTS at 100
# simulations from random 4-ply openings (seed 54, not a seed of the training rounds), each opening with
# both colours.  Both stores resume when run again.  OUT defaults to runs/c4-overlap.
set -euo pipefail
OUT=${1:-runs/c4-overlap}
mkdir -p "$OUT"
export OMP_NUM_THREADS=1
nice -n 10 python -m mavgame match mav=mav mcts-100=uct:sims=100 --game connect_four \
  --openings random:4:150 --seed 54 --workers 1 --no-progress --out "$OUT/mav-vs-mcts100.sqlite" | tail -n 3
nice -n 10 python -m mavgame match mav-mcts-100=mav_mcts:sims=100,batch=16 mcts-100=uct:sims=100 \
  --game connect_four --openings random:4:60 --seed 54 --workers 1 --no-progress \
  --out "$OUT/mav-mcts100-vs-mcts100.sqlite" | tail -n 3
