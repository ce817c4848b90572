"""On a CUDA GPU: the candidate's process and its memory check sleep in their waits for the GPU, and
the candidate spins while it is timed, as the eager baseline does (evaluator/cuda_waits.py)."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.evaluator.test_gpu import gelu_candidate, gelu_task, gpu_unchecked  # noqa: F401 - fixtures

pytestmark = pytest.mark.gpu

# What the candidate's context does in its waits, checked inside each call after its launch (the
# call then holds the GPU lock, shared, or exclusively while it is timed: a second shared hold
# taken without waiting tells the two apart).
WAITS_CHECKED = '''
import ctypes
import fcntl
import json
import os

_CUDA = ctypes.CDLL("libcuda.so.1")
_LOCK = os.path.join(json.load(open("job.json"))["lock_dir"], "gpu.lock")


def _timed_now():
    fd = os.open(_LOCK, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


_OUTSIDE_TIMING = 0x04  # blocking synchronization, as the evaluator sets it


def _check_waits():
    flags = ctypes.c_uint()
    assert _CUDA.cuCtxGetFlags(ctypes.byref(flags)) == 0
    expected = 0x01 if _timed_now() else _OUTSIDE_TIMING
    if flags.value & 0x07 != expected:
        raise RuntimeError(f"the context waits by {flags.value & 0x07:#x}, not {expected:#x}")
'''


def evaluated_checking_its_waits(evaluator, task, header: str):
    """The gelu candidate that checks its context's waits in every call, evaluated: correct and timed."""
    from evaluator import cuda_waits

    if not cuda_waits.can_switch():
        pytest.skip("this driver cannot switch a live context's waits (cuCtxSetFlags)")
    source = gelu_candidate("y = torch.empty_like(input)\nlaunch(input, y, approximate)\n_check_waits()\nreturn y",
                            header=header)
    result = evaluator.evaluate(task, source)
    assert result.correct, result.reason
    assert result.performance is not None and result.performance.candidate.reps > 0
    return result


def test_a_candidate_sleeps_in_its_waits_and_spins_while_timed(gpu_unchecked, gelu_task):
    result = evaluated_checking_its_waits(gpu_unchecked, gelu_task, WAITS_CHECKED)
    assert result.memory_check == "memcheck"


# The adversary's version: static checks off, it sets its own context to yield (0x02) as it is
# imported, and still finds itself spinning whenever it is timed.
SETS_ITS_OWN_WAITS = WAITS_CHECKED + '''
_OUTSIDE_TIMING = 0x02
import torch  # noqa: E402
torch.zeros(1, device="cuda")  # its context, made now if not made yet
_own = ctypes.c_uint()
_CUDA.cuCtxGetFlags(ctypes.byref(_own))
assert _CUDA.cuCtxSetFlags((_own.value & ~0x07) | _OUTSIDE_TIMING) == 0
'''


def test_a_candidate_that_sets_its_own_waits_is_still_timed_spinning(gpu_unchecked, gelu_task):
    evaluated_checking_its_waits(gpu_unchecked, gelu_task, SETS_ITS_OWN_WAITS)


def test_a_context_made_to_sleep_spins_inside_spinning_and_sleeps_again_after():
    """In a fresh process, as the candidate's process starts: flags read back from the driver."""
    script = textwrap.dedent('''
        import torch
        from evaluator import cuda_waits
        device = torch.device("cuda:0")
        if not cuda_waits.sleep_in_waits(device):
            print("cannot switch")
            raise SystemExit(0)
        torch.cuda.set_device(device)
        torch.zeros(1, device=device)
        seen = [cuda_waits.current_flag()]
        with cuda_waits.spinning(device):
            torch.zeros(1, device=device).item()
            seen.append(cuda_waits.current_flag())
        seen.append(cuda_waits.current_flag())
        print(seen)
    ''')
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=root)
    assert out.returncode == 0, out.stderr
    if out.stdout.strip() == "cannot switch":
        pytest.skip("this driver cannot switch a live context's waits (cuCtxSetFlags)")
    assert out.stdout.strip() == "[4, 1, 4]"


def test_an_evaluator_process_of_its_own_sleeps_in_its_waits():
    """agentloop/evaluator_process.py: before the Evaluator of a device's own process is built."""
    script = textwrap.dedent('''
        import torch
        from agentloop.evaluator_process import sleep_in_waits
        from evaluator import cuda_waits
        sleep_in_waits("cuda:0")
        torch.zeros(1, device="cuda:0").item()
        print(cuda_waits.current_flag())
    ''')
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "4"
