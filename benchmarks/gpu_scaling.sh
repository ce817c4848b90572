#!/usr/bin/env bash
# Several GPUs of one machine: evaluation throughput on 1 GPU against all of them (an evaluator
# process per GPU, and every GPU's Evaluator in one process), each job's verdict compared across
# executors, then every reference solution scored cold by `agentloop eval --references` on one GPU
# and on all of them. Usage, repo root on the GPU machine:
#   bash benchmarks/gpu_scaling.sh OUTDIR
# COPIES (default 14: 15 tasks x 14 = 210 evaluations of distinct sources; NO_IR_STORE=1: every scout
# compiles every kernel, evaluator/ir_store.py; NO_MEMCHECK=1: no memory check; THREADS=1: where the
# processes' threads are, benchmarks/thread_waits.py; FAILING=N: copies 1 to N of each task fail;
# MEMCHECK_START=first_pass: the memory check's process starts once a case has passed),
# EXECUTORS (default
# "local1 local local-one-process"; add ray where Ray is installed), PARTS (default "scaling references"),
# VISIBLE (the GPUs `eval --references` runs on, one run per word: default "0 all"; "all" is every GPU),
# REFERENCES_LIMIT (seconds after which each such run is stopped; it then reports what it scored, and
# when every 25th result came, the longest wait between two, the disks' writes (storage-WORD.tsv,
# benchmarks/storage_timeline.py), the CPU seconds of each kind of process (use-WORD.json,
# benchmarks/process_use.py; WHERE_REFERENCES=1: py-spy samples the evaluator's process into
# where-references-WORD.txt), and per GPU from the lock log (locks-WORD.jsonl) how long its lock
# was held exclusively and how long a timing was waiting for it or holding it, and what the waits
# were for, and from the process log (processes-WORD.jsonl) each evaluator's most GPU memory
# allocated and what it held then).
# Further parts: `waits` (benchmarks/sync_waits.py: the CPU cost of spinning in CUDA's waits),
# `contexts` (benchmarks/cuda_contexts.py: CUDA contexts made alone and 16 at once) and `where`
# (py-spy, from the carried wheels, samples every process of a run of WHERE_EXECUTOR, default
# local1, and COPIES_WHERE copies into where.txt: collapsed stacks, one line per stack; native
# frames with WHERE_NATIVE=1, with which py-spy 0.4.3 crashed on a 4-GPU host).
set -uo pipefail
out=${1:-out}; mkdir -p "$out"; out=$(cd "$out" && pwd)
source benchmarks/device_setup.sh "$out/env.txt"
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
for part in ${PARTS:-scaling references}; do
  case $part in
    scaling)
      AGENTLOOP_CACHE_DIR=/tmp/agentloop-scaling python3 benchmarks/executor_scaling.py --copies "${COPIES:-14}" \
        --executors ${EXECUTORS:-local1 local local-one-process} ${NO_IR_STORE:+--no-ir-store} \
        ${NO_MEMCHECK:+--no-memcheck} ${THREADS:+--threads} ${FAILING:+--failing $FAILING} \
        ${MEMCHECK_START:+--memcheck-start $MEMCHECK_START} \
        --json "$out/scaling.json" > "$out/scaling.md" 2> "$out/scaling.log"
      tail -8 "$out/scaling.md" ;;
    references)
      for name in ${VISIBLE:-0 all}; do  # output files named by the word: a comma would not travel back
        visible=$name
        [ "$name" = all ] && visible=$(seq -s, 0 $((gpus - 1)))
        rm -rf /tmp/agentloop-references-cold ~/.triton/cache
        python3 benchmarks/storage_timeline.py --folder /tmp/agentloop-references-cold > "$out/storage-$name.tsv" &
        sampler=$!
        python3 benchmarks/process_use.py --json "$out/use-$name.json" > "$out/use-$name.log" &
        use=$!
        for _ in $(seq 150); do grep -q sampling "$out/use-$name.log" 2>/dev/null && break; sleep 0.2; done
        if [ -n "${WHERE_REFERENCES:-}" ]; then  # py-spy on the evaluator's process, once it is there
          ( for _ in $(seq 300); do evaluator=$(pgrep -f -n "agentloop eval --references") && break; sleep 0.2; done
            [ -n "$evaluator" ] && exec /tmp/site/bin/py-spy record --nonblocking -r 25 --format raw -p "$evaluator" \
              -o "$out/where-references-$name.txt" > "$out/where-references-$name.log" 2>&1 ) &
        fi
        start=$(date +%s.%N)
        rm -f "$out/locks-$name.jsonl" "$out/processes-$name.jsonl"
        CUDA_VISIBLE_DEVICES=$visible AGENTLOOP_CACHE_DIR=/tmp/agentloop-references-cold \
          AGENTLOOP_LOCK_LOG="$out/locks-$name.jsonl" AGENTLOOP_PROCESS_LOG="$out/processes-$name.jsonl" \
          ${REFERENCES_LIMIT:+timeout $REFERENCES_LIMIT} \
          python3 -m agentloop eval --references --json > "$out/references-$name.json" \
          2> >(while IFS= read -r line; do echo "${EPOCHREALTIME/,/.} $line"; done > "$out/references-$name.log")
        status=$?  # 124: stopped at REFERENCES_LIMIT seconds; the JSON then holds those scored by then
        sleep 0.5  # the log's last lines
        kill $sampler; wait $sampler
        kill -TERM $use; wait $use
        echo "eval --references on GPUs $visible, cold: $(python3 -c "import time; print(round(time.time() - $start, 1))") s, exit $status"
        python3 - "$out/references-$name.json" "$out/references-$name.log" "$start" "$out/storage-$name.tsv" \
          "$out/locks-$name.jsonl" "$out/processes-$name.jsonl" "$out/use-$name.json" <<'PY'
