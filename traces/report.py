"""`agentloop report RUN`: one self-contained HTML file (plots embedded as PNG data, tables, each
chain's attempts with code diffs and the feedback given) and a markdown summary."""

from __future__ import annotations

import base64
import difflib
import hashlib
import io
import math
from pathlib import Path

import jinja2
import markupsafe
import numpy as np
import pandas as pd

from traces import attribution, stats
from traces.ab import FAST_P_GRID
from traces.frames import chains_frame, load_frame
from traces.records import Attempt
from traces.store import TraceStore
from traces.untrusted_text import markdown_text

TEMPLATES = Path(__file__).resolve().parent / "templates"


def _png(figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt
    plt.close(figure)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def count_colour(value: float, peak: float) -> str:
    """A count's colour on the blue scale: white on its dark half, black on its light half."""
    return "white" if peak > 0 and value > peak / 2 else "black"


def _plots(frame: pd.DataFrame, rounds: pd.DataFrame, chains: pd.DataFrame) -> dict[str, str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    plots = {}
    if not rounds.empty:
        fig, ax = plt.subplots(figsize=(6.5, 3.2))
        # distinct markers and dashes: lines that coincide (correct, correct by this round at round 0) stay visible
        for column, label, style in (("compile_rate", "compiles", "o-"), ("correct_rate", "correct", "s--"),
                                     ("correct_by_round", "correct by this round", "^:"),
                                     ("fast_1_by_round", "fast_1 by this round (over tasks)", "D-.")):
            if rounds[column].notna().any():
                ax.plot(rounds["round"], rounds[column], style, label=label, markersize=6, alpha=0.85)
        ax.set_xlabel("round")
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.set_ylabel("share")
        ax.set_ylim(0, 1.05)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)  # beside the lines, never over them
        ax.set_title("Per round")
        plots["rounds"] = _png(fig)
    if not chains.empty and chains["best_speedup"].notna().any():
        fig, ax = plt.subplots(figsize=(6.5, 3.2))
        for arm, rows in chains.groupby("arm"):
            curve = [stats.kernelbench_fast_p(rows, p) for p in FAST_P_GRID]
            ax.plot(FAST_P_GRID, curve, marker=".", label=arm)
        ax.set_xlabel("p (speedup over eager PyTorch)")
        ax.set_ylabel("fast_p")
        ax.legend(fontsize=8)
        ax.set_title("fast_p by arm")
        plots["fast_p"] = _png(fig)
    table = stats.transition_matrix(frame)
    if not table.empty:
        fig, ax = plt.subplots(figsize=(5.5, 4.5))
        counts = table.to_numpy()
        ax.imshow(counts, cmap="Blues", vmin=0)
        ax.set_xticks(range(len(table.columns)), table.columns, rotation=45, ha="right", fontsize=7)
        ax.set_yticks(range(len(table.index)), table.index, fontsize=7)
        for (i, j), value in np.ndenumerate(counts):
            ax.text(j, i, str(value), ha="center", va="center", fontsize=8, color=count_colour(value, counts.max()))
        ax.set_title("Verdict at round r (rows) to round r+1")
        plots["transitions"] = _png(fig)
    return plots


def _diff(parent: Attempt | None, attempt: Attempt) -> str:
    if parent is None or parent.code is None or attempt.code is None:
        return ""
    lines = difflib.unified_diff(parent.code.splitlines(), attempt.code.splitlines(),
                                 f"round {parent.round}", f"round {attempt.round}", lineterm="", n=2)
    return "\n".join(lines)


def _chains_view(attempts: list[Attempt]) -> list[dict]:
    by_id = {a.id: a for a in attempts}
    groups: dict[tuple, list[Attempt]] = {}
    for a in sorted(attempts, key=lambda a: (a.task_id, a.arm, a.sample, a.round, a.trial)):
        groups.setdefault((a.task_id, a.arm, a.sample), []).append(a)
    view = []
    for (task, arm, sample), chain in groups.items():
        view.append({"task": task, "arm": arm, "sample": sample, "attempts": [{
            "round": a.round, "trial": a.trial, "mode": a.mode, "verdict": a.verdict or "none",
            "speedup": a.speedup, "decision": a.decision, "reason": a.result.reason if a.result else "",
            "feedback": ", ".join(a.feedback), "prompt": a.prompt[-1]["content"] if a.prompt else "",
            "code": a.code or "", "diff": _diff(by_id.get(a.parent_id), a)} for a in chain]})
    return view


def _table(frame: pd.DataFrame, percent: tuple[str, ...] = ()) -> dict:
    def cell(column, value):
        if isinstance(value, float):
            if math.isnan(value):
                return "-"
            return f"{100 * value:.1f}%" if column in percent else f"{value:.3g}"
        return str(value)
    return {"columns": [str(c) for c in frame.columns],
            "rows": [[cell(c, v) for c, v in zip(frame.columns, row)] for row in frame.itertuples(index=False)]}


def build_context(store: TraceStore, run_id: str) -> dict:
    frame = load_frame(store, run_id, with_empty_chains=True)
    if frame.empty:
        raise ValueError(f"run {run_id!r} has no attempts")
    rounds = stats.per_round(frame)
    chains = chains_frame(frame)
    rate_columns = tuple(c for c in rounds.columns if c.endswith("_rate") or "fast_" in c or c == "correct_by_round")
    categories = pd.DataFrame([{"category": c, **stats.summary(rows)} for c, rows in frame.groupby("category")])
    return {
        "run_id": run_id, "summary": stats.summary(frame), "rounds": _table(rounds, rate_columns),
        "categories": _table(categories[["category", "chains", "correct_chains", "correct_rate", "correct_rate_95ci",
                                         "geomean_best_speedup", "geomean_best_speedup_95ci", "tokens", "cost_usd"]],
                             ("correct_rate",)),
        "devices": _table(stats.by_device(frame)),
        "rescued": stats.rescued_vs_start(frame), "attribution": attribution.attribution(frame),
        "transitions": stats.transition_matrix(frame), "plots": _plots(frame, rounds, chains),
        "chains": _chains_view(store.attempts(run_id)),
        "timed": bool(frame["speedup"].notna().any()),
    }


def _environment() -> jinja2.Environment:
    """Every value is escaped in the HTML report (model and candidate text included), and made
    literal in the markdown summary by the `markdown_text` filter."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, autoescape=lambda name: name.endswith(".html.j2"))
    env.filters["markdown_text"] = markdown_text
    return env


def _style() -> dict:
    """The report's one stylesheet, inline, and its hash for the page's Content-Security-Policy,
    which allows nothing else: no script, no request, images only as data."""
    css = (TEMPLATES / "report.css").read_text()
    digest = base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()
    return {"style": markupsafe.Markup(css), "style_hash": f"sha256-{digest}"}


def write_report(store: TraceStore, run_id: str, out_dir: Path) -> tuple[Path, Path]:
    context = {**build_context(store, run_id), **_style()}
    env = _environment()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    html = out_dir / "report.html"
    html.write_text(env.get_template("report.html.j2").render(**context))
    markdown = out_dir / "summary.md"
    markdown.write_text(env.get_template("summary.md.j2").render(**context))
    return html, markdown
