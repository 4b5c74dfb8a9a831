#!/bin/bash
# Replays, from the repository root, the games of the real-play rounds 2 to 4 (experiments/2026-11-27-c4-
# mav-real-play) that start from an opening the league's games pass through (select_openings.py), with the
# models that played them (their float16 exports as shipped: the games were played by float32 copies of the
# same weights), the rounds' agent names and seeds (so every game gets its round's per-game seed), then
# annotates every distinct position as the rounds did (c4_play_positions, 2M nodes a position, the same
# 1 % validation split).  Resumable: the match stores continue, a finished data set is kept.
#   experiments/2026-12-02-c4-training-overlap/replay_rounds.sh [OUT] [OPPONENTS]
# OUT defaults to runs/c4-replay (holding select_openings.py's files); OPPONENTS defaults to "mcts-100".
# SRC: a directory holding a built mavgame package to use instead of the checkout's (python -P: the
# checkout is then not on the path); the README's run used a copy of commit e84405f's mavgame.
set -euo pipefail
OUT=${1:-runs/c4-replay}
OPPS=${2:-mcts-100}
export OMP_NUM_THREADS=1
PY=python
if [ -n "${SRC:-}" ]; then export PYTHONPATH="$SRC"; PY="python -P"; fi
mkdir -p runs/h54-models
declare -A COMMIT=([2]=6b53ad6 [3]=5c3d6ca [4]=af02cdf)     # the sixth, seventh and eighth shipped models
declare -A SEED=([2-mcts-100]=21 [2-mcts-400]=22 [3-mcts-100]=61 [3-mcts-400]=62 [4-mcts-100]=71 [4-mcts-400]=72)
for R in 4 3 2; do
  M=runs/h54-models/round$R.safetensors
  [ -f "$M" ] || git show "${COMMIT[$R]}:mavgame/data/mav_connect_four.safetensors" > "$M"
  for OPP in $OPPS; do
    nice -n 10 $PY -m mavgame match "mav=mav:model=$M" "$OPP=uct:sims=${OPP#mcts-}" --game connect_four \
      --openings "$OUT/round$R-$OPP.txt" --seed "${SEED[$R-$OPP]}" --workers 1 --no-progress \
      --out "$OUT/round$R-$OPP.sqlite" | tail -n 2
  done
done
if [ ! -f "$OUT/data/train/manifest.json" ]; then
  rm -rf "$OUT/data"
  nice -n 10 $PY -m mavgame.analysis.c4_play_positions "$OUT"/round*.sqlite --out "$OUT/data" \
    --max-nodes 2000000 --workers 2 --val-fraction 0.01
fi