import collections, csv, json, re, sys, time
from pathlib import Path
from evaluator.loader import import_path
bench = import_path(Path("benchmarks/evaluator_throughput.py"), "evaluator_throughput")
text = open(sys.argv[1]).read()
results = json.loads(text) if text.strip() else []  # empty where the command failed before printing
scored = [float(line.split()[0]) - float(sys.argv[3]) for line in open(sys.argv[2]) if re.search(r"\(\d+ of \d+\)$", line)]
print("  seconds from the start to every 25th result:", [round(t, 1) for t in scored[24::25]])
gaps = [(b - a, a) for a, b in zip([0.0] + scored, scored)]
print("  longest time without a result: %.1f s from %.1f s" % max(gaps) if gaps else "  no result")
rows = list(csv.DictReader(open(sys.argv[4]), delimiter="\t"))
if rows:
    print("  storage: %.0f MB written to the disks, dirty pages up to %.0f MB, writeback up to %.0f MB, cache %.0f MB at the end"
          % (float(rows[-1]["written_mb"]), max(float(r["dirty_mb"]) for r in rows),
             max(float(r["writeback_mb"]) for r in rows), float(rows[-1]["folder_mb"])))
print("  scored:", len(results), "verdicts:", dict(collections.Counter(r["verdict"] for r in results)))
phases = collections.Counter()
for r in results:
    phases.update(r.get("phases") or {})
print("  phases per evaluation, means (s):", {k: round(v / max(1, len(results)), 2) for k, v in sorted(phases.items())})
by_kind = json.loads(Path(sys.argv[7]).read_text()) if Path(sys.argv[7]).exists() else None
if by_kind:
    busy = sum(by_kind["cpu_seconds"].values())
    print(f"  CPU seconds by kind of process per evaluation (all {busy:.0f} s, {busy / max(by_kind['seconds'], 1e-9):.1f} "
          f"CPUs busy on average):", {k: round(v / max(1, len(results)), 2) for k, v in by_kind["cpu_seconds"].items()})
