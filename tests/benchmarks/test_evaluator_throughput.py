"""The throughput benchmark's split over several evaluator processes (it runs on any machine)."""

import json
import subprocess
import sys
from pathlib import Path

from evaluator.loader import import_path

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "evaluator_throughput.py"


def test_tasks_split_over_evaluator_processes_are_each_scored_once(tmp_path):
    tasks = ["Reduce/sum", "Activation/gelu", "Math/softmax"]
    out = tmp_path / "throughput.json"
    run = subprocess.run([sys.executable, str(BENCHMARK), "--processes", "2", "--workers", "2", "--tasks", *tasks,
                          "--cache-root", str(tmp_path / "cache"), "--json", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads(out.read_text())["results"]
    assert [r["task_id"] for r in results] == tasks
    assert {r["verdict"] for r in results} == {"CORRECT"}
    assert "evaluator processes 2" in run.stdout


def test_the_lock_timeline_says_when_startup_ended_and_which_holds_held_everyone_up(tmp_path):
    bench = import_path(BENCHMARK, "evaluator_throughput")
    t0 = 1000.0
    (tmp_path / "processes.jsonl").write_text("\n".join(json.dumps(e) for e in [
        {"pid": 11, "kind": "candidate", "task": "a"}, {"pid": 12, "kind": "candidate", "task": "b"},
        {"pid": 21, "kind": "baseline", "task": "a"}]) + "\n")
    holds = [
        {"pid": 11, "mode": "shared", "what": "call", "asked": t0 + 9.6, "got": t0 + 9.7, "released": t0 + 9.8},
        {"pid": 11, "mode": "shared", "what": "call", "asked": t0 + 20.0, "got": t0 + 20.0, "released": t0 + 20.1},
        {"pid": 12, "mode": "shared", "what": "call", "asked": t0 + 10.9, "got": t0 + 11.0, "released": t0 + 11.1},
        {"pid": 21, "mode": "exclusive", "what": "baseline timing", "asked": t0 + 9.0, "got": t0 + 9.4,
         "released": t0 + 9.5},
        {"pid": 21, "mode": "exclusive", "what": "baseline timing", "asked": t0 + 12.0, "got": t0 + 17.9,
         "released": t0 + 18.0},
        {"pid": 99, "mode": "shared", "what": "judging", "asked": t0 + 12.8, "got": t0 + 12.9, "released": t0 + 16.16},
    ]
    log = tmp_path / "locks.jsonl"
    log.write_text("\n".join(json.dumps(h) for h in holds) + "\n")
    processes = bench.ProcessLog(tmp_path / "processes.jsonl").refresh()
    report = bench.lock_report(log, 30.0, processes, started=t0)
    assert "candidates' first calls asked for the lock at 9.6-10.9 s" in report
    assert "exclusive baseline timing (baseline, 2): held from 9.4 s to 18.0 s" in report
    first_long = next(line for line in report.splitlines() if line.startswith("long shared hold"))
    assert first_long == "long shared hold: judging (other) 3.26 s from 12.9 s"
    assert "long shared hold" not in bench.lock_report(log, 30.0, processes), "no start time, no timeline"
    # a timing was pending from 9.0 to 9.5 and from 12.0 to 18.0: 6.5 s of the 30
    assert "so that new shared holds queue, 6.5 s (22%)" in report
    # the second baseline timing asked at 12.0 and got the lock at 17.9: judging, the last in its way
    assert "| other | judging | 1 | 5.9 |" in report
    assert "| baseline | baseline timing |" not in report.split("What exclusive holds waited for")[1]


def test_covered_seconds_counts_overlapping_spans_once():
    bench = import_path(BENCHMARK, "evaluator_throughput")
    assert bench.covered_seconds([(0.0, 2.0), (1.0, 3.0), (5.0, 6.0), (5.5, 5.7)]) == 4.0
    assert bench.covered_seconds([]) == 0.0


def test_the_case_report_says_when_each_step_last_happened_and_how_long_judging_waited(tmp_path):
    bench = import_path(BENCHMARK, "evaluator_throughput")
    t0 = 1000.0
    events = [("a", "built", 0, {}), ("a", "sent", 0, {"to": "candidate"}), ("a", "sent", 0, {"to": "scout"}),
              ("a", "imported", None, {}), ("a", "run_in", 0, {"run": 0}), ("a", "run_in", 0, {"run": 1}),
              ("a", "judge_asked", None, {}), ("a", "judge_got", None, {}), ("a", "judged", 0, {}),
              ("a", "timing_asked", None, {}), ("a", "timed", None, {}), ("a", "timed_checked", None, {}),
              ("a", "baseline_in", None, {}), ("b", "imported", None, {})]
    times = [1.0, 2.0, 9.0, 3.0, 4.0, 5.0, 5.0, 6.5, 7.25, 7.5, 8.0, 8.5, 9.5, 2.0]
    log = tmp_path / "cases.jsonl"
    log.write_text("".join(json.dumps({"task": task, "event": event, "case": case, "t": t0 + t, **extra}) + "\n"
                           for (task, event, case, extra), t in zip(events, times)))
    rows = bench.case_report(log, started=t0).splitlines()
    assert rows[2] == "| b | 2.0 | nan | - | - | - | - | - | - | - | - | 0.00 | 0.00 |", "ordered by last event"
    assert rows[3] == "| a | 3.0 | 4.0 | 1.0 | 2.0 | 5.0 | 7.2 | 7.5 | 8.0 | 8.5 | 9.5 | 1.50 | 2.25 |", \
        "the scout's copy of a case is not the candidate's"


def test_exclusive_holds_are_summed_per_gpu():
    bench = import_path(BENCHMARK, "evaluator_throughput")
    holds = [
        {"gpu": "gpu-a", "mode": "exclusive", "asked": 0.0, "got": 1.0, "released": 2.0},
        {"gpu": "gpu-a", "mode": "exclusive", "asked": 1.5, "got": 2.0, "released": 4.0},
        {"gpu": "gpu-b", "mode": "exclusive", "asked": 0.0, "got": 0.0, "released": 0.5},
        {"gpu": "gpu-b", "mode": "shared", "asked": 0.0, "got": 0.0, "released": 9.0},
    ]
    use = bench.exclusive_by_gpu(holds)
    assert (use["gpu-a"].held, use["gpu-a"].pending) == (3.0, 4.0)
    assert (use["gpu-b"].held, use["gpu-b"].pending) == (0.5, 0.5)
    assert use["gpu-a"].draining == 1.0, "from 0 to 1 the first waited with none holding; the second asked during it"
    assert (use["gpu-a"].asked_behind_another, use["gpu-a"].holds) == (1, 2)
    assert (use["gpu-b"].draining, use["gpu-b"].asked_behind_another) == (0.0, 0)
