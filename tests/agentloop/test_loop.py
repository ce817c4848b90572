"""The refinement loop's state machine and DECIDE rules, with scripted answers and evaluations."""

import asyncio

import pytest

from agentloop.config import Arm, Budgets
from agentloop.generators.base import GeneratorSpec
from agentloop.generators.cached import CachedGenerator
from agentloop.generators.scripted import ScriptedGenerator
from agentloop.loop import Chain, LoopContext
from agentloop.states import TRANSITIONS, IllegalTransition, Mode, State, StateMachine
from tests.agentloop.scripted import MarkerEvaluations, answer
from traces.store import TraceStore


def test_transitions_are_declared_in_one_place():
    machine = StateMachine()
    for target in (State.EVALUATE, State.DECIDE, State.FEEDBACK, State.GENERATE, State.EVALUATE, State.DECIDE,
                   State.TUNE, State.DECIDE, State.DONE):
        machine.go(target)
    assert machine.done
    with pytest.raises(IllegalTransition):
        StateMachine().go(State.DECIDE)
    with pytest.raises(IllegalTransition):
        StateMachine(State.DONE).go(State.GENERATE)
    assert all(State.DONE not in TRANSITIONS[s] or s in (State.GENERATE, State.DECIDE) for s in State)


def chain_for(store, task, script, evaluations, arm=Arm("a"), budgets=Budgets(), cached=False, sample=0):
    spec = GeneratorSpec(provider="scripted", model="m", price_in_per_mtok=1.0, price_out_per_mtok=2.0)
    calls = []

    def respond(request):
        calls.append(request)
        if request.purpose == "reflection":
            return "The root cause is the missing mask."
        return script[request.round]

    generator = ScriptedGenerator(spec, respond)
    wrapped = CachedGenerator(generator, store) if cached else generator
    ctx = LoopContext(run_id="run", store=store, evaluations=evaluations, budgets=budgets)
    return Chain(task, arm, sample, wrapped, "m", ctx), calls, generator


@pytest.fixture
def store(tmp_path):
    s = TraceStore(tmp_path / "t.db")
    s.ensure_run("run", {"test": True})
    yield s
    s.close()


@pytest.fixture
def gelu(suite):
    return suite["Activation/gelu"]


def test_repair_then_optimize_until_the_target(store, gelu):
    script = [answer("COMPILE_FAIL"), answer("CORRECT", 1.1), answer("CORRECT", 2.0), answer("CORRECT", 3.0)]
    chain, calls, _ = chain_for(store, gelu, script, MarkerEvaluations(), budgets=Budgets(target_speedup=1.5))
    asyncio.run(chain.run())
    rows = store.chain("run", gelu.id, "a", 0)
    assert [(r.round, r.mode, r.verdict, r.decision) for r in rows] == [
        (0, "initial", "COMPILE_FAIL", "repair"),
        (1, "repair", "CORRECT", "optimize"),
        (2, "optimize", "CORRECT", "stop: target speedup 1.5x reached"),
    ]
    assert chain.stop_reason == "target speedup 1.5x reached"
    assert rows[1].parent_id == rows[0].id and rows[2].parent_id == rows[1].id
    assert "compile_errors" in rows[1].feedback and "profiler" in rows[2].feedback
    assert "COMPILE_FAIL" in rows[1].prompt[1]["content"] and "eager PyTorch" in rows[2].prompt[1]["content"]
    assert rows[0].cost_usd == pytest.approx((rows[0].tokens_in * 1 + rows[0].tokens_out * 2) / 1e6)
    assert len(calls) == 3


def test_decide_runs_once_a_round_and_the_next_prompt_follows_what_it_stored(store, gelu, monkeypatch):
    decided = []
    original = Chain._decide
    monkeypatch.setattr(Chain, "_decide", lambda self: decided.append(len(self.history)) or original(self))
    script = [answer("COMPILE_FAIL"), answer("INCORRECT"), answer("CORRECT", 1.1), answer("CORRECT", 1.2)]
    chain, _, _ = chain_for(store, gelu, script, MarkerEvaluations(), budgets=Budgets(max_rounds=4))
    asyncio.run(chain.run())
    rows = store.chain("run", gelu.id, "a", 0)
    assert decided == [1, 2, 3, 4]  # once per round, each time with that round's attempt in the history
    assert [r.decision for r in rows] == ["repair", "repair", "optimize", "stop: 4 rounds done"]
    assert [r.mode for r in rows[1:]] == [r.decision for r in rows[:-1]]  # each round's mode is the decision before


