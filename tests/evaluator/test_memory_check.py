"""The out-of-bounds check is on by default, says how it ran, and --no-memcheck really skips it.
(The candidates it rejects are under verdicts/memory_fail_*.py.)"""

from pathlib import Path

import pytest

from evaluator.loader import find_task

VERDICTS = Path(__file__).parent / "verdicts"


@pytest.fixture(scope="module")
def gelu(suite):
    return find_task("Activation/gelu", suite)


def test_a_correct_kernel_passes_the_check_and_the_result_says_which_ran(evaluators, gelu):
    result = evaluators().evaluate(gelu, gelu.solution_path.read_text())
    assert result.correct and result.memory_check == "interpreter"


def test_without_the_check_an_unsafe_kernel_is_scored_on_its_numbers_and_the_result_says_so(evaluators, gelu):
    unsafe = (VERDICTS / "memory_fail_off_by_one.py").read_text()
    assert evaluators().evaluate(gelu, unsafe).verdict.value == "MEMORY_FAIL"
    result = evaluators(memcheck=False).evaluate(gelu, unsafe)
    assert result.correct and result.memory_check == "off", result.reason


@pytest.mark.gpu
def test_on_a_gpu_memcheck_runs_for_a_correct_kernel_and_can_be_skipped(evaluators, gelu):
    checked = evaluators(device="cuda", timing=False).evaluate(gelu, gelu.solution_path.read_text())
    assert checked.correct and checked.memory_check == "memcheck" and checked.phases["memcheck"] > 0
    unsafe = (VERDICTS / "memory_fail_off_by_one.py").read_text()
    skipped = evaluators(device="cuda", timing=False, memcheck=False).evaluate(gelu, unsafe)
    assert skipped.correct and skipped.memory_check == "off" and "memcheck" not in skipped.phases


@pytest.mark.gpu
@pytest.mark.parametrize("start", ["spawn", "first_pass"])
def test_on_a_gpu_an_unsafe_kernel_passing_its_cases_is_caught_whenever_the_check_starts(evaluators, gelu, start):
    unsafe = (VERDICTS / "memory_fail_off_by_one.py").read_text()
    caught = evaluators(device="cuda", timing=False, memcheck_start=start).evaluate(gelu, unsafe)
    assert caught.verdict.value == "MEMORY_FAIL", caught.reason
    safe = evaluators(device="cuda", timing=False, memcheck_start=start).evaluate(gelu, gelu.solution_path.read_text())
    assert safe.correct and safe.memory_check == "memcheck", safe.reason
