"""The loop on a CUDA GPU: timed attempts, profiler feedback, and TUNE trials. Skipped without a GPU."""

import asyncio

import pytest

from agentloop.config import Arm, Budgets
from agentloop.evaluation import EvaluationQueue
from agentloop.generators.base import GeneratorSpec
from agentloop.generators.scripted import ScriptedGenerator
from agentloop.loop import Chain, LoopContext
from traces.store import TraceStore

pytestmark = pytest.mark.gpu


def test_a_geak_chain_is_timed_profiled_and_tuned(tmp_path, suite):
    task = suite["Activation/gelu"]
    answer = f"Here it is.\n```python\n{task.solution_path.read_text()}```\n"
    store = TraceStore(tmp_path / "t.db")
    store.ensure_run("gpu", {})
    queue = EvaluationQueue("cuda", workers=2)
    try:
        generator = ScriptedGenerator(GeneratorSpec(provider="scripted", model="m"), lambda request: answer)
        ctx = LoopContext(run_id="gpu", store=store, evaluations=queue,
                          budgets=Budgets(max_rounds=2, stagnation_rounds=5))
        chain = Chain(task, Arm("geak", method="geak"), 0, generator, "m", ctx)
        asyncio.run(chain.run())
    finally:
        queue.close()
    llm = [a for a in chain.history if a.trial == 0]
    trials = [a for a in chain.history if a.trial > 0]
    assert [a.verdict for a in llm] == ["CORRECT", "CORRECT"] and all(a.speedup for a in llm)
    assert trials and all(t.mode == "tune" and t.result is not None for t in trials)
    assert all(t.speedup for t in trials if t.verdict == "CORRECT")
    optimize_prompt = llm[1].prompt[1]["content"]
    assert "Roofline" in optimize_prompt and "registers" in optimize_prompt
    store.close()


def test_the_demo_replays_on_the_gpu(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AGENTLOOP_BASE_URL")}
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-m", "agentloop", "run", "--store", str(tmp_path / "t.db"), "--device",
                           "cuda", "--no-progress"], capture_output=True, text=True, timeout=900, env=env, cwd=root)
    assert done.returncode == 0, done.stderr[-3000:]
    store = TraceStore(tmp_path / "t.db")
    verdicts = {(a.task_id, a.round): a.verdict for a in store.attempts()}
    assert verdicts[("Activation/gelu", 0)] == "COMPILE_FAIL" and verdicts[("Math/softmax", 0)] == "OUTLIER_FAIL"
    assert all(a.speedup for a in store.attempts() if a.verdict == "CORRECT")
    store.close()
