"""The CPU a compile scout spends on kernels it meets again, with the IR store answering
(evaluator/ir_store.py): the reference solutions' kernels compiled as the scout compiles them (meta
inputs, a GPU's target, no GPU), first as a first evaluation does (each kernel's IR recorded), then
each IR compiled alone as the store's child compiles it, then all again into a fresh cache with the
scout's stages answered from those compiles, as a later evaluation of the same kernels is. Reported:
each pass's CPU seconds (this process, where Triton's compiler runs, and ptxas, its children), how
many compiles were answered, and whether every cubin of the answered pass is the first pass's.

    python benchmarks/ir_store_reuse.py [--tasks id ...] [--arch 90] [--json out.json]

Runs without a GPU. Standard-size inputs are made small, as in benchmarks/launcher_signatures.py.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.launcher_signatures import call_on_meta, cpu_seconds  # noqa: E402

MODULES = itertools.count()


def spent(since: tuple[float, float]) -> dict[str, float]:
    now = cpu_seconds()
    return {"cpu_s": round(now[0] - since[0], 2), "ptxas_cpu_s": round(now[1] - since[1], 2)}


def compile_all(tasks: list, scout) -> None:
    """Every task's reference solution called on meta inputs, every compile waited for."""
    from evaluator.sandboxed.candidate_process import CANDIDATE_MODULE

    for task in tasks:
        call_on_meta(task, f"{CANDIDATE_MODULE}_reuse_{next(MODULES)}")
    for future in scout.compiles:
        future.exception()
    scout.compiles.clear()
    scout.seen.clear()


def cubins(cache: Path) -> dict[str, bytes]:
    return {f"{p.parent.name}/{p.name}": p.read_bytes() for p in cache.glob("*/*.cubin")}


def measure(task_ids: list[str] | None, arch: int) -> dict:
    os.environ.pop("TRITON_INTERPRET", None)
    first, second = Path(tempfile.mkdtemp(prefix="ir-first-")), Path(tempfile.mkdtemp(prefix="ir-second-"))
    os.environ["TRITON_CACHE_DIR"] = str(first)
    from triton import knobs

    from evaluator.compile_scout import Scout, StoredStages
    from evaluator.loader import load_suite
    from evaluator.sandboxed.ir_compile_process import compile_ir

    target = {"backend": "cuda", "arch": arch, "warp_size": 32}
    tasks = [t for i, t in sorted(load_suite().items()) if not task_ids or i in task_ids]
    asked: dict[str, tuple[str, dict]] = {}
    answers: dict[str, object] = {}
    scouting = [True]  # off while each IR is compiled alone here, as the store's child does it

    def ask(ir_text: str, options: dict):
        if not scouting[0]:
            return None
        key = json.dumps([ir_text, options], sort_keys=True)
        asked[key] = (ir_text, options)
        return answers.get(key)

    scout = Scout(2)
    if not scout.install(target) or not StoredStages(ask).install():
        raise SystemExit("this Triton has no compile hooks (knobs): nothing to measure")
    began = cpu_seconds()
    compile_all(tasks, scout)
    report = {"tasks": len(tasks), "first": spent(began), "irs": len(asked)}

    began, scouting[0] = cpu_seconds(), False
    for key, (ir_text, options) in list(asked.items()):
        try:
            answers[key] = compile_ir(ir_text, options, target, Path(tempfile.mkdtemp(prefix="ir-alone-")))
        except Exception as exc:  # noqa: BLE001 - an IR Triton cannot compile alone: said, left unanswered
            print(f"not compiled alone: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr)
    report["alone"] = {**spent(began), "compiled": len(answers)}

    scouting[0] = True
    knobs.cache.dir = str(second)
    os.environ["TRITON_CACHE_DIR"] = str(second)
    began = cpu_seconds()
    compile_all(tasks, scout)
    report["answered"] = spent(began)
    made, again = cubins(first), cubins(second)
    report["cubins"] = {"first": len(made), "answered_pass": len(again),
                        "same": sum(1 for name, data in again.items() if made.get(name) == data)}
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", nargs="*")
    parser.add_argument("--arch", type=int, default=90, help="the GPU target compiled for (90: H100/H200)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    report = measure(args.tasks, args.arch)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    first, alone, answered = report["first"], report["alone"], report["answered"]
    print(f"{report['tasks']} tasks, {report['irs']} kernel IRs: first compile {first['cpu_s']} CPU s + "
          f"{first['ptxas_cpu_s']} ptxas; each IR alone {alone['cpu_s']} + {alone['ptxas_cpu_s']} "
          f"({alone['compiled']} compiled); met again, answered {answered['cpu_s']} + {answered['ptxas_cpu_s']}; "
          f"cubins {report['cubins']['same']} of {report['cubins']['answered_pass']} the same as the first's")


if __name__ == "__main__":
    main()
