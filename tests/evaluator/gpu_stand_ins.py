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
