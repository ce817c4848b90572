"""The case feed: a task's cases built on a thread of its own, and where that thread's time went."""

import multiprocessing
import threading

import torch

from evaluator import gpu_lock
from evaluator.case_feed import CaseFeed
from evaluator.cases import plan
from evaluator.references import ReferenceStore


def _time_until_released(lock_dir, holding, release):
    with gpu_lock.exclusive(lock_dir, "timing"):
        holding.set()
        release.wait(60)


def test_the_feed_counts_what_its_builds_waited_for_the_gpu_lock(tmp_path, suite):
    """A timing holds the GPU lock when the feed starts: its first build waits, and the wait is
    counted in the feed's `lock_waited` (the evaluation's `references_lock_wait`)."""
    lock_dir, work = tmp_path / "lock", tmp_path / "work"
    gpu_lock.prepare(lock_dir)
    work.mkdir()
    store = ReferenceStore(work, torch.device("cpu"), lock_dir=lock_dir)
    holding, release = multiprocessing.Event(), multiprocessing.Event()
    timing = multiprocessing.Process(target=_time_until_released, args=(lock_dir, holding, release))
    timing.start()
    assert holding.wait(30)
    waiting = threading.Event()
    gpu_lock.report_waits(lambda blocked: blocked and waiting.set())
    try:
        task = suite["Activation/gelu"]
        feed = CaseFeed(store, task, plan(task, on_gpu=False)[:2])
        assert waiting.wait(30), "the feed's first build waits for the timing"
        release.set()
        timing.join(30)
        feed._thread.join(60)  # both cases built
    finally:
        gpu_lock.report_waits(None)
    assert feed.ready() == 2
    assert feed.lock_waited > 0, "the wait the timing above caused is counted (no threshold: any wait)"
    assert feed.slot_waited == 0.0, "no standard-size case is built on a GPU here"


def test_a_build_waiting_for_a_standard_case_slot_counts_its_wait(tmp_path):
    """Standard-size builds on a GPU are a few at once: a fourth waits for a slot, and says so."""
    from evaluator import references
    store = ReferenceStore(tmp_path, torch.device("cpu"))
    taken = [store._computing.acquire(timeout=5) for _ in range(3)]
    assert all(taken)
    entered, waited = threading.Event(), []

    def build():
        before = references.slot_waited_by_this_thread()
        with store._build_slot():
            entered.set()
        waited.append(references.slot_waited_by_this_thread() - before)
    builder = threading.Thread(target=build)
    builder.start()
    assert not entered.wait(0.3), "all slots are taken"
    store._computing.release()
    builder.join(10)
    assert entered.is_set() and waited[0] > 0
    assert references.slot_waited_by_this_thread() == 0.0, "another thread's wait is its own"
