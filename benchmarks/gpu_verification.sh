#!/usr/bin/env bash
# Verification on a GPU machine: the GPU tests (exploits and their replay, the corpus of good kernels
# in other styles, the evaluator's GPU tests, the escapes), every reference solution scored with
# timing (verdicts, and that no honest kernel is taken for a replay by the probe calls), and the
# 15-task cold throughput alternating with another checkout (the code before a change).
# Usage (repo root, on the GPU machine): bash benchmarks/gpu_verification.sh OUTDIR OTHER_CHECKOUT [tests|suite|cost|all]
# First, here: bash benchmarks/fetch_device_wheels.sh, and carry .whl and the other checkout.
set -uo pipefail
out=$1; other=$(cd "$2" && pwd); part=${3:-all}; here=$PWD
mkdir -p "$out"; out=$(cd "$out" && pwd)
source benchmarks/device_setup.sh "$out/env.txt"
run_tests() {
  PYTHONPATH=$here${PYTHONPATH:+:$PYTHONPATH} timeout "${TESTS_SECONDS:-560}" python3 -m pytest -m gpu -n "${TEST_WORKERS:-0}" \
    tests/evaluator/test_candidates.py tests/evaluator/test_good_corpus.py tests/evaluator/test_gpu.py \
    tests/evaluator/test_escapes.py tests/evaluator/test_memory_check.py -q -p no:cacheprovider -rfEs 2>&1 | tail -40 | tee "$out/gpu_tests.txt"
}
run_suite() {
  SUITE_SECONDS=${SUITE_SECONDS:-420} bash benchmarks/gpu_suite.sh "$out/suite" > "$out/suite.txt" 2>&1
  python3 - "$out"/suite/suite-*.jsonl <<'EOF' | tee "$out/suite_verdicts.txt"
import collections, json, sys
verdicts, odd = collections.Counter(), []
for path in sys.argv[1:]:
    for line in open(path):
        row = json.loads(line)
        verdict = row.get("verdict") or row.get("result", {}).get("verdict")
        verdicts[verdict] += 1
        if verdict != "CORRECT":
            odd.append(f"{row.get('task') or row.get('task_id')}: {verdict}: {str(row.get('reason'))[:300]}")
print(dict(verdicts)); print("\n".join(odd))
EOF
}
run_cost() {
  for round in ${ROUNDS:-1 2}; do
    for tree in "$other" "$here"; do
      name=$([ "$tree" = "$here" ] && echo new || echo other)
      rm -rf /tmp/bench-cold; (cd "$tree" && PYTHONPATH=$tree${PYTHONPATH:+:$PYTHONPATH} python3 benchmarks/evaluator_throughput.py \
        --workers 16 --cache-root /tmp/bench-cold --json "$out/throughput_${name}_$round.json") > "$out/throughput_${name}_$round.md" 2>&1
      echo "$name $round: $(grep -h -i 'wall' "$out/throughput_${name}_$round.md" | tail -1)"
    done
  done | tee "$out/cost.txt"
}
case $part in
  tests) run_tests ;; suite) run_suite ;; cost) run_cost ;;
  *) run_tests; run_suite; run_cost ;;
esac
