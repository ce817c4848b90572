"""The stage runner: stages in order, the first failure ends the evaluation, the stage set once."""

import types

import pytest

from evaluator.environment import environment
from evaluator.evaluate import STEPS, Step, run_stages
from evaluator.result import EvalResult, Stage, Verdict
from evaluator.sandbox import ChildGone
from evaluator.stage_failed import StageFailed


def _result() -> EvalResult:
    return EvalResult(task_id="Activation/relu", verdict=Verdict.CORRECT, stage=Stage.STATIC, reason="",
                      source_hash="0" * 64, environment=environment("cpu", 0))


def _step(stage, calls, failure=None, wanted=True):
    def run(evaluation, result):
        calls.append(stage)
        if failure is not None:
            raise failure
    return Step(stage, run, lambda evaluation: wanted)


def test_every_wanted_stage_runs_in_order_and_a_pass_ends_done():
    calls = []
    steps = (_step(Stage.STATIC, calls), _step(Stage.IMPORT, calls), _step(Stage.TIMING, calls, wanted=False),
             _step(Stage.MEMCHECK, calls))
    result = _result()
    run_stages(types.SimpleNamespace(), result, steps)
    assert calls == [Stage.STATIC, Stage.IMPORT, Stage.MEMCHECK]
    assert (result.verdict, result.stage, result.reason) == (Verdict.CORRECT, Stage.DONE, "all 0 cases passed")


def test_the_first_failure_ends_the_evaluation_with_its_verdict_at_its_stage():
    calls = []
    long_reason = "x" * 5000
    steps = (_step(Stage.STATIC, calls), _step(Stage.CALL, calls, StageFailed(Verdict.INCORRECT, long_reason, "tb")),
             _step(Stage.TIMING, calls))
    result = _result()
    run_stages(types.SimpleNamespace(), result, steps)
    assert calls == [Stage.STATIC, Stage.CALL]
    assert (result.verdict, result.stage, result.traceback) == (Verdict.INCORRECT, Stage.CALL, "tb")
    assert 0 < len(result.reason) < len(long_reason)


def test_a_failure_seen_late_keeps_the_stage_it_belongs_to():
    failure = StageFailed(Verdict.COMPILE_FAIL, "importing the module failed", stage=Stage.IMPORT)
    result = _result()
    run_stages(types.SimpleNamespace(), result, (_step(Stage.CALL, [], failure),))
    assert (result.verdict, result.stage) == (Verdict.COMPILE_FAIL, Stage.IMPORT)


def test_a_process_gone_is_a_verdict_with_its_output_as_traceback():
    gone = ChildGone(Verdict.TIMEOUT, "exceeded the wall-clock limit", "last line of output", out_of_gpu_memory=True)
    result = _result()
    run_stages(types.SimpleNamespace(), result, (_step(Stage.TIMING, [], gone),))
    assert (result.verdict, result.stage, result.traceback) == (Verdict.TIMEOUT, Stage.TIMING, "last line of output")
    assert result.out_of_gpu_memory


def test_the_evaluators_own_errors_are_not_verdicts():
    with pytest.raises(KeyError):
        run_stages(types.SimpleNamespace(), _result(), (_step(Stage.STATIC, [], KeyError("a bug")),))


def test_the_pipeline_reads_in_order():
    assert [step.run.__name__ for step in STEPS] == ["static", "start", "correctness", "time_candidate", "memcheck",
                                                     "profile"]