def test_max_rounds_and_stagnation(store, gelu):
    script = [answer("INCORRECT")] * 10
    chain, _, _ = chain_for(store, gelu, script, MarkerEvaluations(), budgets=Budgets(stagnation_rounds=2))
    asyncio.run(chain.run())
    assert chain.stop_reason == "no improvement in 2 rounds" and len(chain.history) == 3
    chain, _, _ = chain_for(store, gelu, [answer("INCORRECT"), answer("OUTLIER_FAIL"), answer("CORRECT", 1.2)],
                            MarkerEvaluations(), budgets=Budgets(max_rounds=3), sample=1)
    asyncio.run(chain.run())
    assert chain.stop_reason == "3 rounds done"
    assert [a.mode for a in chain.history] == ["initial", "repair", "repair"]


@pytest.mark.parametrize("budgets, reason", [
    (Budgets(max_tokens=1), "token cap"),
    (Budgets(max_cost_usd=1e-9), "cost cap"),
    (Budgets(wall_seconds=1e-9), "wall time"),
])
def test_caps_stop_the_chain(store, gelu, budgets, reason):
    chain, _, _ = chain_for(store, gelu, [answer("INCORRECT")] * 5, MarkerEvaluations(), budgets=budgets)
    asyncio.run(chain.run())
    assert chain.stop_reason == reason and len(chain.history) == 1


def test_geak_reflects_changes_strategy_and_shows_ancestors(store, gelu):
    script = [answer("CORRECT", 1.2), answer("INCORRECT"), answer("INCORRECT"), answer("INCORRECT"),
              answer("CORRECT", 1.5), answer("CORRECT", 1.4)]
    arm = Arm("geak", method="geak", tune=False)
    chain, calls, _ = chain_for(store, gelu, script, MarkerEvaluations(), arm=arm,
                                budgets=Budgets(max_rounds=6, stagnation_rounds=10))
    asyncio.run(chain.run())
    modes = [a.mode for a in chain.history]
    assert modes == ["initial", "optimize", "repair", "repair", "strategy", "optimize"]
    reflections = [c for c in calls if c.purpose == "reflection"]
    assert len(reflections) == 3, "the reflector runs before each repair"
    assert "missing mask" in chain.history[2].prompt[1]["content"]
    assert "3 attempts in a row failed" in chain.history[4].prompt[1]["content"]
    last_prompt = chain.history[5].prompt[1]["content"]
    assert "fastest correct modules so far" in last_prompt and "1.50x" in last_prompt
    assert chain.history[5].parent_id == chain.history[4].id, "GEAK optimizes its best kernel"


TUNABLE = '''
@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    pass

def launch(x):
    k[(1,)](x, BLOCK=1024)
'''


def test_tune_searches_launch_parameters_without_llm_calls(store, gelu):
    script = [answer("CORRECT", 1.0, TUNABLE), answer("CORRECT", 1.0, TUNABLE)]
    evaluations = MarkerEvaluations(tune_speedup=1.3)
    arm = Arm("tuned", method="iterative", tune=True)
    chain, calls, _ = chain_for(store, gelu, script, evaluations, arm=arm, budgets=Budgets(max_rounds=2))
    asyncio.run(chain.run())
    trials = [a for a in chain.history if a.trial > 0]
    assert len(trials) == 4 and all(a.mode == "tune" and a.model == "tune" for a in trials)
    assert {t.feedback[0] for t in trials} == {"BLOCK=512 (was 1024)", "BLOCK=2048 (was 1024)",
                                               "num_warps=8 (was the default)", "num_warps=2 (was the default)"}
    assert len([c for c in calls if c.purpose == "kernel"]) == 2, "tuning makes no LLM call"
    assert chain.best.trial > 0 and chain.best.speedup == 1.3
    optimize = chain.history[-1]
    assert optimize.mode == "optimize" and optimize.parent_id == chain.best.id


