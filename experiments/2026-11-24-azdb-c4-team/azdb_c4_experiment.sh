#!/bin/bash
# The AZdb Connect Four experiment at equal compute (this folder's README.md; docs/alphazero.md), one seed,
# from the repository root:
#
#   experiments/2026-11-24-azdb-c4-team/azdb_c4_experiment.sh SEED train-single | train-team | eval
#
# train-*: a single AlphaZero and a 5-player team with the same self-play games x simulations and the
#   same training steps (25 iterations x 50 games x 40 simulations, 25 x 50 Adam steps on 128 positions).
# eval: puzzle scores (PUZZLES, default bench/data/c4_puzzles_300.csv) of the team's players, max-over-
#   latents and the sub-additive rules at SIMS simulations per player (the paper's play-time search value,
#   and the ablations vd and extrinsic), of the single AlphaZero at SIMS and at PLAYERS x SIMS (the team's
#   total), the matches team (RULES, SIMS per player) vs single (PLAYERS x SIMS) on 50 random 4-ply
#   openings x 2 colours, and the run's report (players' psi, openings).
# Every step resumes: training from its checkpoint, puzzle scores are skipped when their file exists,
# matches continue in their SQLite store.  Runs niced and single-threaded.
set -euo pipefail
S=$1
STEP=$2
RUNS=${RUNS:-runs}
PUZZLES=${PUZZLES:-bench/data/c4_puzzles_300.csv}
SIMS=${SIMS:-40}
PLAYERS=5
TOTAL=$((PLAYERS * SIMS))
RULES=${RULES:-lcb gap}
GAMES=${GAMES:-50}
export OMP_NUM_THREADS=1
MG="nice -n 5 python -m mavgame"
C="--game connect_four --iterations 25 --games 50 --parallel 50 --sims 40 --blocks 2 --channels 32 --steps 50
   --batch-size 128 --optimizer adam --lr 0.002 --dirichlet-alpha 1.0 --temperature-plies 10 --threads 1
   --no-progress --seed $S"
T=$RUNS/team_s$S/checkpoint.pt
A=$RUNS/single_s$S/checkpoint.pt
E=$RUNS/eval
mkdir -p "$E"
case $STEP in
  train-single) $MG az --out "$RUNS/single_s$S" $C ;;
  train-team) $MG az --out "$RUNS/team_s$S" $C --players $PLAYERS --matchmaking psro ;;
  eval)
    [ -f "$E/score_s$S.json" ] || $MG az-puzzles score --puzzles "$PUZZLES" --threads 1 --no-progress \
        --team "$T" --sims "$SIMS" "az:checkpoint=$A,sims=$SIMS" "az:checkpoint=$A,sims=$TOTAL" \
        --json "$E/score_s$S.json"
    for R in vd extrinsic; do
      [ -f "$E/score_${R}_s$S.json" ] || $MG az-puzzles score --puzzles "$PUZZLES" --threads 1 --no-progress \
          --team "$T" --sims "$SIMS" --rewards $R --json "$E/score_${R}_s$S.json"
    done
    [ -f "$E/report_s$S.json" ] || nice -n 5 python experiments/2026-11-24-azdb-c4-team/azdb_report.py --team "$RUNS/team_s$S" \
        --single "$RUNS/single_s$S" --scores "$E/score_s$S.json" --sims 100 --out "$E/report_s$S" > /dev/null
    for R in $RULES; do
      $MG match --game connect_four "team=azdb:checkpoint=$T,sims=$SIMS,select=$R" \
          "single=az:checkpoint=$A,sims=$TOTAL" --openings "random:4:$GAMES" --workers 1 --seed "$S" \
          --no-progress --out "$E/match_${R}_s$S.sqlite" --export "$E/match_${R}_s$S.jsonl" > "$E/match_${R}_s$S.txt"
    done ;;
  *) echo "usage: $0 SEED train-single|train-team|eval" >&2; exit 2 ;;
esac
