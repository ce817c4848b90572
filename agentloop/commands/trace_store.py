"""`agentloop runs`, `report` and `harvest`: a trace store's runs, as a table, a report and datasets."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from agentloop.commands.common import fail, out

StoreOption = typer.Option(Path("runs/agentloop.db"), "--store", help="The trace store (SQLite).")
DATASET_SUFFIXES = (".jsonl", ".parquet")


def open_store(store: Path):
    from traces.store import StoreError, TraceStore
    if not store.exists():
        fail(f"{store}: no trace store here")
    try:
        return TraceStore(store)
    except StoreError as exc:
        fail(str(exc))


def run_id_in(trace, run: str, listed: list[dict] | None = None) -> str:
    """The id of the run `run` names in full or by a unique prefix."""
    runs = [r["id"] for r in (listed if listed is not None else trace.runs())]
    if run in runs:
        return run
    matches = [r for r in runs if r.startswith(run)]
    if len(matches) == 1:
        return matches[0]
    fail(f"no run {run!r} in the store" + (f"; runs: {', '.join(runs)}" if runs else ""))
    return ""


def run_with_attempts(trace, run: str) -> str:
    """The run's id, where it has attempts to report on or export."""
    listed = trace.runs()
    run_id = run_id_in(trace, run, listed)
    if not next((r["attempts"] for r in listed if r["id"] == run_id), 0):
        fail(f"run {run_id!r} has no attempts (its chains produced none); nothing to report or export")
    return run_id


def runs_command(store: Path = StoreOption) -> None:
    """Runs kept in a trace store."""
    trace = open_store(store)
    table = Table(title=str(store))
    for column in ("run", "created", "attempts", "correct", "cost $"):
        table.add_column(column)
    import datetime
    for run in trace.runs():
        created = datetime.datetime.fromtimestamp(run["created_at"]).strftime("%Y-%m-%d %H:%M")
        table.add_row(run["id"], created, str(run["attempts"]), str(run["correct"] or 0), f"{run['cost_usd'] or 0:.4f}")
    trace.close()
    out.print(table)


def report_command(
    run: str = typer.Argument(..., help="Run id (or a unique prefix); `agentloop runs` lists them."),
    store: Path = StoreOption,
    out_dir: Optional[Path] = typer.Option(None, "--out", help="Folder for report.html and summary.md."),
) -> None:
    """Write a self-contained HTML report and a markdown summary of a run."""
    from traces.report import write_report
    trace = open_store(store)
    run_id = run_with_attempts(trace, run)
    html, markdown = write_report(trace, run_id, out_dir or Path("reports") / run_id)
    trace.close()
    out.print(f"wrote {html} and {markdown}")


def check_formats(formats: list[str]) -> None:
    from traces import pairs
    unknown = [f for f in formats if f not in pairs.FORMATS + ("attempts",)]
    if unknown:
        fail(f"unknown format {unknown[0]!r}; choose from attempts, {', '.join(pairs.FORMATS)}")


def export_attempts(trace, run_id: str, folder: Path) -> tuple[dict[str, list], list[Path]]:
    """Every attempt of the run, one record each; the records (all in one part) and the files written."""
    from traces.frames import export, load_frame
    frame = load_frame(trace, run_id)
    return {"all": frame.to_dict("records")}, [export(frame, folder / f"attempts{suffix}")
                                               for suffix in DATASET_SUFFIXES]


def export_dataset(fmt: str, attempts: list, folder: Path, threshold: float,
                   eval_share: float) -> tuple[dict[str, list], list[Path]]:
    """The training records of format `fmt`, split by task into train and eval parts where
    `eval_share` holds some out; the parts and the files written."""
    from traces import pairs
    records = pairs.dataset(fmt, attempts, threshold)
    parts = pairs.split(records, eval_share) if eval_share > 0 else {"all": records}
    files = [pairs.write(part, folder / f"{fmt}{'' if name == 'all' else '.' + name}{suffix}", fmt)
             for name, part in parts.items() for suffix in DATASET_SUFFIXES]
    return parts, files


def harvest_command(
    run: str = typer.Argument(..., help="Run id (or a unique prefix)."),
    formats: list[str] = typer.Option(["sft", "dpo"], "--format",
                                      help="attempts, sft, prompt-completion, dpo, kto or stepwise (repeatable)."),
    store: Path = StoreOption,
    out_dir: Path = typer.Option(Path("datasets"), "--out",
                                 help="Folder for the exported files (one subfolder per run)."),
    threshold: float = typer.Option(0.1, "--threshold", help="Optimization pairs: faster by at least this share."),
    eval_share: float = typer.Option(0.0, "--eval-share", min=0.0, max=1.0,
                                     help="Share of tasks held out as eval files (by task, deterministic)."),
) -> None:
    """Export training data from a run as JSON lines and Parquet (loadable with `datasets`), with a
    dataset card (README.md) beside them."""
    from traces import dataset_card
    trace = open_store(store)
    run_id = run_with_attempts(trace, run)
    check_formats(formats)
    attempts = trace.attempts(run_id)
    folder = out_dir / run_id
    table = Table(title=f"harvest of {run_id}")
    for column in ("format", "records", "files"):
        table.add_column(column)
    rows, files = {}, {}
    for fmt in formats:
        if fmt == "attempts":
            rows[fmt], files[fmt] = export_attempts(trace, run_id, folder)
        else:
            rows[fmt], files[fmt] = export_dataset(fmt, attempts, folder, threshold, eval_share)
        table.add_row(fmt, str(sum(len(part) for part in rows[fmt].values())), ", ".join(str(p) for p in files[fmt]))
    trace.close()
    (folder / "README.md").write_text(dataset_card.card(run_id, rows, files, threshold, eval_share))
    out.print(table)
