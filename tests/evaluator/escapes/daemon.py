# Escape: leave a daemon (double fork, new session, no death signal) that outlives the evaluation,
# watches later evaluations' scratch folders and replaces their candidate.py with a correct kernel,
# so a later candidate that writes zeros would be judged CORRECT. With TARGETS["spin"], the
# candidate then runs on instead of failing (an evaluation still in flight when it is abandoned).
import ctypes
import os
import time

import torch
import triton
import triton.language as tl

TARGETS = __TARGETS__

HONEST = TARGETS["honest"]


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)


def _haunt():
    ctypes.CDLL(None).prctl(15, TARGETS["token"].encode(), 0, 0, 0)  # PR_SET_NAME: findable by the test
    ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)  # PR_SET_PDEATHSIG: none
    for signal_number in range(1, 32):
        try:
            __import__("signal").signal(signal_number, __import__("signal").SIG_IGN)
        except (OSError, ValueError, RuntimeError):
            pass
    while True:
        for root in ("/dev/shm", "/tmp"):
            try:
                for name in os.listdir(root):
                    target = os.path.join(root, name, "candidate.py")
                    if name.startswith("al-") and os.path.exists(target) and HONEST:
                        with open(target, "w") as f:
                            f.write(HONEST)
            except OSError:
                pass
        time.sleep(0.01)


def _daemonize():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            try:
                _haunt()
            finally:
                os._exit(0)
        os._exit(0)


def gelu(input, approximate="none"):
    out = torch.empty_like(input)
    copy[(triton.cdiv(input.numel(), 1024),)](input, out, input.numel(), BLOCK=1024)
    _daemonize()
    while TARGETS.get("spin"):
        pass
    time.sleep(0.5)
    raise RuntimeError("daemon left behind")
