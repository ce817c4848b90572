"""Render prompts from the jinja2 templates in prompts/ (StrictUndefined: a missing value is an error)."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import jinja2

from agentloop.generators.base import Message
from evaluator.contracts import dtype_name
from evaluator.task import Task
from traces.records import Attempt
from traces.untrusted_text import fenced, plain

PROMPTS_ENV = "AGENTLOOP_PROMPTS_DIR"
KINDS = ("initial", "repair", "strategy", "optimize", "reflect")
CONTRACT_WORDS = {
    "tolerance": "results are compared with a float64 reference, within a tolerance that follows the reference's "
                 "own rounding error in each dtype",
    "exact": "results must match exactly",
    "approximate": "results are judged by approximation metrics (cosine similarity, relative L1 error, relative "
                   "RMSE, SQNR) and must show the specified quantization really happened",
    "statistical": "results are judged by statistical tests of their distribution, and every call must draw fresh "
                   "random numbers",
    "property": "results that are not unique are judged by the properties they must have (for example a "
                "factorization must reproduce its input within the reference's rounding error and its factors must "
                "have the required structure)",
}


@functools.lru_cache(maxsize=1)
def prompts_root() -> Path:
    if os.environ.get(PROMPTS_ENV):
        return Path(os.environ[PROMPTS_ENV])
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "prompts", here / "_prompts"):
        if (candidate / "system.j2").exists():
            return candidate
    raise FileNotFoundError(f"no prompt templates found next to {here}; set {PROMPTS_ENV}")


@functools.lru_cache(maxsize=4)
def environment(root: str) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(root), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False,
                             autoescape=False)
    env.filters["fenced"] = fenced  # model and candidate text: in a block it cannot close
    env.filters["plain"] = plain
    return env


def task_view(task: Task) -> dict[str, Any]:
    """What a prompt may say about a task: never its reference implementation or solution."""
    return {"id": task.id, "entry": task.entry, "signature": task.signature, "difficulty": task.difficulty,
            "description": task.description, "dtypes": [dtype_name(d) for d in task.dtypes],
            "allowed": [{"api": a.api, "why": a.why} for a in task.allowed], "mutates": list(task.mutates),
            "contract_words": CONTRACT_WORDS[task.contract.kind]}


def attempt_view(attempt: Attempt) -> dict[str, Any]:
    return {"round": attempt.round, "trial": attempt.trial, "verdict": attempt.verdict or "none",
            "code": (attempt.code or "(no code was found in the answer)").rstrip(), "speedup": attempt.speedup}


def render(kind: str, task: Task, parent: Attempt | None = None, sections: list[tuple[str, dict]] = (),
           ancestors: list[Attempt] = (), failures: int = 0) -> list[Message]:
    if kind not in KINDS:
        raise ValueError(f"unknown prompt kind {kind!r}")
    env = environment(str(prompts_root()))
    context = {"task": task_view(task), "parent": attempt_view(parent) if parent else None,
               "sections": list(sections),
               "ancestors": [attempt_view(a) for a in ancestors], "failures": failures}
    user = env.get_template(f"{kind}.j2").render(**context).strip() + "\n"
    system = env.get_template("system.j2").render().strip()
    return [Message("system", system), Message("user", user)]
