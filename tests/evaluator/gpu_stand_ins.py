"""Stand-ins for the GPU's timing events, so that the timing loop runs on the CPU in tests."""

from evaluator import timing
from evaluator.sandboxed import candidate_process


class Event:
    def __init__(self, **_):
        pass


def steady_events(monkeypatch, ms: float = 1.0) -> None:
    """Every timed call reads `ms` on the events; no spin, no synchronisation, a small L2 flush."""
    for name, value in {"_Event": Event, "_record": lambda e: None, "_elapsed": lambda a, b: ms,
                        "_synchronize": lambda: None, "_spin": None}.items():
        monkeypatch.setattr(timing, name, value)
    monkeypatch.setattr(candidate_process, "_l2_flush_bytes", lambda device: 1 << 16)


class FakeGPU:
    """A clock and CUDA-event stand-ins: each call advances the clock by its duration, each spin by
    its cycles (one cycle per microsecond), and an event pair reads the clock between them."""

    def __init__(self):
        self.now = 0.0

    def install(self, monkeypatch):
        clock = self

        class ClockEvent:
            def __init__(self, enable_timing=True):
                self.at = 0.0

        monkeypatch.setattr(timing, "_perf_counter", lambda: clock.now)
        monkeypatch.setattr(timing, "_synchronize", lambda: None)
        monkeypatch.setattr(timing, "_Event", ClockEvent)
        monkeypatch.setattr(timing, "_record", lambda event: setattr(event, "at", clock.now))
        monkeypatch.setattr(timing, "_elapsed", lambda a, b: (b.at - a.at) * 1e3)
        monkeypatch.setattr(timing, "_spin", lambda cycles: setattr(clock, "now", clock.now + cycles * 1e-6))
        monkeypatch.setattr(timing, "_spin_cycles_per_ms", lambda: 1000.0)
        monkeypatch.setattr(candidate_process, "_l2_flush_bytes", lambda device: 1 << 16)

    def calls(self, seconds: float, log: list):
        def call(guarded):
            log.append(guarded)
            self.now += seconds
        return call
