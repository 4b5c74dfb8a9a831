#!/bin/bash
# The checks and measurements to run on a lent GPU machine, in one go (docs/kernels.md "On a GPU"):
#   1. build the extension in place with the CUDA kernels for the GPU's architecture (warnings as errors);
#   2. the GPU tests: tests/test_gpu_engine.py (the CUDA engine against the CPU engine) and tests/test_cuda.py;
#   3. every kernel driver on the GPU (checks against the C reference, then times) against torch:
#      bench/kernels.py;
#   4. the whole engine on the GPU against torch on the GPU and the CPU engine: bench/inference_gpu.py.
# Logs and JSON go to $OUT (default /tmp/gpu-out). Each step has its own time limit, so one that hangs
# cannot eat the others' time.
#
# KERNELS=matmul,forward runs only those drivers; INFER="--reps 2 --models large" passes options to the engine
# bench.
#
#     bash tools/gpu_session.sh                                # on the GPU machine, from the repository root
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
ARCH=${MAVGAME_CUDA_ARCH:-"-gencode arch=compute_90,code=sm_90"}
step() { echo; echo "== $(date +%T) $*"; }

step machine
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
nvcc --version | tail -1
python3 -c "import sys, torch, numpy; print(sys.version.split()[0], 'torch', torch.__version__, 'numpy', numpy.__version__)"
nproc

step build
MAVGAME_REQUIRE_CUDA=1 MAVGAME_WERROR=1 MAVGAME_CUDA_ARCH="$ARCH" timeout 300 python3 setup.py build_ext --inplace \
    > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; echo "BUILD FAILED"; exit 1; }
grep "mavgame:" "$OUT/build.log"
python3 -c "from mavgame import _core; print('WITH_CUDA', _core.WITH_CUDA, _core.cuda_status())"

step "GPU tests"
timeout 240 python3 -m pytest tests/test_gpu_engine.py tests/test_cuda.py -q -p no:cacheprovider -rs 2>&1 \
    | tee "$OUT/pytest.log" | tail -25

step "kernels against torch"
MAVGAME_CUDA_ARCH="$ARCH" timeout 200 python3 bench/kernels.py --reps 3 ${KERNELS:+--only $KERNELS} 2>&1 | tee "$OUT/kernels.log" | tail -40

step "engine against torch"
timeout 240 python3 bench/inference_gpu.py ${INFER:---reps 3} --json "$OUT/inference_gpu.json" 2>&1 \
    | tee "$OUT/inference_gpu.log" | tail -40

step done
