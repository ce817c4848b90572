"""The GPU lock: exclusive and shared holds, reported waits, its log, compiles outside it and yielding to writers."""

import json
import multiprocessing
import os
import time

from evaluator import gpu_lock


def _hold_exclusive(lock_dir, started, seconds):
    with gpu_lock.exclusive(lock_dir):
        started.set()
        time.sleep(seconds)


def _hold_exclusive_when_asked(lock_dir, asked, got):
    asked.wait(10)
    with gpu_lock.exclusive(lock_dir):
        got.set()


def test_exclusive_lock_keeps_shared_users_out(tmp_path):
    started = multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold_exclusive, args=(tmp_path, started, 1.0))
    holder.start()
    started.wait(10)
    began = time.monotonic()
    with gpu_lock.shared(tmp_path):
        waited = time.monotonic() - began
    holder.join()
    assert waited > 0.5
    with gpu_lock.shared(tmp_path), gpu_lock.shared(None):
        pass


def test_a_blocked_lock_user_reports_its_wait(tmp_path):
    heard = []
    started = multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold_exclusive, args=(tmp_path, started, 1.0))
    holder.start()
    started.wait(10)
    gpu_lock.report_waits(heard.append)
    try:
        with gpu_lock.shared(tmp_path):
            heard.append("held")
        with gpu_lock.shared(tmp_path):  # free now: no wait to report
            heard.append("held again")
    finally:
        gpu_lock.report_waits(None)
        holder.join()
    assert heard == [True, False, "held", "held again"]


def test_the_lock_log_records_every_hold_with_its_wait(tmp_path, monkeypatch):
    log = tmp_path / "locks.jsonl"
    monkeypatch.setenv("AGENTLOOP_LOCK_LOG", str(log))
    started = multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold_exclusive, args=(tmp_path / "lock", started, 1.0))
    holder.start()
    started.wait(10)
    with gpu_lock.shared(tmp_path / "lock", "judging"):
        pass
    holder.join()
    holds = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(h["mode"] for h in holds) == ["exclusive", "shared"]
    assert {h["mode"]: h["what"] for h in holds} == {"exclusive": "", "shared": "judging"}
    assert {h["pid"] for h in holds} == {holder.pid, os.getpid()}
    exclusive, shared = sorted(holds, key=lambda h: h["mode"])
    assert exclusive["released"] - exclusive["got"] > 0.5
    assert shared["got"] - shared["asked"] > 0.5 and shared["got"] >= exclusive["released"] - 0.05


