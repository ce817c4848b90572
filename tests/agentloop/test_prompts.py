"""Prompt rendering: every kind and every feedback signal, StrictUndefined, and no reference
solution ever reaches a prompt."""

import jinja2
import pytest

from agentloop.feedback import PROVIDERS, FeedbackContext, sections
from agentloop.prompts import KINDS, environment, prompts_root, render
from evaluator.loader import load_suite
from tests.agentloop.scripted import fake_result
from traces.records import Attempt

SUITE = load_suite()


def attempt(task, verdict, speedup=None, round_=0, code="import triton\n"):
    return Attempt(run_id="r", task_id=task.id, arm="a", sample=0, round=round_, mode="initial", decision="",
                   code=code, result=fake_result(task.id, verdict, speedup))


@pytest.mark.parametrize("verdict, signal, text", [
    ("COMPILE_FAIL", "compile_errors", "Error (COMPILE_FAIL"),
    ("INCORRECT", "correctness", "Wrong results"),
    ("OUTLIER_FAIL", "outliers", "Outlier failure"),
    ("CORRECT", "profiler", "Roofline"),
    ("INCORRECT", "history", "Earlier attempts in this chain"),
    ("INCORRECT", "reflection", "Your own analysis"),
])
def test_every_signal_renders_and_can_be_turned_off(verdict, signal, text):
    task = SUITE["Math/softmax"]
    history = [attempt(task, "NO_CODE"), attempt(task, verdict, 1.5 if verdict == "CORRECT" else None, 1)]
    ctx = FeedbackContext(task, history[-1], history, reflection="The max is missing.")
    kind = "optimize" if verdict == "CORRECT" else "repair"
    on = render(kind, task, history[-1], sections([signal], ctx))[1].content
    off = render(kind, task, history[-1], sections([], ctx))[1].content
    assert text in on and text not in off
    assert f"verdict {verdict}" in off, "the verdict itself is always said"


def test_providers_say_nothing_when_they_do_not_apply():
    task = SUITE["Math/softmax"]
    correct = attempt(task, "CORRECT")  # no timing: the CPU
    ctx = FeedbackContext(task, correct, [correct])
    assert sections(list(PROVIDERS), ctx) == []


@pytest.mark.parametrize("task_id", sorted(SUITE))
def test_no_reference_solution_reaches_any_prompt(task_id):
    task = SUITE[task_id]
    public = " ".join(f"{task.signature} {task.description}".split())  # the solution repeats its signature
    solution_lines = {line.strip() for line in task.solution_path.read_text().splitlines()
                      if len(line.strip()) > 24 and " ".join(line.split()) not in public}
    reference_source = task.source_path.read_text()
    history = [attempt(task, v, 1.2 if v == "CORRECT" else None, i) for i, v in
               enumerate(["COMPILE_FAIL", "INCORRECT", "OUTLIER_FAIL", "CORRECT"])]
    for kind in KINDS:
        parent = None if kind == "initial" else history[-1] if kind == "optimize" else history[-2]
        ctx = FeedbackContext(task, parent or history[0], history, reflection="r")
        text = "\n".join(m.content for m in render(kind, task, parent, sections(list(PROVIDERS), ctx), history))
        leaked = [line for line in solution_lines if line in text]
        assert not leaked, f"{kind} prompt contains the reference solution: {leaked[0]!r}"
        assert "def reference(" not in text and "make_inputs" not in text
        assert task.signature in text
    assert "def reference(" in reference_source


def test_templates_use_strict_undefined():
    env = environment(str(prompts_root()))
    assert env.undefined is jinja2.StrictUndefined
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ missing }}").render()
