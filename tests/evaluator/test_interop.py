"""KernelBench problems load as tasks and take ModelNew candidates; KernelBench-X candidate files
(code, a '#' separator, the benchmark's own test harness) evaluate unchanged."""

import re
from pathlib import Path

import pytest

from evaluator.interop import load_folder, load_problem, strip_kernelbenchx_harness

HERE = Path(__file__).parent / "kernelbench"


def test_a_folder_of_problems_loads_as_tasks():
    tasks = load_folder(HERE / "problems")
    assert sorted(tasks) == ["KernelBench/1_relu", "KernelBench/2_linear_gelu", "KernelBench/3_scaled_row_sum"]
    task = tasks["KernelBench/2_linear_gelu"]
    assert task.entry == "ModelNew.forward" and task.model_init.args == (64, 80)
    inputs = task.make_inputs(0, "small", "standard", task.primary_dtype)
    assert tuple(inputs.args[0].shape) == (48, 64)
    assert tuple(task.reference(*inputs.args).shape) == (48, 80)


@pytest.mark.parametrize("candidate", sorted((HERE / "candidates").glob("*.py")), ids=lambda p: p.stem)
def test_modelnew_candidates_get_their_verdicts(candidate, cpu_evaluator):
    source = candidate.read_text()
    expect = re.search(r"^# expect: (\w+)", source, re.MULTILINE).group(1)
    named = re.search(r"^# problem: (\w+)", source, re.MULTILINE)
    task = load_problem(HERE / "problems" / f"{named.group(1) if named else candidate.stem}.py")
    result = cpu_evaluator.evaluate(task, source)
    assert result.verdict.value == expect, f"{result.reason}\n{result.traceback or ''}"
    if expect == "CONTRACT_FAIL":
        assert "aten.addmm" in result.reason or "aten.linear" in result.reason or "aten.mm" in result.reason


def test_bad_problem_files_get_clear_errors(tmp_path):
    (tmp_path / "broken.py").write_text("import torch\nclass Model(torch.nn.Module):\n    pass\n")
    with pytest.raises(ValueError, match="get_inputs is missing"):
        load_folder(tmp_path)
    with pytest.raises(ValueError, match="not a folder"):
        load_folder(tmp_path / "nowhere")


HARNESS = '''
##################################################################################################################################################


import torch
import sys
import os
sys.path.append(os.path.abspath("utils"))

def test_gelu():
    results = {}
    x = torch.randn(1024, device="cuda")
    results["test_case_1"] = gelu(x)
    return results

test_results = test_gelu()
'''


def test_kernelbenchx_candidate_files_run_unchanged(suite, cpu_evaluator):
    task = suite["Activation/gelu"]
    solution = task.solution_path.read_text()
    kbx_file = solution + HARNESS
    assert strip_kernelbenchx_harness(kbx_file).strip() == solution.strip()
    assert cpu_evaluator.evaluate(task, kbx_file).verdict.value == "CORRECT"
    banner = solution + "\n" + "#" * 60 + "\n# more of the candidate's own code\nHELPER = 1\n"
    assert strip_kernelbenchx_harness(banner) == banner, "a banner comment is not a harness"
