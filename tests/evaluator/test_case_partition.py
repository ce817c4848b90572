"""A candidate's cases split by dtype over several processes reach the verdict one process would:
the same verdict, reason, stage and judged cases; a failure in one share stops the others."""


import pytest
import torch

from evaluator.case_partition import Share, merged, split_by_dtype
from evaluator.cases import Case, plan
from evaluator.evaluate import Evaluator, EvaluatorConfig
from evaluator.result import CaseResult
from evaluator.sandbox import Limits
from tests.evaluator.test_gpu import GELU_KERNEL


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    # step limits past pytest's 900 s timeout: a share that were waited for, not stopped, fails the test
    limits = Limits(step_seconds=3600, total_seconds=7200, memory_bytes=6 << 30)
    config = EvaluatorConfig(device="cpu", static_checks=False, candidate_processes=3, limits=limits,
                             skip_unjudgeable=False, cache_dir=tmp_path_factory.mktemp("cache"))
    with Evaluator(config) as evaluator:
        yield evaluator


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    config = EvaluatorConfig(device="cpu", static_checks=False, skip_unjudgeable=False,
                             cache_dir=tmp_path_factory.mktemp("cache"))
    with Evaluator(config) as evaluator:
        yield evaluator


def test_shares_follow_dtypes_and_the_first_holds_stage_one(suite):
    cases = plan(suite["Activation/gelu"], on_gpu=True)
    shares = split_by_dtype(cases, 3)
    assert [len(s) for s in shares] == [10, 8, 8] and shares[0][0] == 0
    assert all(len({cases[i].dtype for i in share}) == 1 for share in shares)
    assert sorted(i for share in shares for i in share) == list(range(len(cases)))
    two = split_by_dtype(cases, 2)
    assert {cases[i].dtype for i in two[1]} == {torch.float16, torch.bfloat16}
    assert split_by_dtype(cases, 1) == [list(range(len(cases)))]
    single = [Case("small", torch.float32, "standard", seed) for seed in range(4)]
    assert split_by_dtype(single, 3) == [[0, 1, 2, 3]], "one dtype: its specializations are compiled once"


def test_the_earliest_failure_in_plan_order_wins_and_later_cases_are_dropped():
    def result(index):
        return CaseResult(size="small", dtype="float32", mode="standard", seed=index, passed=True, reason="")

    first, second = Share([0, 1, 4]), Share([2, 3, 5])
    first.judged = {0: result(0), 1: result(1), 4: result(4)}
    first.failure, first.failed_at = ValueError("at 4"), 4
    second.judged = {2: result(2), 3: result(3)}
    second.failure, second.failed_at = ValueError("at 3"), 3
    cases, failed = merged([first, second])
    assert failed is second and [c.seed for c in cases] == [0, 1, 2, 3]
    first.failed_at = -1  # an import failure comes before every case
    assert merged([first, second]) == ([], first)


GELU = "import os\nimport signal\nimport time\n" + GELU_KERNEL + '''

CALLS = {}  # per dtype: each dtype's 4 standard-mode cases (8 calls) come before its outlier cases


def gelu(input, approximate="none"):
    CALLS[input.dtype] = CALLS.get(input.dtype, 0) + 1
    outlier_mode = CALLS[input.dtype] > 8
    x = input.contiguous()
    y = torch.empty_like(x)
    wrong = False
    BEHAVIOUR
    launch(x, y, approximate)
    if wrong:
        launch(y, y, approximate)  # gelu(gelu(x))
    return y
'''


def candidate(behaviour: str) -> str:
    return GELU.replace("BEHAVIOUR", behaviour.replace("\n", "\n    "))


def summary(result):
    return (result.verdict, result.stage, result.reason,
            [(c.size, c.dtype, c.mode, c.seed, c.passed) for c in result.cases])


@pytest.mark.parametrize("behaviour, verdict, judged", [
    ("wrong = False", "CORRECT", 24),
    ("wrong = x.dtype == torch.bfloat16", "INCORRECT", 9),
    ("wrong = x.dtype == torch.bfloat16\n"
     "if x.dtype == torch.float16: os.kill(os.getpid(), signal.SIGSEGV)", "RUNTIME_FAIL", 4),
    ("wrong = x.dtype == torch.bfloat16\n"
     "if x.dtype == torch.float16 and outlier_mode: os.kill(os.getpid(), signal.SIGSEGV)", "INCORRECT", 9),
    ("wrong = x.dtype == torch.float32 and outlier_mode", "OUTLIER_FAIL", 13),
], ids=["correct", "wrong-bf16", "crash-fp16-before-wrong-bf16", "wrong-bf16-before-crash-fp16-outliers",
        "wrong-fp32-outliers-after-other-dtypes-pass"])
def test_split_evaluation_reaches_the_single_process_verdict(split, whole, suite, behaviour, verdict, judged):
    """Plan order: fp32, fp16, bf16 standard-mode cases (4 each), then their outlier cases."""
    task, source = suite["Activation/gelu"], candidate(behaviour)
    apart, together = split.evaluate(task, source), whole.evaluate(task, source)
    assert summary(apart) == summary(together)
    assert apart.verdict.value == verdict and len(apart.cases) == judged, apart.reason
    if apart.correct:
        assert apart.kernels and apart.kernels[0].name == "gelu_kernel"


def test_a_failure_stops_the_other_shares(split, suite):
    """fp32's first case fails; fp16 and bf16 would sleep past the step limit and pytest's timeout."""
    source = candidate("wrong = True\nif x.dtype != torch.float32: time.sleep(3600)")
    result = split.evaluate(suite["Activation/gelu"], source)
    assert result.verdict.value == "INCORRECT" and result.stage.value == "call", result.reason
    assert len(result.cases) == 1


def test_a_candidate_is_split_only_while_few_evaluations_are_in_flight(whole, monkeypatch):
    assert whole.candidate_processes() == 1, "the interpreter compiles nothing: one process"
    monkeypatch.setattr(whole, "on_gpu", True)
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    monkeypatch.setattr(whole, "_in_flight", 2)
    assert whole.candidate_processes() == 3
    monkeypatch.setattr(whole, "_in_flight", 15)
    assert whole.candidate_processes() == 1, "a loaded GPU: more processes would only time-slice it"


def test_an_evaluator_counts_on_its_gpus_share_of_the_machines_cores(whole, monkeypatch):
    """64 cores and four GPUs, an evaluator per GPU: 16 cores each, so 8 evaluations in flight on one
    GPU are too many to split (with all 64 they would not be)."""
    monkeypatch.setattr(whole, "on_gpu", True)
    monkeypatch.setattr("os.cpu_count", lambda: 64)
    monkeypatch.setattr(whole, "machine_gpus", 4)
    monkeypatch.setattr(whole, "_in_flight", 8)
    assert whole.cores() == 16
    assert whole.candidate_processes() == 1
    monkeypatch.setattr(whole.config, "cores", 64)
    assert whole.cores() == 64 and whole.candidate_processes() == 3
