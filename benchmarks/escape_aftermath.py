"""An honest candidate's verdict and speedup before and after each escape attempt under
tests/evaluator/escapes/ (static checks off), on one evaluator: what an attack changed for the
candidates after it.

    python benchmarks/escape_aftermath.py [--device cuda:0] [--task Activation/gelu] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ESCAPES = ROOT / "tests" / "evaluator" / "escapes"


def targets(name: str, evaluator, cache: Path, honest: str, sibling: int) -> dict:
    """What each escape attacks, as it would know it."""
    return {
        "read_environ": {"evaluator_pid": os.getpid(), "secret_name": "AGENTLOOP_BENCH_API_KEY", "secret_address": 0},
        "rewrite_files": {"baselines": str(cache / "baselines.json"), "calibration": str(cache / "calibration.json"),
                          "store": str(cache / "traces.sqlite"), "project_file": str(ROOT / "evaluator" / "contracts.py"),
                          "inputs": str(evaluator.work_dir)},
        "daemon": {"token": "al-bench-daemon", "honest": honest},
        "join_network": {"port": 9, "evaluator_pid": os.getpid()},
        "signal_processes": {"evaluator": os.getpid(), "fork_server": evaluator.server._proc.pid, "sibling": sibling},
    }[name]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--task", default="Activation/gelu")
    parser.add_argument("--json")
    args = parser.parse_args()
    from evaluator.evaluate import Evaluator, EvaluatorConfig
    from evaluator.loader import find_task, load_suite

    task = find_task(args.task, load_suite())
    honest = task.solution_path.read_text()
    cache = Path(tempfile.mkdtemp(prefix="escape-aftermath-"))
    sibling = subprocess.Popen(["sleep", "600"])
    rows = []
    try:
        with Evaluator(EvaluatorConfig(device=args.device, static_checks=False, cache_dir=cache)) as evaluator:
            clean = evaluator.evaluate(task, honest)
            rows.append({"after": "nothing (clean run)", "verdict": clean.verdict.value, "speedup": clean.speedup,
                         "isolation": clean.environment.isolation})
            for path in sorted(ESCAPES.glob("*.py")):
                source = path.read_text().replace("__TARGETS__", json.dumps(
                    targets(path.stem, evaluator, cache, honest, sibling.pid)))
                attack = evaluator.evaluate(task, source)
                after = evaluator.evaluate(task, honest)
                rows.append({"after": path.stem, "attack": f"{attack.verdict.value}: {attack.reason[:120]}",
                             "verdict": after.verdict.value, "speedup": after.speedup,
                             "isolation": after.environment.isolation})
        rows.append({"sibling alive": sibling.poll() is None})
    finally:
        sibling.send_signal(signal.SIGKILL)
        sibling.wait()
    text = json.dumps(rows, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text)


if __name__ == "__main__":
    main()
