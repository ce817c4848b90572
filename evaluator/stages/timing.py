"""The timing stage (on a GPU): the candidate's process timed on the rotating standard inputs and on
probe inputs it has never seen, every timed result checked again, then the speedup against the
eager baseline and the fraction of the roofline."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from evaluator import baseline, event_log, probes, protocol, roofline, wire
from evaluator.cases import timing_cases
from evaluator.contracts import dtype_name, identical, structure_problem
from evaluator.environment import device_key
from evaluator.references import CaseData
from evaluator.result import EvalResult, Performance, TimingStats, Verdict
from evaluator.sandbox import ChildGone
from evaluator.stage_failed import StageFailed
from evaluator.stages.context import Evaluation, phase
from evaluator.stages.share_loop import parsed
from evaluator.timing import stats

MAX_BASELINE_ERROR_CHARS = 2000
Timed = tuple[TimingStats, str, list[float]]  # statistics, how timed ("events" or "wall"), probe calls' ms


def time_candidate(ev: Evaluation, result: EvalResult) -> None:
    task = ev.task
    # per timing set, a kept copy of the output that passed on its inputs, or None
    earlier = [ev.passed_outputs.get(ev.feed.cases.index(case)) for case in timing_cases(task)]
    waited_before = ev.box.waited
    with phase(result, "timing"):
        sets = [ev.scorer.references.get(task, case) for case in timing_cases(task)]
        event_log.case_event(task.id, "timing_asked")
        candidate, method, probe_ms = time_with_second_look(
            lambda probe_sets: timed_once(ev, sets, earlier, probe_sets), ev.probing.result(),
            lambda: probe_sets(ev, ev.scorer.second_look_offsets))
        event_log.case_event(task.id, "timed_checked")
        perf = Performance(size="standard", dtype=dtype_name(task.primary_dtype), candidate=candidate,
                           timing_method=method, probe_ms=probe_ms)
        _against_baseline(ev, perf, result)
        _against_roofline(ev, perf, sets[0])
    # of the timing phase, the candidate's process waiting for the GPU lock (other candidates' timing)
    result.phases["timing_lock_wait"] = ev.box.waited - waited_before
    result.performance = perf


def time_with_second_look(timed_once: Callable[[list[CaseData]], Timed], first_probes: list[CaseData],
                          second_probes: Callable[[], list[CaseData]]) -> Timed:
    """The candidate's timing statistics, how it was timed (CUDA events, or wall time when it
    launched on streams of its own), and its probe calls' times. Where the probe calls look like
    a replay, the candidate is timed once more with probes on other new inputs: a replay is slow
    on every new input, while a call slowed by something else on the machine seldom is twice."""
    timed, method, probe_ms = timed_once(first_probes)
    replayed = probes.replay_reason(timed.median_ms, probe_ms)
    if not replayed:
        return timed, method, probe_ms
    second = second_probes()
    if not second:  # no other new inputs in the timing sets' configuration: the first look stands
        raise StageFailed(Verdict.CONTRACT_FAIL, replayed)
    timed, method, second_ms = timed_once(second)
    replayed_again = probes.replay_reason(timed.median_ms, second_ms)
    if replayed_again:
        raise StageFailed(Verdict.CONTRACT_FAIL, replayed_again + " (twice, on two draws of new inputs)")
    return timed, method, probe_ms + second_ms


def timed_once(ev: Evaluation, sets: list[CaseData], earlier: list[Any], probe_sets: list[CaseData]) -> Timed:
    box = ev.box
    box.send(protocol.encode(protocol.TimeCalls(sets=tuple(str(d.inputs_file) for d in sets),
                                                probes=tuple(str(d.inputs_file) for d in probe_sets),
                                                policy=ev.scorer.config.timing_policy)))
    message = parsed(box.recv())
    event_log.case_event(ev.task.id, "timed")
    if isinstance(message, protocol.Failed):
        verdict = message.verdict if message.verdict in {"RUNTIME_FAIL", "CONTRACT_FAIL"} else "RUNTIME_FAIL"
        raise StageFailed(Verdict(verdict), "while timing: " + message.reason, message.traceback or None,
                          out_of_gpu_memory=message.out_of_gpu_memory)
    if not isinstance(message, protocol.Timed):
        raise StageFailed(Verdict.CONTRACT_FAIL, "the candidate's process sent an unexpected message")
    check_timed_calls(ev, sets + probe_sets, message, earlier + [None] * len(probe_sets))
    if not message.samples_ms:
        raise StageFailed(Verdict.RUNTIME_FAIL, "timing produced no samples")
    if len(message.probe_ms) != len(probe_sets):
        raise StageFailed(Verdict.CONTRACT_FAIL, "the candidate's process reported no timing for the probe calls")
    return stats(list(message.samples_ms)), "wall" if message.side_stream else "events", list(message.probe_ms)


def check_timed_calls(ev: Evaluation, sets: list[CaseData], message: protocol.Timed, earlier: list[Any]) -> None:
    """Every timed call's result is right: bit for bit what passed before timing, or judged again."""
    if message.calls_without_launch:
        raise StageFailed(Verdict.CONTRACT_FAIL, "some timed calls launched no Triton kernel (results cached or "
                          "replayed across calls are not allowed)")
    if message.violations:
        ops = ", ".join(message.violations[:8])
        raise StageFailed(Verdict.CONTRACT_FAIL, f"timed calls ran PyTorch operators on the host ({ops})")
    for k, data in enumerate(sets):
        out = _timed_output(ev.box.scratch / f"timed_set{k}.pt")
        if earlier[k] is not None and identical(out, earlier[k]):
            continue
        problem = structure_problem(data.expected.lo, out)
        judgement = None if problem else ev.scorer.judge.judge(ev.task, data, [out])
        if problem or not judgement.passed:
            raise StageFailed(Verdict.CONTRACT_FAIL, "a timed call returned wrong results although calls of the "
                              "same configuration passed before timing (results cached, replayed or computed "
                              "ahead?): " + (problem or judgement.reason))


