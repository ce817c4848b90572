#!/usr/bin/env bash
# Every reference solution on every visible GPU (one shard of the suite per GPU, each with its own
# cache and timing lock), then the combined tables. Usage, repo root on the GPU machine:
#   bash benchmarks/gpu_suite.sh OUTDIR [task ids or categories ...]
# First, here: bash benchmarks/fetch_device_wheels.sh, and copy .whl to the GPU machine with the checkout.
# SKIP_DONE="a.jsonl b.jsonl" leaves out the tasks an earlier, cut-short run already scored;
# TIMING_SECONDS caps each timing run (candidate and eager baseline) below the evaluator's 3 s;
# NO_MEMCHECK=1 skips the out-of-bounds access check.
set -uo pipefail
out=${1:-out}; shift || true; mkdir -p "$out"
export PYTHONUNBUFFERED=1
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
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
for k in $(seq 0 $((gpus - 1))); do
  CUDA_VISIBLE_DEVICES=$k AGENTLOOP_CACHE_DIR=/tmp/agentloop-cache-$k timeout "${SUITE_SECONDS:-540}" \
    python3 benchmarks/reference_solutions.py --workers "${WORKERS:-8}" --shard "$k/$gpus" \
    --jsonl "$out/suite-$k.jsonl" ${SKIP_DONE:+--skip-done $SKIP_DONE} ${TIMING_SECONDS:+--timing-seconds $TIMING_SECONDS} ${NO_MEMCHECK:+--no-memcheck} ${1:+--tasks "$@"} > "$out/suite-$k.md" 2> "$out/suite-$k.log" &
done
wait
if ls "$out"/suite-*.jsonl >/dev/null 2>&1; then
  python3 benchmarks/reference_solutions.py --summarize "$out"/suite-*.jsonl | tee "$out/suite.md"
else
  echo "no task finished; see $out/suite-*.log" | tee "$out/suite.md"
fi
