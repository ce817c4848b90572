"""Training data from a run: error-correction and optimization pairs, and the TRL dataset formats
(SFT messages, prompt-completion, DPO, KTO, stepwise), each deduplicated by code hash.

A pair is an attempt and the attempt it was prompted with (its `parent_id`: the one whose code,
verdict and feedback its prompt showed; for an optimization, often the best kernel so far rather
than the previous round's), under the prompt the successor actually saw:
- error-correction: the parent failed, and the successor's verdict is strictly better (by
  `Verdict.rank`);
- optimization: both correct and timed, the successor faster by at least `threshold` (10% by
  default) and by more than twice the two timings' combined noise (their coefficients of variation).
A successor whose code is a tuning trial's kernel of its chain, echoed back, is the tuner's work,
not the model's: it makes no pair and no SFT example. Completions are the extracted code in a
```python block, so a pair's two answers are comparable. Every row carries metadata: run, task,
arm, sample, round, attempt id, model, verdict and speedup (for a pair, of both answers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evaluator.result import Verdict
from traces.records import Attempt

FORMATS = ("sft", "prompt-completion", "dpo", "kto", "stepwise")
NOISE_SIGMAS = 2.0


@dataclass(frozen=True)
class Pair:
    kind: str  # "error-correction" or "optimization"
    before: Attempt  # the parent
    after: Attempt   # the attempt prompted with it

    @property
    def prompt(self) -> list[dict]:
        return self.after.prompt


def rank(attempt: Attempt) -> int:
    return Verdict.rank_of(attempt.verdict)


def chains(attempts: list[Attempt]) -> dict[tuple, list[Attempt]]:
    """Each chain's model-written attempts in round order (tuning trials have no model text)."""
    out: dict[tuple, list[Attempt]] = {}
    for a in sorted(attempts, key=lambda a: (a.run_id, a.task_id, a.arm, a.sample, a.round)):
        if a.trial == 0 and a.code is not None:
            out.setdefault((a.run_id, a.task_id, a.arm, a.sample), []).append(a)
    return out


def _chain_key(a: Attempt) -> tuple:
    return (a.run_id, a.task_id, a.arm, a.sample)


def tuned_code(attempts: list[Attempt]) -> dict[tuple, set[str]]:
    """Per chain, the code hashes of its tuning trials."""
    out: dict[tuple, set[str]] = {}
    for a in attempts:
        if a.trial > 0 and a.code_hash:
            out.setdefault(_chain_key(a), set()).add(a.code_hash)
    return out


def _echoes_tuning(a: Attempt, tuned: dict[tuple, set[str]]) -> bool:
    return a.code_hash in tuned.get(_chain_key(a), set())


def _timing_cv(a: Attempt) -> float:
    perf = a.result.performance if a.result else None
    cv = perf.candidate.cv if perf and perf.candidate else None
    return float(cv) if cv is not None and math.isfinite(cv) else 0.0


def faster_beyond_noise(before: Attempt, after: Attempt, threshold: float) -> bool:
    if not (before.speedup and after.speedup):
        return False
    noise = NOISE_SIGMAS * math.hypot(_timing_cv(before), _timing_cv(after))
    return after.speedup >= before.speedup * (1 + max(threshold, noise))


def find_pairs(attempts: list[Attempt], threshold: float = 0.1) -> list[Pair]:
    by_id = {a.id: a for a in attempts if a.id is not None}
    tuned = tuned_code(attempts)
    pairs, seen = [], set()
    for after in sorted(attempts, key=lambda a: (a.run_id, a.task_id, a.arm, a.sample, a.round)):
        before = by_id.get(after.parent_id)
        if before is None or after.trial != 0 or after.code is None or before.code is None or not after.prompt:
            continue
        if _echoes_tuning(after, tuned) or before.code_hash == after.code_hash:
            continue
        if not before.correct and rank(after) > rank(before):
            kind = "error-correction"
        elif before.correct and after.correct and faster_beyond_noise(before, after, threshold):
            kind = "optimization"
        else:
            continue
        key = (kind, before.code_hash, after.code_hash)
        if key not in seen:
            seen.add(key)
            pairs.append(Pair(kind, before, after))
    return pairs


def metadata(a: Attempt, prefix: str = "") -> dict:
    return {f"{prefix}attempt_id": a.id, f"{prefix}round": a.round, f"{prefix}verdict": a.verdict,
            f"{prefix}speedup": a.speedup, f"{prefix}model": a.model, f"{prefix}prompt_tokens": a.tokens_in,
            f"{prefix}completion_tokens": a.tokens_out}


def _common(a: Attempt) -> dict:
    return {"run_id": a.run_id, "task_id": a.task_id, "arm": a.arm, "sample": a.sample}


def _completion(attempt: Attempt) -> list[dict]:
    return [{"role": "assistant", "content": f"```python\n{attempt.code.rstrip()}\n```"}]


def _unique(attempts, key=lambda a: a.code_hash):
    seen = set()
    for a in attempts:
        if a.code is not None and key(a) not in seen:
            seen.add(key(a))
            yield a


def _model_answers(attempts: list[Attempt]) -> list[Attempt]:
    """The model's own answers with a prompt: no tuning trial, and no echo of one."""
    tuned = tuned_code(attempts)
    return [a for a in attempts if a.trial == 0 and a.prompt and not _echoes_tuning(a, tuned)]


def sft(attempts: list[Attempt]) -> list[dict]:
    """Prompts and the answers that were CORRECT, as chat messages."""
    return [{"messages": a.prompt + _completion(a), **_common(a), **metadata(a)}
            for a in _unique(x for x in _model_answers(attempts) if x.correct)]


