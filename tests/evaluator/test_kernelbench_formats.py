"""KernelBench problems load as tasks and take ModelNew candidates; KernelBench-X candidate files
(code, a '#' separator, the benchmark's own test harness) evaluate unchanged."""

import re
from pathlib import Path

import pytest
import torch

from evaluator.kernelbench_formats import load_folder, load_problem, strip_kernelbenchx_harness

HERE = Path(__file__).parent / "kernelbench"


def test_a_folder_of_problems_loads_as_tasks():
    tasks = load_folder(HERE / "problems")
    assert sorted(tasks) == ["KernelBench/1_relu", "KernelBench/2_linear_gelu", "KernelBench/3_scaled_row_sum",
                             "KernelBench/4_scaled_add_cuda"]
    task = tasks["KernelBench/2_linear_gelu"]
    assert task.entry == "ModelNew.forward" and task.model_init.args == (64, 80)
    inputs = task.make_inputs(0, "standard", "standard", task.primary_dtype)
    assert tuple(inputs.args[0].shape) == (48, 64)
    assert tuple(task.reference(*inputs.args).shape) == (48, 80)


def test_small_and_edge_inputs_shrink_the_sizes_only_get_inputs_reads():
    tasks = load_folder(HERE / "problems")
    shape = {size: tuple(tasks["KernelBench/2_linear_gelu"].make_inputs(0, size, "standard", torch.float32).args[0].shape)
             for size in ("small", "edge", "standard")}
    # batch_size (48) is read by get_inputs alone; in_features (64) is the model's too, so it stays
    assert shape == {"small": (16, 64), "edge": (37, 64), "standard": (48, 64)}
    relu = tasks["KernelBench/1_relu"]  # batch_size 37, dim 301: distinct sizes stay distinct
    assert tuple(relu.make_inputs(0, "small", "standard", torch.float32).args[0].shape) == (15, 16)
    assert "Small and edge inputs shrink batch_size" in tasks["KernelBench/2_linear_gelu"].description


def test_sizes_that_only_work_together_keep_the_problems_own(tmp_path):
    (tmp_path / "flat.py").write_text(
        "import torch\nimport torch.nn as nn\n\nrows = 64\ncols = 32\n\n\n"
        "class Model(nn.Module):\n    def forward(self, x):\n        return x.view(rows, cols).sum(1)\n\n\n"
        "def get_inputs():\n    return [torch.randn(rows * cols)]\n\n\ndef get_init_inputs():\n    return []\n")
    task = load_problem(tmp_path / "flat.py")
    (x,) = task.make_inputs(0, "small", "standard", torch.float32).args
    assert tuple(x.shape) == (2048,)  # shrunk, forward's view fails: the problem's own size


def test_cuda_in_a_problem_file_means_the_evaluators_device():
    task = load_problem(HERE / "problems" / "4_scaled_add_cuda.py")
    (x,) = task.make_inputs(0, "small", "standard", torch.float32).args
    assert x.device.type == "cpu" and tuple(x.shape) == (16, 64)
    out = task.reference(x)
    assert out.device.type == "cpu" and torch.equal(out, (x + 1.0) * 0.5)


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
    (tmp_path / "broken.py").write_text((HERE / "problems" / "1_relu.py").read_text().replace(
        "return []", "return [undefined_size]"))
    with pytest.raises(ValueError, match=r"broken.py: get_init_inputs\(\) failed: NameError"):
        load_folder(tmp_path)
    (tmp_path / "broken.py").write_text("import torch\nraise RuntimeError('no GPU here')\n")
    with pytest.raises(ValueError, match="broken.py: the problem file failed to import: RuntimeError: no GPU here"):
        load_folder(tmp_path)


def test_files_that_are_no_problem_are_skipped_and_listed(tmp_path, capsys):
    (tmp_path / "1_relu.py").write_text((HERE / "problems" / "1_relu.py").read_text())
    (tmp_path / "helpers.py").write_text("SIZE = 3\n")
    (tmp_path / "run_all.py").write_text("import sys\n")
    skipped = []
    assert list(load_folder(tmp_path, skipped)) == ["KernelBench/1_relu"]
    assert [p.name for p in skipped] == ["helpers.py", "run_all.py"]
    load_folder(tmp_path)
    assert capsys.readouterr().err.count("skipped 2 files") == 1


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
