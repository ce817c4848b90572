"""One refinement chain (a task x arm x sample) as an explicit state machine:

    GENERATE -> EVALUATE -> DECIDE -> FEEDBACK -> GENERATE ... -> DONE
                              \\-> TUNE -> DECIDE

Every evaluated candidate becomes an attempt row in the trace store, written at DECIDE before the
chain moves on and never rewritten. A chain resumes from its rows: decisions are recomputed from
history, prompts re-render identically, and the response cache answers repeated calls.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from agentloop import feedback, prompts, tune
from agentloop.config import Arm, Budgets
from agentloop.extract import extract_code
from agentloop.generators.base import Generator, GeneratorError, Request
from agentloop.methods import Method, method_named
from agentloop.states import Mode, State, StateMachine
from evaluator.result import EvalResult, Verdict
from evaluator.task import Task
from traces.records import Attempt
from traces.store import TraceStore

if TYPE_CHECKING:
    from agentloop.evaluation import Evaluates


def score(attempt: Attempt) -> tuple[int, float]:
    """Better verdicts first, then speed."""
    return Verdict.rank_of(attempt.verdict), attempt.speedup or 0.0


def best_attempt(history: list[Attempt]) -> Attempt | None:
    return max(history, key=score, default=None)


@dataclass(frozen=True)
class Decision:
    """What DECIDE concluded: stop, and why, or the next mode. Stored in the trace as its `text`."""

    mode: Mode | None = None
    stop: str | None = None

    @property
    def text(self) -> str:
        return f"stop: {self.stop}" if self.stop is not None else self.mode.value


@dataclass
class LoopContext:
    """What every chain of a run shares."""

    run_id: str
    store: TraceStore
    evaluations: Evaluates
    budgets: Budgets
    model_max_tokens: int = 8192
    temperature: float = 0.7
    on_attempt: Callable[[Attempt], None] = lambda attempt: None
    run_cost: Callable[[], float] = lambda: 0.0


@dataclass
class Pending:
    """A candidate between GENERATE and DECIDE."""

    round: int
    mode: Mode
    parent: Attempt | None
    messages: list
    feedback: list[str]
    response_text: str | None = None
    code: str | None = None
    model: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached: bool = False
    result: EvalResult | None = None
    eval_s: float = 0.0
    started_at: float = field(default_factory=time.time)


@dataclass(frozen=True)
class ChainOutcome:
    """What a run's summary needs from a finished chain."""

    attempts: int
    correct: bool
    speedup: float | None
    tokens: int
    cost_usd: float

    @classmethod
    def of(cls, history: list[Attempt]) -> "ChainOutcome":
        best = best_attempt(history)
        return cls(attempts=len(history), correct=bool(best and best.correct),
                   speedup=best.speedup if best and best.correct else None,
                   tokens=sum(a.tokens_in + a.tokens_out for a in history),
                   cost_usd=sum(a.cost_usd for a in history))