def _timed_output(path: Path) -> Any:
    try:
        payload = wire.load(path, "cpu")
    except wire.WireError as exc:
        raise StageFailed(Verdict.CONTRACT_FAIL, f"timed call results unreadable: {exc}") from None
    return payload.get("out") if isinstance(payload, dict) else None


def _against_baseline(ev: Evaluation, perf: Performance, result: EvalResult) -> None:
    """The eager (and compiled) baseline's figures; its failure is not the candidate's."""
    try:
        measured = ev.baseline if isinstance(ev.baseline, dict) else ev.baseline.result()
        event_log.case_event(ev.task.id, "baseline_in")
    except ChildGone as gone:
        perf.baseline_error = gone.reason[:MAX_BASELINE_ERROR_CHARS]
        result.out_of_gpu_memory = result.out_of_gpu_memory or gone.out_of_gpu_memory
        return
    perf.eager, perf.compiled = measured.get("eager"), measured.get("compiled")
    if perf.eager:
        perf.speedup = perf.eager.median_ms / perf.candidate.median_ms
    if perf.compiled:
        perf.speedup_vs_compiled = perf.compiled.median_ms / perf.candidate.median_ms


def _against_roofline(ev: Evaluation, perf: Performance, first_set: CaseData) -> None:
    task, median_ms = ev.task, perf.candidate.median_ms
    cost = task.cost(first_set.inputs)
    tf32 = bool(getattr(task.contract, "tf32", False))
    compute_dtype = task.compute_dtype or task.primary_dtype
    peaks = ev.scorer.calibrated_peaks()
    for name, value in roofline.figures(cost, peaks, compute_dtype, tf32, median_ms).items():
        setattr(perf, name, value)
    if roofline.impossible(perf.roofline_fraction):
        raise StageFailed(Verdict.CONTRACT_FAIL, (
            f"measured {median_ms:.4f} ms, below the physical floor of {perf.roofline_floor_ms:.4f} ms "
            f"for {cost.bytes / 1e6:.1f} MB and {cost.flops / 1e9:.2f} GFLOP on this GPU; a result faster than "
            "the hardware allows is rejected (work escaping the timer, or results computed ahead of time)"))


def probe_sets(ev: Evaluation, offsets: tuple[int, ...] | None = None) -> list[CaseData]:
    """The probe sets (built while the candidate runs its cases), or none where the task's
    configuration depends on the seed beyond the probes' period."""
    task, references = ev.task, ev.scorer.references
    first = references.get(task, timing_cases(task)[0])
    cases = probes.probe_cases(task, offsets or ev.scorer.probe_offsets)
    built = [references.get(task, case) for case in cases]
    return built if all(probes.same_configuration(p.inputs, first.inputs) for p in built) else []


def _baseline_keys(ev: Evaluation) -> dict[str, str]:
    scorer = ev.scorer
    return baseline.baseline_keys(ev.task, dtype_name(ev.task.primary_dtype), device_key(scorer.device),
                                  scorer.config.compile_baseline)


def cached_baseline(ev: Evaluation) -> dict[str, TimingStats] | None:
    return ev.scorer.baselines.find(_baseline_keys(ev))


def early_baseline(ev: Evaluation) -> baseline.EarlyBaseline:
    """The task's baseline, measured once its timing inputs are built."""
    scorer, feed, keys = ev.scorer, ev.feed, _baseline_keys(ev)
    indices = [feed.cases.index(case) for case in timing_cases(ev.task)]

    def inputs_ready() -> list[Path] | None:
        try:
            built = feed.ready()
        except BaseException:  # noqa: BLE001 - the evaluation reports it; the baseline waits to be cancelled
            return None
        return [feed.data[i].inputs_file for i in indices] if built > max(indices) else None

    def start(set_files: list[Path]):
        return scorer.baseline_server.measure(ev.task, set_files, scorer.config.timing_policy,
                                              scorer.config.compile_baseline)

    # kept as soon as measured: a candidate failing meanwhile leaves it for the task's next one
    return baseline.EarlyBaseline(inputs_ready, start, keep=lambda measured: scorer.baselines.keep(keys, measured))
