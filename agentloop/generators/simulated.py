"""A simulator of a model, not a model: for offline experiments whose ground truth is known.

It answers every kernel request with the task's shipped reference solution (correct) or with that
solution broken so that Triton refuses to compile it (COMPILE_FAIL), drawn with probabilities that
depend on what the prompt holds:

- the first round: correct with probability `p_initial`;
- after a correct kernel (an optimize prompt): correct with probability `p_keep`;
- after a failure (a repair prompt): correct with probability `p_repair` plus, for each feedback
  signal present in the prompt, `effects[signal]` (capped at `p_max`).

So an A/B test of two arms that differ in their feedback signals has a known true effect, which
`agentloop ab` should find (and the statistics can be checked against). Draws are a function of
(seed, task, arm, sample, round), so a resumed run gets the same answers."""

from __future__ import annotations

import ast
import hashlib
import random
import re

from agentloop.generators.base import Fatal, GeneratorSpec, Request, Response
from traces.untrusted_text import fenced

DEFAULTS = {"p_initial": 0.3, "p_keep": 0.95, "p_repair": 0.1, "p_max": 0.95, "seed": 0}
DEFAULT_EFFECTS = {"compile_errors": 0.5, "correctness": 0.3, "outliers": 0.3, "reflection": 0.1, "history": 0.05}
# The first words of each feedback section (prompts/feedback/*.j2): how the simulator sees which
# signals a prompt carries. A test renders every section and checks that its marker is there.
SIGNAL_MARKERS = {"compile_errors": "Error (", "correctness": "Wrong results:", "outliers": "Outlier failure:",
                  "profiler": "Performance on the GPU", "history": "Earlier attempts in this chain:",
                  "reflection": "Your own analysis of the failure:"}
PREVIOUS_VERDICT = re.compile(r"got the verdict ([A-Z_]+)")
BROKEN_LINE = "_ = tl.arange(0, 3)  # not a power of 2: Triton refuses to compile this"


def broken(source: str) -> str:
    """`source` with a line that Triton refuses to compile at the top of its first @triton.jit
    function's body."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list):
            first = node.body[0]
            lines = source.splitlines(keepends=True)
            lines.insert(first.lineno - 1, " " * first.col_offset + BROKEN_LINE + "\n")
            return "".join(lines)
    raise Fatal("simulated: the reference solution has no @triton.jit function to break")


class SimulatedGenerator:
    name = "simulated"

    def __init__(self, spec: GeneratorSpec):
        self.spec = spec
        options = dict(spec.options)
        unknown = sorted(set(options) - set(DEFAULTS) - {"effects"})
        if unknown:
            raise Fatal(f"simulated: unknown option {unknown[0]!r}; options: effects, {', '.join(DEFAULTS)}")
        self.settings = {key: options.get(key, default) for key, default in DEFAULTS.items()}
        self.effects = {**DEFAULT_EFFECTS, **dict(options.get("effects") or {})}
        unknown = sorted(set(self.effects) - set(SIGNAL_MARKERS))
        if unknown:
            raise Fatal(f"simulated: unknown feedback signal {unknown[0]!r} in effects; "
                        f"signals: {', '.join(SIGNAL_MARKERS)}")
        self._solutions: dict[str, str] = {}

    def p_correct(self, prompt: str, round_: int) -> float:
        """The probability that the answer to `prompt` is correct: the simulator's whole model."""
        if round_ == 0:
            return float(self.settings["p_initial"])
        previous = PREVIOUS_VERDICT.search(prompt)
        if previous and previous.group(1) == "CORRECT":
            return float(self.settings["p_keep"])
        signals = [name for name, marker in SIGNAL_MARKERS.items() if marker in prompt]
        p = float(self.settings["p_repair"]) + sum(float(self.effects.get(name, 0.0)) for name in signals)
        return min(p, float(self.settings["p_max"]))

    def _draw(self, request: Request) -> float:
        key = f"{self.settings['seed']}|{request.task_id}|{request.arm}|{request.sample}|{request.round}"
        return random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")).random()

    def _solution(self, task_id: str) -> str:
        if task_id not in self._solutions:
            from evaluator.loader import TaskLoadError, find_task, load_suite
            try:
                task = find_task(task_id, load_suite())
            except TaskLoadError as exc:
                raise Fatal(f"simulated: {exc}") from None
            if task.solution_path is None:
                raise Fatal(f"simulated: {task_id} ships no reference solution to answer with")
            self._solutions[task_id] = task.solution_path.read_text()
        return self._solutions[task_id]

    async def generate(self, request: Request) -> Response:
        if request.purpose != "kernel":
            text = "The last module failed; the next one keeps the kernel and fixes what the feedback names."
        else:
            prompt = "\n".join(m.content for m in request.messages if m.role == "user")
            correct = self._draw(request) < self.p_correct(prompt, request.round)
            solution = self._solution(request.task_id)
            text = fenced(solution if correct else broken(solution), "python")
        return Response(text=text, model=self.spec.model, tokens_in=0, tokens_out=0, cost_usd=0.0, latency_s=0.0)

    async def close(self) -> None:
        pass
