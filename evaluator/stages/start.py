"""The start stage: the cases planned and their building begun, the task's baseline found or asked
for, and the candidate's sandboxed process (and on a GPU its memcheck process) started."""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from pathlib import Path
from evaluator.case_feed import CaseFeed
from evaluator.cases import Case, plan
from evaluator.contracts import dtype_name
from evaluator.protocol import Job
from evaluator.result import EvalResult
from evaluator.sandbox import Reach, Sandbox, sandbox_folder, scratch_root
from evaluator.sandboxed.guards import COPY_OPS
from evaluator.stages import memcheck, timing
from evaluator.stages.context import Evaluation, phase


def start(ev: Evaluation, result: EvalResult) -> None:
    scorer = ev.scorer
    ev.job = job(ev)
    ev.feed = CaseFeed(scorer.references, ev.task, planned_cases(ev, result))
    ev.held.callback(_close_feed, ev.feed, result)
    shared = sandbox_folder(Path(tempfile.mkdtemp(prefix="al-eval-", dir=scratch_root())))
    ev.held.callback(shutil.rmtree, shared, ignore_errors=True)
    if scorer.ir_compiler is not None:  # the evaluator writes here, the evaluation's processes only read
        ev.ir_answers = Path(tempfile.mkdtemp(prefix="al-ir-", dir=scratch_root()))
        ev.ir_answers.chmod(0o755)
        ev.held.callback(shutil.rmtree, ev.ir_answers, ignore_errors=True)
    ev.reach = Reach(writable=(shared,), readable=tuple(p for p in (scorer.work_dir, scorer.lock_dir, ev.ir_answers) if p),
                     gpu=scorer.on_gpu, gpu_node=scorer.gpu_node, triton_cache=sandbox_folder(shared / "triton"))
    if scorer.scouting():
        ev.job = dataclasses.replace(ev.job, compile_markers=str(sandbox_folder(shared / "compile-markers")),
                                     triton_target=scorer.triton_target, ir_store=ev.ir_answers is not None)
    if ev.timed:
        ev.baseline = timing.cached_baseline(ev) or timing.early_baseline(ev)
        ev.probing = scorer.probe_builder.submit(timing.probe_sets, ev)
        ev.held.callback(ev.probing.cancel)
        if not isinstance(ev.baseline, dict):
            ev.held.callback(ev.baseline.cancel)
    with phase(result, "spawn"):
        ev.box = ev.held.enter_context(ev.own(Sandbox(scorer.server, "candidate", ev.job, {"candidate.py": ev.source},
                                                      scorer.limits, ev.reach)))
        if scorer.config.memcheck_start == "spawn":
            memcheck.ensure_checker(ev)


def job(ev: Evaluation) -> Job:
    """What a candidate's process (or its scout) is told about its task."""
    scorer, task = ev.scorer, ev.task
    return Job(task=task.id, entry=ev.entry, device=str(scorer.device), mutates=tuple(task.mutates),
               allowed_aten=tuple(sorted({op for a in task.allowed for op in a.aten})),
               check_memory=scorer.config.memcheck,
               denied_aten=() if task.host_copies else tuple(sorted(COPY_OPS)),
               lock_dir=str(scorer.lock_dir) if scorer.lock_dir else None,
               gpu_memory_fraction=scorer.config.gpu_memory_fraction if scorer.on_gpu else None,
               model_init=str(scorer.references.model_init_file(task)) if task.model_init else None)


def planned_cases(ev: Evaluation, result: EvalResult) -> list[Case]:
    """The task's cases, less those of dtypes this interpreter cannot judge (said in the result);
    all of them where that would leave none."""
    cases = plan(ev.task, ev.scorer.on_gpu)
    unjudgeable = ev.scorer.unjudgeable
    skipped = sorted({dtype_name(c.dtype) for c in cases} & unjudgeable.keys())
    kept = [c for c in cases if dtype_name(c.dtype) not in skipped]
    if not skipped or not kept:
        return cases
    result.unchecked = "; ".join(unjudgeable[name] for name in skipped)
    return kept


def _close_feed(feed: CaseFeed, result: EvalResult) -> None:
    feed.close()
    result.phases["references"] = feed.seconds
    result.phases["references_lock_wait"] = feed.lock_waited
    result.phases["references_slot_wait"] = feed.slot_waited
