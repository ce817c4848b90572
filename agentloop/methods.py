"""Methods are presets of the same state machine: how many rounds, which parent a new attempt
builds on, whether a reflector runs, when to change strategy, whether to tune."""

from __future__ import annotations

from dataclasses import dataclass

ALL_SIGNALS = ("compile_errors", "correctness", "outliers", "profiler", "history", "reflection")


@dataclass(frozen=True)
class Method:
    name: str
    max_rounds: int
    parent: str  # "last": build on the latest attempt; "best": on the best so far
    feedback: tuple[str, ...]
    reflect: bool = False  # GEAK's reflector: an LLM call that analyses a failure before the repair
    keep_top_k: int = 0  # GEAK: the k best correct ancestors are shown in the prompt
    strategy_after: int | None = None  # after this many failed repairs in a row, ask for another approach
    tune: bool = False  # search launch parameters of each new best correct kernel


METHODS = {
    "one_shot": Method("one_shot", max_rounds=1, parent="last", feedback=()),
    "best_of_n": Method("best_of_n", max_rounds=1, parent="last", feedback=()),
    "iterative": Method("iterative", max_rounds=5, parent="last",
                        feedback=("compile_errors", "correctness", "outliers", "profiler", "history")),
    "geak": Method("geak", max_rounds=10, parent="best", feedback=ALL_SIGNALS, reflect=True, keep_top_k=3,
                   strategy_after=3, tune=True),
}


def method_named(name: str) -> Method:
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; choose one of {', '.join(METHODS)}")
    return METHODS[name]