def test_every_kernel_of_a_call_compiles_with_the_gpu_lock_let_go(tmp_path):
    """The first launch of a call compiled outside the lock before; a later kernel compiled while the
    call held it shared, and another candidate's timing waited that long."""
    import fcntl
    import os

    from evaluator.sandboxed.guards import LaunchRecorder

    recorder = LaunchRecorder(lock_dir=str(tmp_path), locking=True)
    seen = []

    def compile_probe():  # could a writer (timing) take the lock while this compiles?
        fd = os.open(tmp_path / "gpu.lock", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
            seen.append("free")
        except BlockingIOError:
            seen.append("held")
        finally:
            os.close(fd)

    recorder.compile_unlocked(compile_probe)  # the call's first kernel
    recorder.compile_unlocked(compile_probe)  # its second: the lock was held since the first
    assert seen == ["free", "free"]
    assert recorder._held is not None, "the launch itself runs under the lock"
    recorder.release()


def test_a_yielding_shared_hold_lets_a_waiting_writer_go_first(tmp_path):
    """A writer asking while a long shared hold runs gets the lock at the holder's next yield point,
    not when the hold ends; the holder then holds the lock again."""
    import threading

    asked, got = multiprocessing.Event(), multiprocessing.Event()
    writer = multiprocessing.Process(target=_hold_exclusive_when_asked, args=(tmp_path, asked, got))
    writer.start()
    finished = []
    with gpu_lock.shared(tmp_path, "judging", yielding=True) as hold:
        asked.set()
        time.sleep(0.5)  # the writer is in the turnstile now, waiting for this hold
        assert not got.is_set()
        gpu_lock.yield_to_writers(finish=lambda: finished.append(got.is_set()))
        assert got.wait(5), "the writer got the lock while this hold yielded"
        assert finished == [False], "the holder's work was finished once, before it let go"
        assert hold.yielded > 0, "the wait to hold it again is counted on the hold"
        blocked = threading.Event()

        def try_exclusive():  # this hold is back: another writer must wait for it
            with gpu_lock.exclusive(tmp_path):
                blocked.set()
        other = threading.Thread(target=try_exclusive, daemon=True)
        other.start()
        assert not blocked.wait(0.5)
    assert blocked.wait(5)
    writer.join()


def test_without_a_waiting_writer_a_yield_keeps_the_hold(tmp_path, monkeypatch):
    log = tmp_path / "locks.jsonl"
    monkeypatch.setenv("AGENTLOOP_LOCK_LOG", str(log))
    finished = []
    with gpu_lock.shared(tmp_path / "lock", "judging", yielding=True) as hold:
        gpu_lock.yield_to_writers(finish=lambda: finished.append(True))
    gpu_lock.yield_to_writers()  # no hold: nothing to do
    assert len(log.read_text().splitlines()) == 1
    assert finished == [] and hold.yielded == 0.0, "nothing to finish and no wait where no writer waits"


def _hold_exclusive_and_log(lock_dir, asked, order, seconds):
    asked.set()
    with gpu_lock.exclusive(lock_dir):
        order.put("writer")
        time.sleep(seconds)


def _hold_exclusive_until(lock_dir, started, other_asked):
    with gpu_lock.exclusive(lock_dir):
        started.set()
        other_asked.wait(10)
        time.sleep(0.5)


def test_writers_that_ask_while_one_holds_the_lock_go_before_the_readers_waiting(tmp_path):
    """A reader that asks while a writer holds the lock waits for a second writer that asked after
    it: the GPU drains its readers once for both writers, not once each (with the turnstile alone,
    the reader got in between and the second writer waited for it to finish)."""
    import threading

    gpu_lock.prepare(tmp_path)
    started, asked = multiprocessing.Event(), multiprocessing.Event()
    order = multiprocessing.Queue()
    first = multiprocessing.Process(target=_hold_exclusive_until, args=(tmp_path, started, asked))
    first.start()
    assert started.wait(10)
    second = multiprocessing.Process(target=_hold_exclusive_and_log, args=(tmp_path, asked, order, 0.5))

    def start_second_writer():
        time.sleep(0.5)  # the reader below is waiting by then
        second.start()
    threading.Thread(target=start_second_writer, daemon=True).start()
    with gpu_lock.shared(tmp_path):
        order.put("reader")
    first.join()
    second.join()
    assert [order.get(timeout=5), order.get(timeout=5)] == ["writer", "reader"]


def _squat_on_the_board(lock_dir, holding):
    """What a candidate with the static checks off can do with the lock folder it sees read-only:
    take the writers' board shared itself and never let go."""
    import fcntl
    fd = os.open(os.path.join(lock_dir, "writers.lock"), os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_SH)
    holding.set()
    time.sleep(600)


def test_a_process_squatting_on_the_writers_board_holds_readers_only_until_it_is_killed(tmp_path):
    """Readers wait for the board to be empty, so a squatter stalls them, as holding the lock itself
    would; the OS lets go of its place when its process dies (the sandbox kills it at its limits)."""
    import signal
    import threading

    gpu_lock.prepare(tmp_path)
    holding = multiprocessing.Event()
    squatter = multiprocessing.Process(target=_squat_on_the_board, args=(str(tmp_path), holding))
    squatter.start()
    assert holding.wait(30)
    got = threading.Event()

    def read():
        with gpu_lock.shared(tmp_path):
            got.set()
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert not got.wait(0.5), "a reader waits while the board is held"
    os.kill(squatter.pid, signal.SIGKILL)
    squatter.join(30)
    assert got.wait(30), "the board went with the process that held it"
