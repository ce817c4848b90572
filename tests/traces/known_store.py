"""A trace store built by hand, with answers worked out on paper (see test_stats.py).

Two arms (A: iterative, B: geak) x three tasks x two samples = 12 chains. Each entry is
(verdict, speedup) per round. B's gelu sample 0 writes the same code as A's gelu sample 1."""

from tests.agentloop.scripted import fake_result
from traces.records import Attempt
from traces.store import TraceStore

CHAINS = {
    ("A", "Math/softmax", 0): [("COMPILE_FAIL", None), ("CORRECT", 1.2), ("CORRECT", 1.5)],
    ("A", "Math/softmax", 1): [("CORRECT", 2.0), ("CORRECT", 2.3)],
    ("A", "Reduce/sum", 0): [("INCORRECT", None), ("INCORRECT", None), ("OUTLIER_FAIL", None)],
    ("A", "Reduce/sum", 1): [("CORRECT", 0.8)],
    ("A", "Activation/gelu", 0): [("STATIC_REJECT", None), ("CORRECT", 1.0)],
    ("A", "Activation/gelu", 1): [("CORRECT", 1.6), ("CORRECT", 1.7)],
    ("B", "Math/softmax", 0): [("CORRECT", 1.4), ("CORRECT", 1.9)],
    ("B", "Math/softmax", 1): [("CORRECT", 2.5)],
    ("B", "Reduce/sum", 0): [("COMPILE_FAIL", None), ("CORRECT", 1.1)],
    ("B", "Reduce/sum", 1): [("CORRECT", 1.0), ("CORRECT", 1.3)],
    ("B", "Activation/gelu", 0): [("CORRECT", 1.2)],
    ("B", "Activation/gelu", 1): [("RUNTIME_FAIL", None), ("INCORRECT", None), ("CORRECT", 0.9)],
}
SHARED_CODE = {("B", "Activation/gelu", 0, 0): ("A", "Activation/gelu", 1, 0)}


def code_for(arm, task, sample, round_):
    arm, task, sample, round_ = SHARED_CODE.get((arm, task, sample, round_), (arm, task, sample, round_))
    return f"# {arm} {task} sample {sample} round {round_}\nimport triton\n"


def build(path, run_id="r") -> TraceStore:
    store = TraceStore(path)
    store.ensure_run(run_id, {"arms": [{"name": "A", "method": "iterative"}, {"name": "B", "method": "geak"}]})
    for (arm, task, sample), rounds in CHAINS.items():
        parent = None
        for round_, (verdict, speedup) in enumerate(rounds):
            attempt = Attempt(run_id=run_id, task_id=task, arm=arm, sample=sample, round=round_,
                              mode="initial" if round_ == 0 else "repair", decision="d", parent_id=parent,
                              prompt=[{"role": "system", "content": "You write Triton."},
                                      {"role": "user", "content": f"Write {task} (round {round_}, {arm}{sample})."}],
                              response=f"```python\n{code_for(arm, task, sample, round_)}```",
                              code=code_for(arm, task, sample, round_), result=fake_result(task, verdict, speedup),
                              model="m", tokens_in=100, tokens_out=50, cost_usd=0.001)
            parent = store.add_attempt(attempt)
    return store
