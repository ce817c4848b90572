"""Large cases are judged beside their share's loop (on a GPU, their judgements wait for a turn):
the verdict, reason and judged cases are those of judging every case in turn."""

import threading
import time

import pytest

from evaluator.evaluate import Evaluator, EvaluatorConfig
from tests.evaluator.test_case_partition import candidate, summary, whole  # noqa: F401 - whole: a fixture


@pytest.fixture
def apart(tmp_path):
    """Seed-0 cases judged apart, each judgement held back 0.3 s: cases after them, judged in turn,
    finish first."""
    config = EvaluatorConfig(device="cpu", static_checks=False, skip_unjudgeable=False, cache_dir=tmp_path / "cache")
    with Evaluator(config) as evaluator:
        judge_case = evaluator.judge.judge_case
        judged_apart = []

        def slow(task, case, data, runs):
            if threading.current_thread().name.startswith("judge"):
                judged_apart.append(case)
                time.sleep(0.3)
            return judge_case(task, case, data, runs)

        evaluator.judge.judged_apart = lambda case, data: case.seed == 0
        evaluator.judge.judge_case = slow
        evaluator.judged_apart = judged_apart
        yield evaluator


@pytest.mark.parametrize("behaviour, verdict, judged", [
    ("wrong = False", "CORRECT", 24),
    ("wrong = x.dtype == torch.bfloat16", "INCORRECT", 9),
    ("wrong = x.dtype == torch.bfloat16 and CALLS[input.dtype] > 2", "INCORRECT", 10),
    ("if x.dtype == torch.float16 and CALLS[input.dtype] > 2: os.kill(os.getpid(), signal.SIGSEGV)",
     "RUNTIME_FAIL", 5),
    ("wrong = x.dtype == torch.float16 and CALLS[input.dtype] <= 2\n"
     "if x.dtype == torch.float16 and CALLS[input.dtype] > 2: os.kill(os.getpid(), signal.SIGSEGV)",
     "INCORRECT", 5),
], ids=["correct", "wrong-bf16-from-its-first-case", "wrong-bf16-from-its-second-case",
        "crash-after-a-passing-case-judged-apart", "crash-after-a-failing-case-judged-apart"])
def test_judging_apart_reaches_the_verdict_of_judging_in_turn(whole, apart, suite, behaviour, verdict, judged):
    task, source = suite["Activation/gelu"], candidate(behaviour)
    together, beside = whole.evaluate(task, source), apart.evaluate(task, source)
    assert apart.judged_apart, "no case was judged apart"
    assert summary(beside) == summary(together)
    assert beside.verdict.value == verdict and len(beside.cases) == judged, beside.reason


def test_a_failure_judged_apart_wins_over_a_later_one_found_first(apart, suite):
    """Every case is wrong. The first (seed 0) is judged apart and held back; the second, judged in
    turn, fails first. The verdict is still about the first."""
    result = apart.evaluate(suite["Activation/gelu"], candidate("wrong = True"))
    assert result.verdict.value == "INCORRECT" and result.stage.value == "call", result.reason
    assert len(result.cases) == 1 and result.cases[0].seed == 0
