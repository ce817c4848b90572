"""Correct kernels in styles this project's own solutions do not use score CORRECT.

Each file under good/ names its task (`# task:`) or KernelBench problem (`# kernelbench:`, looked
up in kernelbench/problems/ and good/kernelbench_problems/) and its styles (`# style:`): autotuned,
block pointers, `kernel_function` entry points, `__main__` self-tests, scalar uploads, `ModelNew`
classes and more. A kernel that uses block pointers is skipped where the installed Triton's
interpreter no longer has them (Triton 3.9 removed them in favour of tensor descriptors).
"""

import re
from pathlib import Path

import pytest
import triton.language as tl

from evaluator.kernelbench_formats import load_problem
from evaluator.loader import find_task

HERE = Path(__file__).parent
CANDIDATES = sorted((HERE / "good").glob("*.py"))
PROBLEM_FOLDERS = (HERE / "kernelbench" / "problems", HERE / "good" / "kernelbench_problems")
HEADER = re.compile(r"^# ([a-z-]+): (.+)$", re.MULTILINE)


def header(path: Path) -> dict[str, str]:
    return dict(HEADER.findall(path.read_text()))


def task_of(path: Path, suite):
    spec = header(path)
    if "kernelbench" in spec:
        problem = next(f / f"{spec['kernelbench']}.py" for f in PROBLEM_FOLDERS if (f / f"{spec['kernelbench']}.py").exists())
        return load_problem(problem)
    return find_task(spec["task"], suite)


def _needs_missing_block_pointers(path: Path, device: str) -> bool:
    return device == "cpu" and "make_block_ptr" in path.read_text() and not hasattr(tl, "advance")


@pytest.mark.parametrize("path", CANDIDATES, ids=lambda p: p.stem)
def test_a_correct_kernel_in_any_style_is_correct(path, evaluators, suite):
    _check(path, evaluators(), suite, "cpu")


@pytest.mark.gpu
@pytest.mark.parametrize("path", CANDIDATES, ids=lambda p: p.stem)
def test_a_correct_kernel_in_any_style_is_correct_on_a_gpu(path, evaluators, suite):
    _check(path, evaluators(device="cuda", timing=False), suite, "cuda")


def _check(path, evaluator, suite, device):
    if _needs_missing_block_pointers(path, device):
        pytest.skip("this Triton's interpreter has no block pointers (removed in Triton 3.9)")
    result = evaluator.evaluate(task_of(path, suite), path.read_text())
    assert result.verdict.value == "CORRECT", f"{result.verdict.value}: {result.reason}\n{result.traceback or ''}"


def test_the_corpus_covers_every_style():
    styles = " ".join(header(p).get("style", "") for p in CANDIDATES).lower()
    assert len(CANDIDATES) >= 40
    for style in ("autotune", "block pointer", "kernel_function", "__main__", "scalar upload", "modelnew"):
        assert styles.count(style) >= 3 or sum(style in p.read_text().lower() for p in CANDIDATES) >= 3, style
