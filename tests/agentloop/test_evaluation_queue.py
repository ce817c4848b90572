"""The local executor's queue over several devices (agentloop/evaluation.py), with stand-in
evaluator processes: an evaluation takes the first free slot on any device, never waiting behind a
busy device while another has room, and the first evaluations spread over every device."""

import asyncio
import threading
from concurrent.futures import Future

import pytest

from agentloop import evaluation
from agentloop.evaluation import EvaluationQueue

RELEASE_WAIT_S = 60.0


class StandIn:
    """An evaluator process that answers with the candidate's code; cuda:0 holds each evaluation until
    `released` is set."""

    released = threading.Event()

    def __init__(self, device, workers, options, cpu_threads=None):
        self.device, self.ran = device, []

    def wait_ready(self):
        pass

    def submit(self, task, code):
        future, self.ran = Future(), self.ran + [code]

        def work():
            if self.device == "cuda:0":
                StandIn.released.wait(RELEASE_WAIT_S)
            future.set_result(code)
        threading.Thread(target=work, daemon=True).start()
        return future

    def close(self, abandon=False):
        pass


@pytest.fixture
def two_devices(monkeypatch):
    StandIn.released.clear()
    monkeypatch.setattr(evaluation, "EvaluatorProcess", StandIn)
    queue = EvaluationQueue("cuda:0,1", workers=1)
    yield queue
    StandIn.released.set()
    queue.close()


def test_no_evaluation_waits_behind_a_busy_device_while_another_has_room(two_devices):
    """cuda:0's first evaluation lasts until every other one is done: all five others run on cuda:1
    (a queue per device would have sent every other one to cuda:0, to wait there)."""
    slow, fast = two_devices.backends

    async def run_all():
        jobs = [asyncio.ensure_future(two_devices.evaluate(None, f"job {k}")) for k in range(6)]
        done = await asyncio.gather(*jobs[1:])
        StandIn.released.set()
        return [await jobs[0], *done]

    results = asyncio.run(asyncio.wait_for(run_all(), RELEASE_WAIT_S / 2))
    assert results == [f"job {k}" for k in range(6)]
    assert slow.ran == ["job 0"] and fast.ran == [f"job {k}" for k in range(1, 6)]


def test_the_first_evaluations_spread_over_every_device_and_a_later_run_gets_every_slot(two_devices):
    StandIn.released.set()
    slow, fast = two_devices.backends
    async def two():
        return await asyncio.gather(*(two_devices.evaluate(None, f"job {k}") for k in range(2)))

    for _ in range(2):  # a second asyncio.run: the slots are those of its own event loop
        assert asyncio.run(asyncio.wait_for(two(), RELEASE_WAIT_S)) == ["job 0", "job 1"]
    assert slow.ran == ["job 0", "job 0"] and fast.ran == ["job 1", "job 1"]
