"""Which dtypes this Triton's interpreter computes correctly, and what a CPU result says about the
ones it does not (interpreter_probe.py)."""

import os

import pytest
import torch

from evaluator import interpreter_kernels, interpreter_probe
from evaluator.loader import find_task

pytestmark = pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1", reason="the CPU interpreter's probe")


def _relu_right(dtype) -> bool:
    x = torch.linspace(-3, 3, 64).to(dtype)
    y = torch.empty_like(x)
    try:
        interpreter_kernels.elementwise[(1,)](x, y, 64, OP=3, BLOCK=64)
    except Exception:  # an interpreter that cannot run the dtype (Triton 3.6 on bfloat16)
        return False
    return torch.equal(y, torch.clamp_min(x, 0))


@pytest.fixture(params=["fresh interpreter", "fork server"])
def probe_server(request):
    """None: the probe in a fresh interpreter; else a fork server of the interpreter's runs it."""
    if request.param == "fresh interpreter":
        yield None
        return
    from evaluator.fork_server import ForkServer
    server = ForkServer(interpret=True)
    yield server
    server.close()


def test_the_probe_says_what_a_kernel_run_here_shows_and_keeps_its_answer(tmp_path, probe_server):
    found = interpreter_probe.unreliable(tmp_path, probe_server)
    for name in interpreter_probe.DTYPES:
        if not _relu_right(getattr(torch, name)):
            assert "tl.maximum" in found.get(name, ""), (name, found)
    assert "float32" not in found
    kept = list((tmp_path / "interpreter").glob("probe-triton*.json"))
    assert len(kept) == 1
    kept[0].write_text('{"float16": "said by the kept answer"}')
    assert interpreter_probe.unreliable(tmp_path, probe_server) == {"float16": "said by the kept answer"}


def test_a_probe_that_does_not_finish_in_the_fork_server_says_so_and_keeps_nothing(tmp_path, monkeypatch):
    from evaluator.fork_server import ForkServer
    server = ForkServer(interpret=True)
    try:
        monkeypatch.setattr(interpreter_probe, "PROBE_SECONDS", 0)  # not waited for at all
        with pytest.raises(RuntimeError, match="the interpreter probe did not finish in 0 s"):
            interpreter_probe.unreliable(tmp_path, server)
    finally:
        server.close()
    assert not (tmp_path / "interpreter").exists(), "a failed probe keeps no answer"


def test_a_dtype_the_interpreter_gets_wrong_is_not_judged_and_the_result_says_so(cpu_evaluator, suite):
    relu = ("import torch\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n"
            "def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
            "    m = o < n\n    x = tl.load(x_ptr + o, mask=m)\n    tl.store(y_ptr + o, tl.maximum(x, 0.0), mask=m)\n\n\n"
            "def relu(input, inplace=False):\n    x = input.contiguous()\n    y = input if inplace else torch.empty_like(x)\n"
            "    k[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)\n    return y\n")
    task = find_task("Activation/relu", suite)
    result = cpu_evaluator.evaluate(task, relu)
    assert result.correct, result.reason
    judged = {case.dtype for case in result.cases}
    if "bfloat16" in cpu_evaluator.unjudgeable:  # Triton 3.9's interpreter
        assert "bfloat16" not in judged and "float32" in judged
        assert "bfloat16" in result.unchecked and "not checked: " in result.reason
    else:
        assert "bfloat16" in judged and result.unchecked is None


def test_an_operation_the_interpreter_cannot_run_counts_as_computed_wrongly_and_says_why():
    # Triton 3.6's interpreter raises on bfloat16 constants; complex64 makes this one raise too
    assert interpreter_probe._failure("x * 0.5", torch.float32) == ""
    failed = interpreter_probe._failure("x * 0.5", torch.complex64)
    assert failed.startswith("x * 0.5 fails: ") and "complex64" in failed