def test_an_interrupted_chain_resumes_without_redoing_work(store, gelu):
    script = [answer("COMPILE_FAIL"), answer("INCORRECT"), answer("CORRECT", 1.1), answer("CORRECT", 1.2)]
    budgets = Budgets(max_rounds=4, stagnation_rounds=10)
    crashing = MarkerEvaluations(crash_after=2)
    chain, _, first = chain_for(store, gelu, script, crashing, budgets=budgets, cached=True)
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(chain.run())
    assert len(store.chain("run", gelu.id, "a", 0)) == 2 and first.calls == 3
    resumed, calls, second = chain_for(store, gelu, script, MarkerEvaluations(), budgets=budgets, cached=True)
    asyncio.run(resumed.run())
    rows = store.chain("run", gelu.id, "a", 0)
    assert [r.round for r in rows] == [0, 1, 2, 3]
    assert second.calls == 1, "round 2's answer came from the cache; only round 3 is a new call"
    assert rows[2].cached_response and not rows[3].cached_response
    done, _, third = chain_for(store, gelu, script, MarkerEvaluations(), budgets=budgets, cached=True)
    asyncio.run(done.run())
    assert third.calls == 0 and done.stop_reason == "4 rounds done"


def test_prompts_are_a_function_of_history(store, gelu, tmp_path):
    script = [answer("INCORRECT"), answer("CORRECT", 1.0)]
    chain, _, _ = chain_for(store, gelu, script, MarkerEvaluations(), budgets=Budgets(max_rounds=2))
    asyncio.run(chain.run())
    other = TraceStore(tmp_path / "other.db")
    other.ensure_run("run", {"test": True})
    again, _, _ = chain_for(other, gelu, script, MarkerEvaluations(), budgets=Budgets(max_rounds=2))
    asyncio.run(again.run())
    assert [a.prompt for a in chain.history] == [a.prompt for a in again.history]
    other.close()


def test_strategy_mode_enum_covers_prompt_kinds():
    from agentloop.prompts import KINDS
    assert {m.value for m in Mode} - {"tune"} <= set(KINDS)


def test_one_broken_chain_does_not_stop_the_run(tmp_path, suite):
    from rich.console import Console

    from agentloop.config import Experiment, TaskSelection
    from agentloop.run import run_experiment

    class BrokenForSum(MarkerEvaluations):
        async def evaluate(self, task, code):
            if task.id == "Reduce/sum":
                raise RuntimeError("evaluator exploded")
            return await super().evaluate(task, code)

    experiment = Experiment(name="t", tasks=TaskSelection(ids=["gelu", "sum"]),
                            generator=GeneratorSpec(provider="scripted", model="m",
                                                    options={"text": answer("CORRECT", 1.0)}),
                            budgets=Budgets(max_rounds=2), store=str(tmp_path / "t.db"))
    store = TraceStore(experiment.store)
    summary = asyncio.run(run_experiment(experiment, suite, store, BrokenForSum(), Console(quiet=True),
                                         progress_enabled=False))
    reasons = {c.task.id: c.stop_reason for c in summary.chains}
    assert reasons == {"Activation/gelu": "2 rounds done", "Reduce/sum": "error: RuntimeError: evaluator exploded"}
    assert len(store.attempts(summary.run_id)) == 2
    store.close()


def test_finished_chains_keep_their_outcome_not_their_attempts(tmp_path, suite):
    """A long run's memory must not grow with its attempts: the store holds them, chains drop them."""
    from rich.console import Console

    from agentloop.config import Experiment, TaskSelection
    from agentloop.run import run_experiment, summary_table

    experiment = Experiment(name="t", tasks=TaskSelection(ids=["gelu", "sum"]), samples=2,
                            generator=GeneratorSpec(provider="scripted", model="m", price_in_per_mtok=1.0,
                                                    options={"text": answer("CORRECT", 1.5)}),
                            budgets=Budgets(max_rounds=3, stagnation_rounds=5), store=str(tmp_path / "t.db"))
    store = TraceStore(experiment.store)
    summary = asyncio.run(run_experiment(experiment, suite, store, MarkerEvaluations(), Console(quiet=True),
                                         progress_enabled=False))
    stored = store.attempts(summary.run_id)
    assert all(c.history == [] for c in summary.chains)
    outcomes = [c.outcome() for c in summary.chains]
    assert sum(o.attempts for o in outcomes) == len(stored) == 12
    assert all(o.correct and o.speedup == 1.5 for o in outcomes)
    assert sum(o.cost_usd for o in outcomes) == pytest.approx(sum(a.cost_usd for a in stored))
    console = Console(record=True, width=200)
    console.print(summary_table(summary))
    row = console.export_text()
    assert " 12 " in row and "4/4" in row and "1.50x" in row
    store.close()
