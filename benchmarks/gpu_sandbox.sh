#!/usr/bin/env bash
# The sandbox on a GPU machine: a candidate process's start cost and the 15-task cold throughput,
# alternating with another checkout of the project (the code before a change), then the GPU tests
# (escapes included) and an honest candidate's verdict and speedup after each escape.
# Usage (repo root, on the GPU machine): bash benchmarks/gpu_sandbox.sh OUTDIR OTHER_CHECKOUT [cost|tests|all]
# First, here: bash benchmarks/fetch_device_wheels.sh, and carry .whl and the other checkout.
set -uo pipefail
out=$1; other=$(cd "$2" && pwd); part=${3:-all}; here=$PWD
mkdir -p "$out"; out=$(cd "$out" && pwd)
source benchmarks/device_setup.sh "$out/env.txt"
if [ "$part" != tests ]; then
  cp "$here/benchmarks/sandbox_start.py" "$other/benchmarks/"  # each tree measures its own sandbox
  for round in ${ROUNDS:-1 2}; do
    for tree in "$other" "$here"; do
      name=$([ "$tree" = "$here" ] && echo new || echo other)
      (cd "$tree" && PYTHONPATH=$tree${PYTHONPATH:+:$PYTHONPATH} python3 benchmarks/sandbox_start.py --repeat 20 \
        --json "$out/start_${name}_$round.json") > "$out/start_${name}_$round.txt" 2>&1
      rm -rf /tmp/bench-cold; (cd "$tree" && PYTHONPATH=$tree${PYTHONPATH:+:$PYTHONPATH} python3 benchmarks/evaluator_throughput.py \
        --workers 16 --cache-root /tmp/bench-cold --json "$out/throughput_${name}_$round.json") > "$out/throughput_${name}_$round.md" 2>&1
      echo "$name $round: $(grep -h -i 'wall' "$out/throughput_${name}_$round.md" | tail -1) start: $(grep -A1 imported_ms "$out/start_${name}_$round.txt" | tail -1)"
    done
  done | tee "$out/summary.txt"
fi
if [ "$part" != cost ]; then
  export PYTHONPATH=$here${PYTHONPATH:+:$PYTHONPATH}
  python3 -m pytest -m gpu tests/evaluator/test_gpu.py tests/agentloop/test_gpu_loop.py tests/evaluator/test_escapes.py tests/evaluator/test_candidates.py \
    tests/evaluator/test_confinement.py -q -p no:cacheprovider 2>&1 | tail -30 | tee "$out/gpu_tests.txt"
  python3 benchmarks/escape_aftermath.py --json "$out/aftermath.json" > "$out/aftermath.txt" 2>&1; tail -40 "$out/aftermath.txt"
fi
