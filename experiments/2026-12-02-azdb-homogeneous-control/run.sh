#!/bin/bash
# The AZdb homogeneous-team control (issue 54; this folder's README.md), from the repository root:
#
#   experiments/2026-12-02-azdb-homogeneous-control/run.sh train    # all seven runs at once (resumable)
#   CHUNKS=3 experiments/2026-12-02-azdb-homogeneous-control/run.sh eval [team nodiv homogeneous single]
#                                      # puzzle scores in 3 parts each, side by side (skips files that exist)
#   experiments/2026-12-02-azdb-homogeneous-control/run.sh report   # the table with intervals (report.py)
#
# Runs, at ITERS iterations (default 5) of the 2026-11-24 team experiment's recipe (50 games x 40
# simulations, 50 Adam steps on 128 positions a iteration; 2 blocks x 32 channels):
#   single_s1..s5   five single AlphaZero networks, seeds 1..5: the homogeneous team (s2 is also "the single")
#   team_s1         the AZdb team, 5 players, PSRO-Nash, diversity reward on (lambda 0.5 for players 1-4)
#   team_nodiv_s1   the same team with --lam 1: every player lambda = 1, no diversity reward (same games,
#                   same network, same matchmaking: the equal-training-compute homogeneous team)
# Every training run resumes from its checkpoint (rerun the step to continue); puzzle scores are skipped
# when their JSON exists.  Niced, single-threaded.  SRC: a directory put first on PYTHONPATH (the runs of
# the README used a snapshot of commit e84405f's mavgame/ with its built _core, since the working tree was
# being edited by others during the run); unset, the checkout's mavgame is used.
set -euo pipefail
STEP=${1:?usage: $0 train|eval|report}
RUNS=${RUNS:-runs/h54az1}
ITERS=${ITERS:-5}
PUZZLES=${PUZZLES:-bench/data/c4_puzzles_300.csv}
SIMS=${SIMS:-40}
PLAYERS=5
TOTAL=$((PLAYERS * SIMS))
HERE=experiments/2026-12-02-azdb-homogeneous-control
export OMP_NUM_THREADS=1
if [ -n "${SRC:-}" ]; then export PYTHONPATH="$SRC${PYTHONPATH:+:$PYTHONPATH}"; fi
MG="nice -n 10 python -m mavgame"
C="--game connect_four --iterations $ITERS --games 50 --parallel 50 --sims 40 --blocks 2 --channels 32 --steps 50
   --batch-size 128 --optimizer adam --lr 0.002 --dirichlet-alpha 1.0 --temperature-plies 10 --threads 1
   --no-progress"
mkdir -p "$RUNS/logs"

train() {  # NAME SEED [extra args]: one run, its output in $RUNS/logs/NAME.txt
  local name=$1 seed=$2
  shift 2
  $MG az --out "$RUNS/$name" $C --seed "$seed" "$@" >> "$RUNS/logs/$name.txt" 2>&1
}

case $STEP in
  train)   # the seven runs side by side (on the shared machine each niced process gets its share)
    pids=()
    train team_s1 1 --players $PLAYERS --matchmaking psro & pids+=($!)
    train team_nodiv_s1 1 --players $PLAYERS --matchmaking psro --lam 1.0 & pids+=($!)
    for s in 1 2 3 4 5; do train single_s$s $s & pids+=($!); done
    for p in "${pids[@]}"; do wait "$p"; done ;;
  eval)     # puzzle scores, each of WHAT (default: all four) in CHUNKS parts side by side
    E=$RUNS/eval
    mkdir -p "$E"
    shift
    WHAT=${*:-team nodiv homogeneous single}
    CHUNKS=${CHUNKS:-1}
    HOMO=$(for s in 1 2 3 4 5; do printf '%s,' "$RUNS/single_s$s/checkpoint.pt"; done)
    N=$(($(wc -l < "$PUZZLES") - 1))
    for ((i = 0; i < CHUNKS; i++)); do   # part i: puzzles [i N / CHUNKS, (i + 1) N / CHUNKS) of the file
      f="$E/puzzles.part$i-of-$CHUNKS.csv"
      [ -f "$f" ] || { head -1 "$PUZZLES"; tail -n +2 "$PUZZLES" | sed -n "$((i * N / CHUNKS + 1)),$(((i + 1) * N / CHUNKS))p"; } > "$f"
    done
    score() {  # NAME, then the az-puzzles score arguments: NAME.json, or NAME.partI-of-CHUNKS.json
      local name=$1
      shift
      for ((i = 0; i < CHUNKS; i++)); do
        local out="$E/$name.json" in="$PUZZLES"
        if [ "$CHUNKS" -gt 1 ]; then out="$E/$name.part$i-of-$CHUNKS.json"; in="$E/puzzles.part$i-of-$CHUNKS.csv"; fi
        [ -f "$out" ] || { $MG az-puzzles score --puzzles "$in" --threads 1 --no-progress --sims "$SIMS" "$@" \
            --json "$out.tmp" > "$out.txt" 2>&1 && mv "$out.tmp" "$out"; } &
        pids+=($!)
      done
    }
    pids=()
    for w in $WHAT; do
      case $w in
        team) score team --team "$RUNS/team_s1/checkpoint.pt" ;;
        nodiv) score team_nodiv --team "$RUNS/team_nodiv_s1/checkpoint.pt" ;;
        homogeneous) score homogeneous --team "${HOMO%,}" ;;
        single) score single "az:checkpoint=$RUNS/single_s2/checkpoint.pt,sims=$SIMS" \
                    "az:checkpoint=$RUNS/single_s2/checkpoint.pt,sims=$TOTAL" ;;
        *) echo "eval: no $w (team, nodiv, homogeneous, single)" >&2; exit 2 ;;
      esac
    done
    for p in "${pids[@]}"; do wait "$p"; done ;;
  report)
    nice -n 10 python "$HERE/report.py" --eval "$RUNS/eval" --runs "$RUNS" --out "$HERE/control.json" ;;
  *) echo "usage: $0 train|eval|report" >&2; exit 2 ;;
esac
