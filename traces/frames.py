"""A store's attempts as pandas DataFrames (one row per attempt, one per chain), and their export
to Parquet and JSON lines."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from traces.records import Attempt
from traces.store import TraceStore

COMPILE_FAILURES = {"NO_CODE", "STATIC_REJECT", "COMPILE_FAIL"}
CHAIN_KEY = ["run_id", "task_id", "arm", "sample"]


def arm_methods(store: TraceStore, run_id: str) -> dict[str, str]:
    """Arm name -> method, from the run's configuration (unknown arms map to their own name)."""
    try:
        config = store.run_config(run_id)
    except Exception:  # noqa: BLE001 - a hand-built store may carry no configuration
        return {}
    return {arm["name"]: arm.get("method", arm["name"]) for arm in config.get("arms", [])}


def device_name(attempt: Attempt) -> str | None:
    """The GPU model an attempt was evaluated on ("CPU interpreter" without one); None if never evaluated."""
    if attempt.result is None:
        return None
    env = attempt.result.environment
    return env.gpu or ("CPU interpreter" if env.interpreter else env.device)


def attempts_frame(attempts: list[Attempt], methods: dict[str, str] | None = None) -> pd.DataFrame:
    methods = methods or {}
    rows = [{
        "id": a.id, "run_id": a.run_id, "task_id": a.task_id, "category": a.task_id.split("/", 1)[0],
        "arm": a.arm, "method": methods.get(a.arm, a.arm), "sample": a.sample, "round": a.round, "trial": a.trial,
        "parent_id": a.parent_id, "mode": a.mode, "decision": a.decision, "verdict": a.verdict or "NONE",
        "correct": a.correct, "compiled": (a.verdict or "NO_CODE") not in COMPILE_FAILURES,
        "speedup": a.speedup, "reason": a.result.reason if a.result else "", "model": a.model,
        "tokens_in": a.tokens_in, "tokens_out": a.tokens_out, "cost_usd": a.cost_usd, "latency_s": a.latency_s,
        "eval_s": a.eval_s, "cached_response": a.cached_response, "code_hash": a.code_hash,
        "feedback": ",".join(a.feedback), "started_at": a.started_at, "finished_at": a.finished_at,
        "device": device_name(a), "host": a.result.environment.host if a.result else None,
    } for a in attempts]
    frame = pd.DataFrame(rows, columns=list(rows[0]) if rows else None)
    if not frame.empty:
        frame["speedup"] = frame["speedup"].astype("float64")
    return frame


NO_ATTEMPT = "NO_ATTEMPT"  # the verdict of a chain that never produced an attempt


def load_frame(store: TraceStore, run_id: str | None = None, with_empty_chains: bool = False) -> pd.DataFrame:
    """One row per attempt. `with_empty_chains`: also one row (round 0, verdict NO_ATTEMPT, the
    chain's stop reason) per chain of the run that never produced an attempt, so that figures over
    chains count it as the failure it is (exports of attempts leave these rows out)."""
    attempts = store.attempts(run_id)
    methods = arm_methods(store, run_id) if run_id else {}
    frame = attempts_frame(attempts, methods)
    empty = store.chains_without_attempts(run_id) if with_empty_chains and run_id else []
    if not empty:
        return frame
    stand_ins = attempts_frame([Attempt(run_id=run_id, task_id=c["task_id"], arm=c["arm"], sample=c["sample"], round=0,
                                        mode="initial", decision=f"stop: {c['reason']}") for c in empty], methods)
    stand_ins["verdict"] = NO_ATTEMPT
    stand_ins["reason"] = [c["reason"] for c in empty]
    return pd.concat([frame, stand_ins], ignore_index=True) if not frame.empty else stand_ins


def llm_rounds(frame: pd.DataFrame) -> pd.DataFrame:
    """Attempts written by the model (tuning trials left out), in chain and round order."""
    return frame[frame["trial"] == 0].sort_values(CHAIN_KEY + ["round"])


def chains_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per chain: its first correct round, the speedup there, its best correct speedup."""
    rows = []
    for key, chain in llm_rounds(frame).groupby(CHAIN_KEY, sort=True):
        correct = chain[chain["correct"]]
        first = correct.iloc[0] if len(correct) else None
        everything = frame.set_index(CHAIN_KEY).loc[[key]] if len(frame) else chain
        best = everything[everything["correct"]]["speedup"].max() if everything["correct"].any() else float("nan")
        rows.append({**dict(zip(CHAIN_KEY, key)), "category": chain["category"].iloc[0],
                     "method": chain["method"].iloc[0], "rounds": len(chain), "correct": first is not None,
                     "first_correct_round": int(first["round"]) if first is not None else None,
                     "first_correct_speedup": float(first["speedup"]) if first is not None else float("nan"),
                     "best_speedup": float(best), "final_verdict": chain["verdict"].iloc[-1]})
    return pd.DataFrame(rows)


def export(frame: pd.DataFrame, path: Path) -> Path:
    """Write `frame` by the file's suffix: .parquet or .jsonl."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    elif path.suffix == ".jsonl" and frame.empty:
        path.write_text("")  # zero lines (pandas would write a lone newline, which is not a record)
    elif path.suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True, force_ascii=False)
    else:
        raise ValueError(f"{path}: export to .parquet or .jsonl")
    return path
