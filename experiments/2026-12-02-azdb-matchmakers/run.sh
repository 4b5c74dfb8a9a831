#!/bin/bash
# The AZdb paper's matchmaker comparison (appendix B.2, Figures 11-14) at this project's scale, from the
# repository root:
#
#   experiments/2026-12-02-azdb-matchmakers/run.sh [MATCHMAKER ...]     (default: all six, one after another;
#   the results were made with four of these side by side: "selfplay uniform", "psro-uniform psro",
#   "psro-rectified", "psro-cycle", then one more call with no MATCHMAKER to summarise)
#
# For each matchmaker: a 3-player AZdb team on Connect Four (diversity reward on, information hiding as
# the trainer always does), ITERATIONS (default 8) iterations x 30 self-play games (240 games, each player
# the exploiter in 80) at 40 simulations, 8 x 30 Adam steps on 128 positions, 2 blocks x 32 channels, seed SEED (default
# 1); then its puzzle scores (PUZZLES, default c4_puzzles_150.csv here: the first 150 of
# bench/data/c4_puzzles_300.csv; 40 simulations per player).
# Resumable: training continues from its checkpoint, a puzzle file that exists is kept.  Then
# summarise.py writes results.json and the table of README.md.
set -euo pipefail
SEED=${SEED:-1}
RUNS=${RUNS:-runs/azdb_mm}
PUZZLES=${PUZZLES:-experiments/2026-12-02-azdb-matchmakers/c4_puzzles_150.csv}
MMS=${*:-selfplay uniform psro psro-uniform psro-rectified psro-cycle}
export OMP_NUM_THREADS=1
MG="nice -n 10 python -m mavgame"
ITERATIONS=${ITERATIONS:-8}
C="--game connect_four --players 3 --iterations $ITERATIONS --games 30 --parallel 30 --sims 40 --blocks 2 --channels 32
   --steps 30 --batch-size 128 --optimizer adam --lr 0.002 --dirichlet-alpha 1.0 --temperature-plies 10
   --threads 1 --no-progress --seed $SEED"
for M in $MMS; do
  D=$RUNS/${M}_s$SEED
  echo "== $M: train $D"
  $MG az --out "$D" $C --matchmaking "$M" 2>&1 | tail -1
  if [ ! -f "$D/puzzles.json" ]; then
    echo "== $M: puzzles"
    $MG az-puzzles score --puzzles "$PUZZLES" --threads 1 --no-progress --team "$D/checkpoint.pt" --sims 40 \
        --json "$D/puzzles.json.tmp"
    mv "$D/puzzles.json.tmp" "$D/puzzles.json"
  fi
done
nice -n 10 python experiments/2026-12-02-azdb-matchmakers/summarise.py --runs "$RUNS" --seed "$SEED" \
    --out experiments/2026-12-02-azdb-matchmakers/results.json