class Chain:
    def __init__(self, task: Task, arm: Arm, sample: int, generator: Generator, model: str, ctx: LoopContext):
        self.task, self.arm, self.sample, self.generator, self.model, self.ctx = task, arm, sample, generator, model, ctx
        self.method: Method = method_named(arm.method)
        self.budgets = arm.budgets or ctx.budgets
        self.signals = tuple(arm.feedback) if arm.feedback is not None else self.method.feedback
        self.max_rounds = self.method.max_rounds if self.budgets.max_rounds is None else self.budgets.max_rounds
        self.tunes = arm.tune if arm.tune is not None else self.method.tune
        self.history: list[Attempt] = ctx.store.chain(ctx.run_id, task.id, arm.name, sample)
        self.pending: Pending | None = None
        self.next_mode: Mode = Mode.INITIAL
        self.decision: Decision | None = None  # DECIDE's, once per round
        self.reflection: str | None = None
        self.stop_reason = ""
        self.began = time.monotonic()
        self._outcome: ChainOutcome | None = None

    # ---- the loop ----------------------------------------------------------------------------
    async def run(self) -> "Chain":
        machine = StateMachine(self._resume_state())
        steps = {State.GENERATE: self.generate, State.EVALUATE: self.evaluate, State.DECIDE: self.decide,
                 State.FEEDBACK: self.feedback, State.TUNE: self.tune}
        while not machine.done:
            machine.go(await steps[machine.state]())
        return self

    def _resume_state(self) -> State:
        return self._after(self._decide()) if self.history else State.GENERATE

    def _after(self, decision: Decision) -> State:
        self.decision = decision
        if decision.stop is not None:
            self.stop_reason = decision.stop
            return State.DONE
        return State.TUNE if decision.mode is Mode.TUNE else State.FEEDBACK

    # ---- states ------------------------------------------------------------------------------
    async def generate(self) -> State:
        round_ = 1 + max((a.round for a in self.history), default=-1)
        parent = self._parent()
        sections = self._sections(parent)
        messages = prompts.render(self.next_mode.value, self.task, parent, sections, self._ancestors(),
                                  self._failures_in_a_row())
        self.pending = Pending(round_, self.next_mode, parent, messages, [name for name, _ in sections])
        try:
            response = await self.generator.generate(self._request(messages, round_, "kernel"))
        except GeneratorError as exc:
            self.stop_reason = f"generator failed: {exc}"
            return State.DONE
        p = self.pending
        p.response_text, p.model, p.cached = response.text, response.model, response.cached
        p.tokens_in, p.tokens_out, p.cost_usd, p.latency_s = (response.tokens_in, response.tokens_out,
                                                              response.cost_usd, response.latency_s)
        p.code = extract_code(response.text, self.task.entry)
        return State.EVALUATE

    async def evaluate(self) -> State:
        began = time.perf_counter()
        self.pending.result = await self.ctx.evaluations.evaluate(self.task, self.pending.code or "")
        self.pending.eval_s = time.perf_counter() - began
        await asyncio.sleep(0)  # let a chain waiting for the freed evaluation slot take it first
        return State.DECIDE

    async def decide(self) -> State:
        if self.pending is None:  # after tuning trials
            return self._after(self._decide())
        decision = self._record(self.pending)
        self.pending = None
        return self._after(decision)

    async def feedback(self) -> State:
        self.next_mode = self.decision.mode
        self.reflection = None
        if self.method.reflect and self.next_mode in (Mode.REPAIR, Mode.STRATEGY) and "reflection" in self.signals:
            self.reflection = await self._reflect()
        return State.GENERATE

    async def tune(self) -> State:
        base = best_attempt(self.history)
        done_trials = {a.trial for a in self.history if a.round == base.round and a.trial > 0}
        for number, variant in enumerate(tune.variants(base.code or ""), start=1):
            if number in done_trials:
                continue
            started, began = time.time(), time.perf_counter()
            result = await self.ctx.evaluations.evaluate(self.task, variant.source)
            attempt = Attempt(run_id=self.ctx.run_id, task_id=self.task.id, arm=self.arm.name, sample=self.sample,
                              round=base.round, trial=number, mode=Mode.TUNE.value, decision="tune trial",
                              parent_id=base.id, code=variant.source, result=result, feedback=[variant.description],
                              model="tune", eval_s=time.perf_counter() - began, started_at=started,
                              finished_at=time.time())
            self._store(attempt)
        return State.DECIDE

    # ---- DECIDE ------------------------------------------------------------------------------
    def _decide(self) -> Decision:
        """Stop (with the reason) or the next mode, from the chain's history and the budgets."""
        llm = [a for a in self.history if a.trial == 0]
        reason = self._stop_reason(llm)
        return Decision(stop=reason) if reason else Decision(self._next_mode(llm))

    def _stop_reason(self, llm: list[Attempt]) -> str | None:
        """Why the chain stops (the target first, stagnation last); None while it goes on."""
        return (self._target_reached() or self._chain_budget_spent(llm) or self._run_budget_spent()
                or self._stagnation(llm))

    def _target_reached(self) -> str | None:
        best, target = best_attempt(self.history), self.budgets.target_speedup
        if target and best and best.correct and (best.speedup or 0) >= target:
            return f"target speedup {target}x reached"
        return None

    def _chain_budget_spent(self, llm: list[Attempt]) -> str | None:
        b = self.budgets
        if len(llm) >= self.max_rounds:
            return f"{self.max_rounds} rounds done"
        if b.max_tokens and sum(a.tokens_in + a.tokens_out for a in llm) >= b.max_tokens:
            return "token cap"
        if b.max_cost_usd and sum(a.cost_usd for a in llm) >= b.max_cost_usd:
            return "cost cap"
        return None

    def _run_budget_spent(self) -> str | None:
        b = self.budgets
        if b.max_run_cost_usd and self.ctx.run_cost() >= b.max_run_cost_usd:
            return "run cost cap"
        if b.wall_seconds and self._elapsed() >= b.wall_seconds:
            return "wall time"
        return None

    def _stagnation(self, llm: list[Attempt]) -> str | None:
        k = self.budgets.stagnation_rounds
        return f"no improvement in {k} rounds" if self._stagnant(llm, k) else None

    def _next_mode(self, llm: list[Attempt]) -> Mode:
        best = best_attempt(self.history)
        if llm[-1].correct:
            untuned = self.tunes and best.trial == 0 and best.result.performance and self._untuned(best)
            return Mode.TUNE if untuned else Mode.OPTIMIZE
        failures, every = self._failures_in_a_row(), self.method.strategy_after
        return Mode.STRATEGY if every and failures >= every and failures % every == 0 else Mode.REPAIR

    def _untuned(self, attempt: Attempt) -> bool:
        trials = sum(1 for a in self.history if a.round == attempt.round and a.trial > 0)
        return trials < len(tune.variants(attempt.code or ""))

    def _stagnant(self, llm: list[Attempt], k: int) -> bool:
        if k <= 0 or len(llm) <= k:
            return False
        before = max(score(a) for a in self.history if a.round < llm[-k].round)
        return all(score(a) <= before for a in self.history if a.round >= llm[-k].round)

    def _elapsed(self) -> float:
        stored = sum(max(0.0, a.finished_at - a.started_at) for a in self.history if a.trial == 0)
        return stored + (time.monotonic() - self.began)

    # ---- what the next prompt builds on -------------------------------------------------------
    def _parent(self) -> Attempt | None:
        if not self.history:
            return None
        if self.next_mode is Mode.OPTIMIZE and self.method.parent == "best":
            return best_attempt(self.history)
        if self.next_mode is Mode.OPTIMIZE:
            return best_attempt([a for a in self.history if a.round == self.history[-1].round]) or self.history[-1]
        return [a for a in self.history if a.trial == 0][-1]

    def _sections(self, parent: Attempt | None) -> list[tuple[str, dict]]:
        if parent is None:
            return []
        context = feedback.FeedbackContext(self.task, parent, self.history, self.reflection)
        return feedback.sections(self.signals, context)

    def _ancestors(self) -> list[Attempt]:
        if not self.method.keep_top_k or self.next_mode is not Mode.OPTIMIZE:
            return []
        correct = sorted((a for a in self.history if a.correct), key=score, reverse=True)
        return correct[:self.method.keep_top_k]

    def _failures_in_a_row(self) -> int:
        count = 0
        for attempt in reversed([a for a in self.history if a.trial == 0]):
            if attempt.correct:
                break
            count += 1
        return count

    async def _reflect(self) -> str | None:
        parent = self._parent()
        messages = prompts.render("reflect", self.task, parent, self._sections(parent))
        round_ = 1 + max(a.round for a in self.history)
        try:
            response = await self.generator.generate(self._request(messages, round_, "reflection"))
        except GeneratorError:
            return None
        return response.text.strip() or None

    def _request(self, messages: list, round_: int, purpose: str) -> Request:
        return Request(model=self.model, messages=tuple(messages), max_tokens=self.ctx.model_max_tokens,
                       temperature=self.ctx.temperature, task_id=self.task.id, arm=self.arm.name,
                       sample=self.sample, round=round_, purpose=purpose)

    # ---- the trace ----------------------------------------------------------------------------
    def _record(self, p: Pending) -> Decision:
        attempt = Attempt(run_id=self.ctx.run_id, task_id=self.task.id, arm=self.arm.name, sample=self.sample,
                          round=p.round, mode=p.mode.value, decision="", parent_id=p.parent.id if p.parent else None,
                          prompt=[{"role": m.role, "content": m.content} for m in p.messages],
                          response=p.response_text, code=p.code, result=p.result, feedback=p.feedback,
                          model=p.model, tokens_in=p.tokens_in, tokens_out=p.tokens_out, cost_usd=p.cost_usd,
                          latency_s=p.latency_s, cached_response=p.cached, eval_s=p.eval_s,
                          started_at=p.started_at, finished_at=time.time())
        self.history.append(attempt)  # what DECIDE weighs, this attempt included
        decision = self._decide()
        self.history.pop()
        attempt.decision = decision.text
        self._store(attempt)
        return decision

    def _store(self, attempt: Attempt) -> None:
        self.ctx.store.add_attempt(attempt)
        self.history.append(attempt)
        self.ctx.on_attempt(attempt)

    # ---- outcome ------------------------------------------------------------------------------
    @property
    def best(self) -> Attempt | None:
        return best_attempt(self.history)

    def outcome(self) -> "ChainOutcome":
        return self._outcome or ChainOutcome.of(self.history)

    def release(self) -> None:
        """Once the chain is done: keep its outcome, drop its attempts (prompts, code and results
        stay in the trace store), so a long run's memory does not grow with its attempts."""
        self._outcome = self.outcome()
        self.history = []
