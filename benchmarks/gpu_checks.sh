#!/usr/bin/env bash
# On a GPU machine: versions, the GPU tests, cold-cache throughput, timing stability.
# Usage (repo root, on the GPU machine): bash benchmarks/gpu_checks.sh OUTDIR [pytest -k expr]
# First, here: bash benchmarks/fetch_device_wheels.sh, and copy .whl to the GPU machine with the checkout.
set -uo pipefail
out=${1:-out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1 AGENTLOOP_CACHE_DIR=${AGENTLOOP_CACHE_DIR:-/tmp/agentloop-cache}
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
} | tee "$out/env.txt"
python3 benchmarks/evaluator_throughput.py --workers 16 --cache-root /tmp/bench --where --json "$out/throughput.json" 2>&1 | tee "$out/throughput.md"
python3 benchmarks/evaluator_throughput.py --workers 16 --cache-root /tmp/bench --warm 2>&1 | tee "$out/throughput_warm.md"
python3 -m pytest -m gpu tests/evaluator/test_gpu.py tests/agentloop/test_gpu_loop.py -q -p no:cacheprovider ${2:+-k "$2"} 2>&1 | tee "$out/gpu_tests.txt"
python3 benchmarks/timing_stability.py --json "$out/stability.json" ${STABILITY_TASKS:+--tasks $STABILITY_TASKS} 2>&1 | tee "$out/stability.md"
python3 -m agentloop calibrate 2>&1 | tee "$out/calibrate.txt"
python3 -m agentloop eval Math/softmax tasks/Math/softmax_solution.py 2>&1 | tee "$out/cli_eval.txt"
