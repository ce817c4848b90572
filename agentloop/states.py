"""The chain's states and the only transitions allowed between them."""

from __future__ import annotations

from enum import Enum


class State(str, Enum):
    GENERATE = "GENERATE"
    EVALUATE = "EVALUATE"
    DECIDE = "DECIDE"
    FEEDBACK = "FEEDBACK"
    TUNE = "TUNE"
    DONE = "DONE"


class Mode(str, Enum):
    """What the next attempt is asked to do."""

    INITIAL = "initial"
    REPAIR = "repair"
    STRATEGY = "strategy"  # a repair that asks for a different approach (GEAK, after k failures)
    OPTIMIZE = "optimize"
    TUNE = "tune"


TRANSITIONS: dict[State, frozenset[State]] = {
    State.GENERATE: frozenset({State.EVALUATE, State.DONE}),
    State.EVALUATE: frozenset({State.DECIDE}),
    State.DECIDE: frozenset({State.FEEDBACK, State.TUNE, State.DONE}),
    State.FEEDBACK: frozenset({State.GENERATE}),
    State.TUNE: frozenset({State.DECIDE}),
    State.DONE: frozenset(),
}


class IllegalTransition(RuntimeError):
    pass


class StateMachine:
    """Holds the current state; `go` refuses any move not in TRANSITIONS."""

    def __init__(self, start: State = State.GENERATE):
        self.state = start
        self.path: list[State] = [start]

    def go(self, target: State) -> State:
        if target not in TRANSITIONS[self.state]:
            raise IllegalTransition(f"{self.state.value} -> {target.value} is not an allowed transition")
        self.state = target
        self.path.append(target)
        return target

    @property
    def done(self) -> bool:
        return self.state is State.DONE
