"""Where the threads of a benchmark's processes are (benchmarks/thread_waits.py), read from /proc."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks import thread_waits

# blocks in read() on its stdin until the test writes; its name makes it a candidate's process
BLOCKED = ("import ctypes, sys\nctypes.CDLL(None).prctl(15, b'al-candidate')\nprint('ready', flush=True)\n"
           "sys.stdin.read(1)\n# fork_server_process")  # named as the fork server names a candidate


def test_a_threads_place_names_its_call_its_ioctls_file_and_its_kernel_wait():
    assert thread_waits.place("R", "16 0x3 0x0") == "running"
    assert thread_waits.place("S", "running") == "running"
    assert thread_waits.place("S", "202 0x7f 0x80 0x0 0x0 0x0 0x0 0x7ffd 0x7f12") == "futex"
    # _IOWR('F', 0x2B, 48): the driver's RM_ALLOC, as the ioctl's second argument
    assert thread_waits.place("D", "16 0x5 0xc030462b 0x7ffd 0x0 0x0 0x0 0x7ffd 0x7f12", "/dev/nvidiactl",
                              "os_acquire_rwlock_write") == "ioctl /dev/nvidiactl RM_ALLOC [os_acquire_rwlock_write]"
    assert thread_waits.place("S", "16 0x5 0xc0104629", "/dev/nvidiactl", "x") == "ioctl /dev/nvidiactl RM_FREE"
    assert thread_waits.place("S", "16 0x5 0xc0104677", "/dev/nvidia0") == "ioctl /dev/nvidia0 0x77"
    assert thread_waits.place("S", "16 0x6 0x30000001", "/dev/nvidia-uvm") == "ioctl /dev/nvidia-uvm 0x30000001"
    assert thread_waits.place("S", "16 0x7 0x5401", "/dev/pts/0") == "ioctl /dev/pts/0"
    assert thread_waits.place("S", "999 0x0") == "system call 999"
    assert thread_waits.place("D", "-1 0x7ffd 0x7f12", None, "folio_wait_bit") == "outside a system call [folio_wait_bit]"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
def test_a_process_blocked_in_a_read_is_counted_there_under_its_kind_and_a_strangers_threads_are_not():
    blocked = subprocess.Popen([sys.executable, "-c", BLOCKED], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    stranger = subprocess.Popen([sys.executable, "-c", BLOCKED.replace("fork_server_process", "").replace("al-candidate", "stranger")],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert blocked.stdout.readline().strip() == "ready" and stranger.stdout.readline().strip() == "ready"
        # only these two: other tests' processes on the machine may be of the same kinds
        with thread_waits.ThreadWaits(period=0.05, pids={blocked.pid, stranger.pid}) as waits:
            while waits.samples < 5:
                time.sleep(0.05)
    finally:
        for child in (blocked, stranger):
            child.communicate("x")
    mean = waits.mean_threads()
    assert mean.get(("candidates", "read"), 0) >= 0.5, mean
    assert {kind for kind, _ in mean} == {"candidates"}, "the stranger's threads are not counted"


def test_the_table_puts_running_and_blocked_threads_before_sleeping_ones():
    mean = {("evaluator", "futex"): 40.0, ("memory checks", "ioctl /dev/nvidiactl [os_acquire_rwlock_write]"): 1.4,
            ("evaluator", "running"): 7.0, ("memory checks", "poll"): 9.0}
    rows = [line.split(" | ")[1] for line in thread_waits.table(mean).splitlines()[2:]]
    assert rows == ["running", "ioctl /dev/nvidiactl [os_acquire_rwlock_write]", "futex", "poll"]
