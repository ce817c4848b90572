"""The README.md written beside an export: what each file holds, how it was filtered, how long its
rows are in tokens, and how it was split."""

from __future__ import annotations

from pathlib import Path

from traces.pairs import row_tokens, token_percentiles

TRL_MAX_LENGTH = 1024  # TRL's trainers truncate prompt and completion together at this many tokens by default
FILTERS = {
    "attempts": "every attempt of the run, tuning trials included, one row each",
    "sft": "the model's CORRECT answers (no tuning trial, no echo of one), one row per distinct code",
    "prompt-completion": "as sft, as prompt and completion",
    "dpo": "pairs along parent_id under the successor's prompt: error-correction (the successor's verdict "
           "strictly better) and optimization (faster by at least the threshold and by twice the timing noise)",
    "kto": "every distinct answer of the model, labelled desirable when CORRECT",
    "stepwise": "one row per chain: its rounds as steps, labelled CORRECT or not",
}


def card(run_id: str, rows: dict[str, dict[str, list[dict]]], files: dict[str, list[Path]], threshold: float,
         eval_share: float) -> str:
    """`rows`: per format, its records per split ("all" when not split)."""
    lines = [f"# Training data from run {run_id}", "",
             "Exported by `agentloop harvest`. Every row carries run, task, arm, sample, and the answer's attempt "
             "id, round, verdict, speedup, model and token counts (for DPO, of both answers).", "",
             "| format | rows | split | tokens per row (p50 / p90 / p99 / max) | longer than "
             f"{TRL_MAX_LENGTH} | files |", "|---|---|---|---|---|---|"]
    for fmt, parts in rows.items():
        records = [r for part in parts.values() for r in part]
        sizes = ", ".join(f"{name} {len(part)}" for name, part in parts.items())
        lengths = token_percentiles(records) if fmt != "attempts" else None
        spread = " / ".join(f"{lengths[k]:.0f}" for k in ("p50", "p90", "p99", "max")) if lengths else "not recorded"
        over = _share_over(records) if lengths else "-"
        lines.append(f"| {fmt} | {len(records)} | {sizes} | {spread} | {over} | "
                     f"{', '.join(p.name for p in files.get(fmt, []))} |")
    lines += ["", "Filters:"] + [f"- {fmt}: {FILTERS[fmt]}" for fmt in rows] + [
        f"- optimization threshold: {threshold:g}", ""]
    if eval_share > 0:
        lines.append(f"Split: each task's rows go to eval when the SHA-256 of its id falls in the first {eval_share:g} "
                     "of the range, else to train: the same on every machine, and no task is in both.")
    lines += ["", f"Token counts are the model's API's own. TRL's trainers truncate at max_length ({TRL_MAX_LENGTH} by "
              "default): set it above the p99 shown, or rows are cut.",
              "Files with no rows are empty (`datasets.load_dataset` refuses an empty file; "
              "`pandas.read_parquet` reads the empty table with its columns)."]
    return "\n".join(lines) + "\n"


def _share_over(records: list[dict]) -> str:
    counted = row_tokens(records)
    return f"{100 * sum(n > TRL_MAX_LENGTH for n in counted) / len(counted):.0f}%" if counted else "-"
