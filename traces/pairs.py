"""Training data from a run: error-correction and optimization pairs, and the TRL dataset formats
(SFT messages, prompt-completion, DPO, KTO, stepwise), each deduplicated by code hash.

- error-correction pair: a failing attempt, the feedback it got (its successor's prompt), and that
  successor, when the successor's verdict is better;
- optimization pair: a correct attempt and its correct successor, faster by at least `threshold`
  (10% by default).
Completions are the extracted code in a ```python block, so a pair's two answers are comparable
under either prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evaluator.result import Verdict
from traces.records import Attempt

FORMATS = ("sft", "prompt-completion", "dpo", "kto", "stepwise")


@dataclass(frozen=True)
class Pair:
    kind: str  # "error-correction" or "optimization"
    before: Attempt
    after: Attempt


def rank(attempt: Attempt) -> int:
    return Verdict.rank_of(attempt.verdict)


def chains(attempts: list[Attempt]) -> dict[tuple, list[Attempt]]:
    """Each chain's model-written attempts in round order (tuning trials have no model text)."""
    out: dict[tuple, list[Attempt]] = {}
    for a in sorted(attempts, key=lambda a: (a.run_id, a.task_id, a.arm, a.sample, a.round)):
        if a.trial == 0 and a.code is not None:
            out.setdefault((a.run_id, a.task_id, a.arm, a.sample), []).append(a)
    return out


def find_pairs(attempts: list[Attempt], threshold: float = 0.1) -> list[Pair]:
    pairs, seen = [], set()
    for chain in chains(attempts).values():
        for before, after in zip(chain, chain[1:]):
            if after.round != before.round + 1:
                continue
            if not before.correct and rank(after) > rank(before):
                kind = "error-correction"
            elif before.correct and after.correct and before.speedup and after.speedup and (
                    after.speedup >= before.speedup * (1 + threshold)):
                kind = "optimization"
            else:
                continue
            key = (kind, before.code_hash, after.code_hash)
            if key not in seen and before.code_hash != after.code_hash:
                seen.add(key)
                pairs.append(Pair(kind, before, after))
    return pairs


def _completion(attempt: Attempt) -> list[dict]:
    return [{"role": "assistant", "content": f"```python\n{attempt.code.rstrip()}\n```"}]


def _unique(attempts, key=lambda a: a.code_hash):
    seen = set()
    for a in attempts:
        if a.code is not None and key(a) not in seen:
            seen.add(key(a))
            yield a


def sft(attempts: list[Attempt]) -> list[dict]:
    """Prompts and the answers that were CORRECT, as chat messages."""
    return [{"messages": a.prompt + _completion(a), "task_id": a.task_id}
            for a in _unique(x for x in attempts if x.correct and x.prompt)]


def prompt_completion(attempts: list[Attempt]) -> list[dict]:
    return [{"prompt": a.prompt, "completion": _completion(a), "task_id": a.task_id}
            for a in _unique(x for x in attempts if x.correct and x.prompt)]


def dpo(pairs: list[Pair]) -> list[dict]:
    """The earlier attempt's prompt; chosen: the better successor, rejected: the earlier answer."""
    return [{"prompt": p.before.prompt, "chosen": _completion(p.after), "rejected": _completion(p.before),
             "kind": p.kind, "task_id": p.before.task_id} for p in pairs if p.before.prompt]


def kto(attempts: list[Attempt]) -> list[dict]:
    """Every distinct answer with its prompt, labelled desirable when CORRECT."""
    return [{"prompt": a.prompt, "completion": _completion(a), "label": a.correct, "task_id": a.task_id}
            for a in _unique((x for x in attempts if x.prompt and x.trial == 0),
                             key=lambda a: (a.code_hash, a.correct))]


def stepwise(attempts: list[Attempt]) -> list[dict]:
    """One example per chain: the first prompt, each round's code as a step, labelled CORRECT or not."""
    out = []
    for chain in chains(attempts).values():
        if not chain[0].prompt:
            continue
        out.append({"prompt": chain[0].prompt[-1]["content"], "completions": [a.code for a in chain],
                    "labels": [a.correct for a in chain], "task_id": chain[0].task_id})
    return out


def dataset(fmt: str, attempts: list[Attempt], threshold: float = 0.1) -> list[dict]:
    if fmt == "sft":
        return sft(attempts)
    if fmt == "prompt-completion":
        return prompt_completion(attempts)
    if fmt == "dpo":
        return dpo(find_pairs(attempts, threshold))
    if fmt == "kto":
        return kto(attempts)
    if fmt == "stepwise":
        return stepwise(attempts)
    raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")


def write(records: list[dict], path: Path) -> Path:
    """JSON lines or Parquet by suffix; both load with datasets.load_dataset."""
    from traces.frames import export
    return export(pd.DataFrame(records), path)
