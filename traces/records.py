"""The attempt record: one candidate a chain produced, what it was told, what it got."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from typing import Any

from evaluator.result import EvalResult


def code_hash(code: str | None) -> str | None:
    return hashlib.sha256(code.encode()).hexdigest() if code is not None else None


@dataclass
class Attempt:
    """A row of the trace store, written once, before the chain's next step, never rewritten.

    `round` counts LLM rounds in the chain (0 is the first answer); TUNE trials share their
    round and are numbered by `trial` (0 for an LLM attempt). `mode` is initial, repair,
    optimize, strategy or tune; `decision` is what DECIDE chose after this attempt: the next
    mode, or `stop: <reason>`.
    """

    run_id: str
    task_id: str
    arm: str
    sample: int
    round: int
    mode: str
    decision: str
    trial: int = 0
    parent_id: int | None = None
    prompt: list[dict[str, str]] = field(default_factory=list)
    response: str | None = None
    code: str | None = None
    result: EvalResult | None = None
    feedback: list[str] = field(default_factory=list)
    model: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached_response: bool = False
    eval_s: float = 0.0
    started_at: float = 0.0
    finished_at: float = 0.0
    id: int | None = None

    @property
    def code_hash(self) -> str | None:
        return code_hash(self.code)

    @property
    def verdict(self) -> str | None:
        return self.result.verdict.value if self.result else None

    @property
    def correct(self) -> bool:
        return bool(self.result and self.result.correct)

    @property
    def speedup(self) -> float | None:
        return self.result.speedup if self.result else None

    @property
    def stopped(self) -> bool:
        return self.decision.startswith("stop")

    def row(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "id"}
        data["prompt"] = json.dumps(self.prompt)
        data["feedback"] = json.dumps(self.feedback)
        data["result"] = self.result.to_json() if self.result else None
        data["code_hash"] = self.code_hash
        data["verdict"] = self.verdict
        data["speedup"] = self.speedup
        data["cached_response"] = int(self.cached_response)
        return data

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> "Attempt":
        data = {k: row[k] for k in cls.__dataclass_fields__ if k in row}
        data["prompt"] = json.loads(row["prompt"] or "[]")
        data["feedback"] = json.loads(row["feedback"] or "[]")
        data["result"] = EvalResult.from_json(row["result"]) if row["result"] else None
        data["cached_response"] = bool(row["cached_response"])
        return cls(**data)