def prompt_completion(attempts: list[Attempt]) -> list[dict]:
    return [{"prompt": a.prompt, "completion": _completion(a), **_common(a), **metadata(a)}
            for a in _unique(x for x in _model_answers(attempts) if x.correct)]


def dpo(pairs: list[Pair]) -> list[dict]:
    """The prompt the successor saw; chosen: the successor's answer, rejected: its parent's."""
    return [{"prompt": p.prompt, "chosen": _completion(p.after), "rejected": _completion(p.before), "kind": p.kind,
             **_common(p.after), **metadata(p.after, "chosen_"), **metadata(p.before, "rejected_")} for p in pairs]


def kto(attempts: list[Attempt]) -> list[dict]:
    """Every distinct answer with its prompt, labelled desirable when CORRECT."""
    return [{"prompt": a.prompt, "completion": _completion(a), "label": a.correct, **_common(a), **metadata(a)}
            for a in _unique(_model_answers(attempts), key=lambda a: (a.code_hash, a.correct))]


def stepwise(attempts: list[Attempt]) -> list[dict]:
    """One example per chain: the first prompt, each round's answer as a step (its code, or for a
    round without code, what the model wrote), labelled CORRECT or not; chains with the same prompt
    and the same steps are one example."""
    out, seen = [], set()
    for chain in _model_rounds(attempts).values():
        if not chain[0].prompt:
            continue
        steps = [a.code if a.code is not None else (a.response or "") for a in chain]
        key = (chain[0].prompt[-1]["content"], tuple(steps))
        if key in seen:
            continue
        seen.add(key)
        out.append({"prompt": key[0], "completions": steps, "labels": [a.correct for a in chain],
                    **_common(chain[0]), "verdicts": [a.verdict for a in chain], "model": chain[0].model})
    return out


def _model_rounds(attempts: list[Attempt]) -> dict[tuple, list[Attempt]]:
    """Each chain's rounds the model answered (tuning trials left out), with or without code."""
    out: dict[tuple, list[Attempt]] = {}
    for a in sorted(attempts, key=lambda a: (a.run_id, a.task_id, a.arm, a.sample, a.round)):
        if a.trial == 0:
            out.setdefault(_chain_key(a), []).append(a)
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


def _meta_columns(prefix: str = "") -> list[str]:
    return [f"{prefix}{name}" for name in ("attempt_id", "round", "verdict", "speedup", "model", "prompt_tokens",
                                           "completion_tokens")]


COMMON = ["run_id", "task_id", "arm", "sample"]
COLUMNS = {
    "sft": ["messages", *COMMON, *_meta_columns()],
    "prompt-completion": ["prompt", "completion", *COMMON, *_meta_columns()],
    "dpo": ["prompt", "chosen", "rejected", "kind", *COMMON, *_meta_columns("chosen_"), *_meta_columns("rejected_")],
    "kto": ["prompt", "completion", "label", *COMMON, *_meta_columns()],
    "stepwise": ["prompt", "completions", "labels", *COMMON, "verdicts", "model"],
}


def write(records: list[dict], path: Path, fmt: str | None = None) -> Path:
    """JSON lines or Parquet by suffix; both load with datasets.load_dataset. Without rows: an
    empty JSON Lines file, and a Parquet table with the format's columns and no rows."""
    from traces.frames import export
    return export(pd.DataFrame(records, columns=COLUMNS.get(fmt) if not records else None), path)


def load(path: Path):
    """An export as a `datasets.Dataset`, one without rows included: `datasets.load_dataset` refuses a
    file with no rows, so an empty export becomes a dataset of no rows with its format's columns
    (the format is the file name's first part, as `agentloop export` names files)."""
    import datasets

    path = Path(path)
    kind = {".parquet": "parquet", ".jsonl": "json"}.get(path.suffix)
    if kind is None:
        raise ValueError(f"{path}: an export is .parquet or .jsonl")
    if kind == "parquet":
        empty = pd.read_parquet(path).empty
        columns = list(pd.read_parquet(path).columns)
    else:
        empty, columns = path.stat().st_size == 0, COLUMNS.get(path.name.split(".")[0], [])
    if empty:
        return datasets.Dataset.from_dict({column: [] for column in columns})
    return datasets.load_dataset(kind, data_files=str(path), split="train")


def split_of(task_id: str, eval_share: float) -> str:
    """"eval" or "train" for every row of a task, the same on every run and machine: a task's rows
    never straddle the split, so no prompt of an evaluation task is seen in training."""
    import hashlib

    position = int(hashlib.sha256(task_id.encode()).hexdigest()[:8], 16) / 2 ** 32
    return "eval" if position < eval_share else "train"


def split(records: list[dict], eval_share: float) -> dict[str, list[dict]]:
    parts: dict[str, list[dict]] = {"train": [], "eval": []}
    for record in records:
        parts[split_of(record["task_id"], eval_share)].append(record)
    return parts


def row_tokens(records: list[dict]) -> list[int]:
    """Prompt plus completion tokens of each row's answer, as the model's API counted them (rows
    without a count are left out)."""
    lengths = [(r.get("prompt_tokens") or r.get("chosen_prompt_tokens") or 0) +
               (r.get("completion_tokens") or r.get("chosen_completion_tokens") or 0) for r in records]
    return [n for n in lengths if n]


def token_percentiles(records: list[dict]) -> dict[str, float] | None:
    """p50, p90, p99 and max of `row_tokens`."""
    import numpy as np

    lengths = row_tokens(records)
    if not lengths:
        return None
    return {name: float(np.percentile(lengths, q)) for name, q in (("p50", 50), ("p90", 90), ("p99", 99), ("max", 100))}
