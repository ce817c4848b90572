"""The compile scout changes no verdict, whatever the candidate does in it; the board it leaves
markers on lets the candidate's process wait for a compile under way; it compiles every kernel
specialization once, for a GPU's target, on a machine without one. (That the candidate's process
then loads those kernels instead of compiling them needs a GPU: test_gpu.py.)"""

import dataclasses
import threading

import pytest

from evaluator.compile_markers import CompileMarkers, marker_name
from evaluator.evaluate import Evaluator, EvaluatorConfig
from tests.evaluator.test_gpu import gelu_candidate


@pytest.fixture(scope="module")
def scouted(tmp_path_factory):
    config = EvaluatorConfig(device="cpu", static_checks=False, compile_scout=True,
                             cache_dir=tmp_path_factory.mktemp("cache"))
    with Evaluator(config) as evaluator:
        # On the CPU there is no GPU target: give one, so the scout calls the candidate on meta
        # tensors (Triton's interpreter then refuses them, as a kernel's code may refuse them anywhere).
        evaluator.triton_target = {"backend": "cuda", "arch": 90, "warp_size": 32}
        yield evaluator


CANDIDATES = {
    "correct": "y = torch.empty_like(input)\nlaunch(input, y, approximate)\nreturn y",
    "wrong": "y = torch.empty_like(input)\nlaunch(input, y, 'tanh' if approximate == 'none' else 'none')\nreturn y",
    "crashes": "import os\nos._exit(3)",
    "raises on fp16": ("if input.dtype == torch.float16:\n    raise ValueError('no half')\n"
                       "y = torch.empty_like(input)\nlaunch(input, y, approximate)\nreturn y"),
}


@pytest.mark.parametrize("name", sorted(CANDIDATES))
def test_a_scouted_candidate_gets_the_verdict_it_gets_alone(scouted, evaluators, suite, name):
    source = gelu_candidate(CANDIDATES[name])
    task = suite["Activation/gelu"]
    with_scout, alone = scouted.evaluate(task, source), evaluators(static=False).evaluate(task, source)
    assert (with_scout.verdict, with_scout.stage, with_scout.reason) == (alone.verdict, alone.stage, alone.reason)
    assert [c.passed for c in with_scout.cases] == [c.passed for c in alone.cases]
    assert "scout" not in alone.phases
    if name == "correct":
        assert with_scout.correct and "scout" in with_scout.phases, with_scout.phases
        assert with_scout.phases["cpu_scout"] >= 0 and "cpu_scout" not in alone.phases


def test_the_board_names_a_specialization_the_same_way_for_every_process():
    class Info:
        module, name = "candidate", "gelu_kernel"

    assert marker_name(Info(), "key-a") == marker_name(Info(), "key-a")
    assert marker_name(Info(), "key-a") != marker_name(Info(), "key-b")
    other = Info()
    other.name = "other_kernel"
    assert marker_name(other, "key-a") != marker_name(Info(), "key-a")


def test_waiting_on_the_board_ends_when_the_scout_settles(tmp_path):
    board = CompileMarkers(tmp_path)
    assert board.wait("nothing", timeout=5) < 1, "no marker: no wait"
    board.claim("k")
    settler = threading.Timer(0.3, board.settle, args=("k",))
    settler.start()
    waited = board.wait("k", timeout=30)
    settler.join()
    assert 0.2 < waited < 10 and not list(tmp_path.iterdir())


def test_waiting_on_the_board_is_bounded(tmp_path):
    board = CompileMarkers(tmp_path)
    board.claim("stuck")
    assert 0.2 <= board.wait("stuck", timeout=0.2) < 5


SCOUTED = '''
import json
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

from evaluator.compile_markers import CompileMarkers
from evaluator.compile_scout import META, Scout


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, FACTOR: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * FACTOR, mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})], key=["n"])
@triton.jit
def tuned_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)


def entry(x, factor):
    y = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), FACTOR=factor, BLOCK=1024)
    tuned_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](y, y, x.numel())
    return float(y.sum())  # a value from a kernel's result: meta tensors have none, and the scout goes on


board = Path(sys.argv[1])
scout = Scout(2, CompileMarkers(board))
assert scout.install({"backend": "cuda", "arch": 90, "warp_size": 32})
for dtype, factor in ((torch.float32, 2), (torch.float16, 2), (torch.float32, 3), (torch.float32, 2)):
    try:
        entry(torch.empty(4096, dtype=dtype, device=META), factor)
    except Exception as exc:
        assert "meta" in str(exc).lower() or "item" in str(exc).lower() or "data" in str(exc).lower(), exc
compiled, failed = scout.finish()
print(json.dumps({"compiled": compiled, "failed": failed, "markers": len(list(board.iterdir())),
                  "cuda": torch.cuda.is_initialized()}))
'''


def test_the_scout_compiles_every_specialization_once_for_the_gpu_without_touching_it(tmp_path):
    """Real Triton compilation for an H100's target on a machine without a GPU: scale_kernel in
    three specializations (two dtypes, two factors; the fourth call repeats the first) and the
    autotuned kernel's two configs for each of the two dtypes it meets."""
    import json
    import os
    import subprocess
    import sys

    from evaluator.fork_server import PROJECT_ROOT

    script, cache, board = tmp_path / "scouted.py", tmp_path / "triton", tmp_path / "board"
    script.write_text(SCOUTED)
    board.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(TRITON_CACHE_DIR=str(cache), PYTHONPATH=str(PROJECT_ROOT), CUDA_VISIBLE_DEVICES="")
    done = subprocess.run([sys.executable, str(script), str(board)], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"compiled": 7, "failed": 0, "markers": 0, "cuda": False}, report
    cubins = list(cache.rglob("*.cubin"))
    assert len(cubins) == 7 and all(c.stat().st_size > 0 for c in cubins)


def test_clearing_the_board_settles_every_marker(tmp_path):
    board = CompileMarkers(tmp_path)
    for name in ("a", "b"):
        board.claim(name)
    board.clear()
    assert board.wait("a", timeout=30) < 1 and board.wait("b", timeout=30) < 1


def test_a_scout_that_dies_leaves_no_marker_to_wait_for(scouted, suite, tmp_path):
    """The candidate's other processes may still wait on kernels the scout claimed; a scout gone
    (crashed, or killed once the candidate's cases are done) must not keep them waiting."""
    import types

    from evaluator.case_feed import CaseFeed
    from evaluator.cases import plan
    from evaluator.sandbox import Reach, sandbox_folder
    from evaluator.stages import correctness, start
    from evaluator.stages.context import Evaluation

    task = suite["Activation/gelu"]
    ev = Evaluation(scouted, task, gelu_candidate(CANDIDATES["crashes"]), entry="gelu")
    ev.job = dataclasses.replace(start.job(ev), compile_markers=str(tmp_path), triton_target=scouted.triton_target)
    ev.reach = Reach(writable=(sandbox_folder(tmp_path),))
    CompileMarkers(tmp_path).claim("claimed before the scout died")
    ev.feed = CaseFeed(scouted.references, task, plan(task, False))
    try:
        correctness.run_scout(ev, threading.Event(), types.SimpleNamespace(phases={}))
    finally:
        ev.feed.close()
    assert list(tmp_path.iterdir()) == []