holds = [json.loads(line) for line in open(sys.argv[5])] if Path(sys.argv[5]).exists() else []
wall = max((h["released"] for h in holds), default=float(sys.argv[3])) - float(sys.argv[3])
for gpu, use in bench.exclusive_by_gpu(holds).items():
    print(f"  {gpu}: held exclusively {use.held:.1f} s, a timing waiting or holding {use.pending:.1f} s "
          f"({use.pending / max(wall, 1e-9):.0%} of {wall:.1f} s), waiting with none holding {use.draining:.1f} s; "
          f"{use.asked_behind_another} of {use.holds} exclusive holds asked while another was waiting or holding")
by_what = collections.defaultdict(list)
for h in holds:
    if h["mode"] == "exclusive":
        by_what[h["what"]].append(h["released"] - h["got"])
for what, spans in sorted(by_what.items()):
    print(f"  exclusive {what!r}: {len(spans)} holds, {sum(spans):.1f} s, longest {max(spans):.2f} s")
timed = collections.Counter()  # what the timed calls alone make of those holds
for r in results:
    for label, stats in ((k, (r.get("performance") or {}).get(k)) for k in ("candidate", "eager", "compiled")):
        timed[label] += stats["median_ms"] * stats["reps"] / 1e3 if stats else 0.0
print("  timed calls (median x repetitions, summed): " + ", ".join(f"{k} {v:.1f} s" for k, v in timed.items() if v))
eager = sorted(((e["median_ms"] * e["reps"] / 1e3, r["task_id"], e["median_ms"], e["reps"]) for r in results
                for e in [(r.get("performance") or {}).get("eager")] if e), reverse=True)
print("  eager baselines' timed calls, longest: " + ", ".join(f"{t} {s:.1f} s ({m:.1f} ms x {n})" for s, t, m, n in eager[:12]))
for band, low, high in (("under 1 ms", 0, 1), ("1-10 ms", 1, 10), ("10-100 ms", 10, 100), ("0.1-1 s", 100, 1e3), ("over 1 s", 1e3, 1e9)):
    inside = [s for s, _, m, _ in eager if low <= m < high]
    print(f"  eager calls {band}: {len(inside)} tasks, {sum(inside):.1f} s timed")
for (kind, what), n, seconds in bench.drain_waits(holds, {})[:5]:
    print(f"  exclusive holds waited {seconds:.1f} s ({n} waits) for the last {what!r} hold in their way")
logged = [json.loads(line) for line in open(sys.argv[6])] if Path(sys.argv[6]).exists() else []
peaks = {}
for sample in (p for p in logged if p.get("stage") == "evaluator gpu memory"):
    if sample["allocated_mib"] >= peaks.get(sample["pid"], {"allocated_mib": -1})["allocated_mib"]:
        peaks[sample["pid"]] = sample
for pid, peak in sorted(peaks.items()):
    print(f"  evaluator {pid}: most GPU memory allocated when sampled {peak['allocated_mib']} MiB (reserved "
          f"{peak['reserved_mib']}, expected outputs kept {peak['expected_outputs_kept_mib']}, "
          f"{peak['in_flight']} evaluations in flight); torch's own peak {peak['peak_allocated_mib']} MiB")
PY
      done ;;
    waits)
      python3 benchmarks/sync_waits.py --others 0 7 --json "$out/waits.json" > "$out/waits.md" 2> "$out/waits.log"
      cat "$out/waits.md" ;;
    contexts)
      OMP_NUM_THREADS=1 python3 benchmarks/cuda_contexts.py --at-once 1 16 --json "$out/contexts.json" > "$out/contexts.md" 2> "$out/contexts.log"
      cat "$out/contexts.md" ;;
    where)
      AGENTLOOP_CACHE_DIR=/tmp/agentloop-scaling /tmp/site/bin/py-spy record --subprocesses ${WHERE_NATIVE:+--native} \
        -r 20 --format raw -o "$out/where.txt" -- python3 benchmarks/executor_scaling.py --copies "${COPIES_WHERE:-3}" \
        --executors "${WHERE_EXECUTOR:-local1}" > "$out/where.md" 2> "$out/where.log"
      tail -3 "$out/where.md"; wc -l "$out/where.txt" ;;
  esac
done
