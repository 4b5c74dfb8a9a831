#!/bin/bash
# The checks, measurements and training to run on a lent GPU machine, in one command of at most 10 minutes
# (docs/kernels.md "On a GPU"):
#   1. build the extension in place with the CUDA kernels for the GPU's architecture (warnings as errors);
#   2. the GPU tests: tests/test_gpu_engine.py (the CUDA engine against the CPU engine), tests/test_cuda.py and
#      tests/test_kernels_ptxas.py; meanwhile the training data is generated on the machine's cores
#      (tools/gpu_train.py data: the 14,256-game empty-board set, its expensive solves from the carried cache);
#   3. training: a 24M-parameter Connect Four MAV in bf16 within TRAIN_BUDGET seconds, evaluated with the
#      shipped model on the held-out positions (tools/gpu_train.py train);
#   4. every kernel driver on the GPU (checks against the C reference, then times) against torch:
#      bench/kernels.py;
#   5. the whole engine on the GPU against torch on the GPU and the CPU engine: bench/inference_gpu.py.
# Each stage has its own time limit, the later ones cut to what is left of SESSION_SECONDS, so that one that
# hangs cannot eat the others' time. What comes back from $OUT (default /tmp/gpu-out; a lease returns at
# most 8 files of 16 MiB): train_report.json, the model in parts (model.safetensors.part*),
# inference_gpu.json and logs.tar.gz (every log).
#
# Before the lease, here: python3 tools/gpu_train.py prepare .gpu   (and `.gpu/` in .git/info/exclude); the
# run carries .gpu. Options (environment): STAGES=build,tests,train,kernels,infer (a subset runs only those),
# KERNELS=matmul,forward (only those drivers), INFER="--reps 2 --models large" (options of the engine bench),
# TRAIN="--lr 1e-3" (options of tools/gpu_train.py train), TRAIN_BUDGET=180 (seconds of calibration and
# training), SESSION_SECONDS=540, PYTHON (default python3), GEN_WORKERS (data processes, default cores - 1),
# GPU_CACHE (the annotation cache, default .gpu/c4_annotation_cache.jsonl.gz), TINY=1 (the training stage's
# dry run on the CPU: a few games, the tiny preset, a few steps; tests/test_gpu_session.py runs
# `STAGES=train TINY=1`).
#
#     bash tools/gpu_session.sh                                # on the GPU machine, from the repository root
set -u
OUT=${OUT:-/tmp/gpu-out}
LOGS=${GPU_LOGS:-/tmp/gpu-logs}
WORK=${GPU_WORK:-/tmp/gpu-train}
rm -rf "$LOGS"   # this run's logs only (a warm machine keeps WORK: its data is used again)
mkdir -p "$OUT" "$LOGS" "$WORK"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
ARCH=${MAVGAME_CUDA_ARCH:-"-gencode arch=compute_90,code=sm_90"}
STAGES=${STAGES:-build,tests,train,kernels,infer}
PY=${PYTHON:-python3}   # the interpreter with torch (the GPU machine's python3)
SESSION_SECONDS=${SESSION_SECONDS:-540}
TRAIN_BUDGET=${TRAIN_BUDGET:-180}
step() { echo; echo "== $(date +%T) (${SECONDS} s) $*"; }
want() { [[ ",$STAGES," == *",$1,"* ]]; }
left() { echo $(( SESSION_SECONDS - SECONDS )); }
# a stage's limit: its own, or what is left of the session less a reserve for the stages after it
limit() { local l=$(( $(left) - $2 )); (( l > $1 )) && l=$1; (( l < 10 )) && l=10; echo $l; }
pack() {   # the logs in one file: the lease returns at most 8
    mv -f "$OUT"/train.log "$OUT"/train_log.jsonl "$LOGS"/ 2>/dev/null
    cp -f "$WORK"/*.log "$WORK"/data_info.json "$LOGS"/ 2>/dev/null
    tar -C "$LOGS" -czf "$OUT/logs.tar.gz" . 2>/dev/null
    echo "== $(date +%T) (${SECONDS} s) in $OUT: $(cd "$OUT" && ls | tr '\n' ' ')"
}
trap pack EXIT
exec > >(tee -a "$LOGS/session.log") 2>&1

TINY_ARG=${TINY:+--tiny}
step machine
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
fi
command -v nvcc >/dev/null 2>&1 && nvcc --version | tail -1
"$PY" -c "import sys, torch, numpy; print(sys.version.split()[0], 'torch', torch.__version__, 'numpy', numpy.__version__)"
nproc

if want build; then
    step build
    MAVGAME_REQUIRE_CUDA=1 MAVGAME_WERROR=1 MAVGAME_CUDA_ARCH="$ARCH" timeout 300 "$PY" setup.py build_ext --inplace \
        > "$LOGS/build.log" 2>&1 || { tail -40 "$LOGS/build.log"; echo "BUILD FAILED"; exit 1; }
    grep "mavgame:" "$LOGS/build.log"
    "$PY" -c "from mavgame import _core; print('WITH_CUDA', _core.WITH_CUDA, _core.cuda_status())"
fi

data_pid=
if want train; then
    step "training data, in the background on $(( $(nproc) - 1 )) processes"
    "$PY" tools/gpu_train.py data --work "$WORK" $TINY_ARG ${GEN_WORKERS:+--gen-workers $GEN_WORKERS} \
        ${GPU_CACHE:+--cache "$GPU_CACHE"} \
        > "$LOGS/gpu_train_data.log" 2>&1 &
    data_pid=$!
fi

if want tests; then
    step "GPU tests"
    timeout "$(limit 240 420)" "$PY" -m pytest tests/test_gpu_engine.py tests/test_cuda.py tests/test_kernels_ptxas.py \
        -q -p no:cacheprovider -rs 2>&1 | tee "$LOGS/pytest.log" | tail -25
fi

if want train; then
    step "training"
    wait "$data_pid"; data_rc=$?
    cat "$LOGS/gpu_train_data.log"
    if [ "$data_rc" = 0 ]; then
        # the budget, less what its evaluation (about 60 s) and the stages after it need, if the session is late
        reserve=60
        want kernels && reserve=$(( reserve + 90 ))
        want infer && reserve=$(( reserve + 110 ))
        budget=$(limit "$TRAIN_BUDGET" "$reserve")
        timeout "$(( budget + 180 ))" "$PY" tools/gpu_train.py train --work "$WORK" --out "$OUT" --budget "$budget" \
            $TINY_ARG ${TRAIN:-} 2>&1 | tee "$LOGS/gpu_train.log"
    else
        echo "TRAINING DATA FAILED (exit $data_rc)"
    fi
fi

if want kernels; then
    step "kernels against torch"
    MAVGAME_CUDA_ARCH="$ARCH" timeout "$(limit 150 100)" "$PY" bench/kernels.py --reps 2 ${KERNELS:+--only $KERNELS} 2>&1 \
        | tee "$LOGS/kernels.log" | tail -40
fi

if want infer; then
    step "engine against torch"
    timeout "$(limit 240 15)" "$PY" bench/inference_gpu.py ${INFER:---reps 1} --json "$OUT/inference_gpu.json" 2>&1 \
        | tee "$LOGS/inference_gpu.log" | tail -40
fi

step done
