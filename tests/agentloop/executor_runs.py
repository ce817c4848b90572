"""One small experiment run through a given executor, for tests that compare executors' verdicts:
2 tasks x 2 samples x 3 rounds (a candidate raising in its sandbox, one failing the static checks,
the reference solution)."""

import asyncio

from rich.console import Console

from agentloop.config import Arm, Budgets, Evaluation, Experiment, TaskSelection
from agentloop.generators.base import GeneratorSpec, Request
from agentloop.generators.scripted import ScriptedGenerator
from agentloop.run import run_experiment
from traces.store import TraceStore

RAISES = """```python
import triton
import triton.language as tl

@triton.jit
def nothing(x_ptr):
    pass

def {entry}(*args, **kwargs):
    nothing[(1,)](args[0])
    raise ValueError("not finished")
```"""
TASKS = ["Activation/relu", "Reduce/sum"]


def experiment(store) -> Experiment:
    return Experiment(name="executors", tasks=TaskSelection(ids=TASKS), samples=2,
                      generator=GeneratorSpec(provider="scripted", model="m"), arms=[Arm("a")],
                      budgets=Budgets(max_rounds=3, stagnation_rounds=0), store=str(store),
                      evaluation=Evaluation(device="cpu", timing=False))


def answers(suite):
    """Round 0 raises inside a sandbox, round 1 is wrong (static), round 2 is the reference solution."""
    def answer(request: Request) -> str:
        task = suite[request.task_id]
        if request.round == 1:
            return "```python\nimport torch\ndef " + task.entry + "(*a, **k):\n    return torch.zeros(1)\n```"
        if request.round == 2:
            return "```python\n" + task.solution_path.read_text() + "\n```"
        return RAISES.replace("{entry}", task.entry)
    return answer


def run_with(evaluations, suite, store) -> dict:
    exp = experiment(store)
    trace = TraceStore(store)
    generator = ScriptedGenerator(exp.generator, answer=answers(suite))
    summary = asyncio.run(run_experiment(exp, suite, trace, evaluations, Console(quiet=True),
                                         progress_enabled=False, generators={"a": generator}))
    attempts = trace.attempts(summary.run_id)
    trace.close()
    failed = [c.stop_reason for c in summary.chains if c.stop_reason.startswith("error")]
    assert not failed, failed
    return {(a.task_id, a.sample, a.round): a for a in attempts}
