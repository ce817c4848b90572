"""`agentloop ab`: correctness and speed of two arms of a run, or of one arm in two runs, task by task."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from agentloop.commands.common import fail, out
from agentloop.commands.running import run_experiment_file
from agentloop.commands.trace_store import open_store, run_id_in

FAST_THRESHOLDS = (1.0, 1.5, 2.0)


def target_run(target: str, store: Path | None, overrides: list[str]) -> tuple[str | None, Path]:
    """For an experiment file, the run it made (running it first) and its store; for a run id, no
    run yet and the store to look in."""
    if target.endswith((".yaml", ".yml")):
        return run_experiment_file(Path(target), overrides + ([f"store={store}"] if store else []))
    return None, store or Path("runs/agentloop.db")


def chains_of(trace, run_id: str):
    """One row per chain of the run, those without attempts included."""
    from traces.frames import chains_frame, load_frame
    return chains_frame(load_frame(trace, run_id, with_empty_chains=True))


def one_arm_in_two_runs(trace, first: str, chains_first, other: str, asked: list[str]):
    """The chains of the chosen arm of each run, and the names the comparison gives them."""
    second = run_id_in(trace, other)
    chains_second = chains_of(trace, second)
    pick = arms_across_runs(asked, list(dict.fromkeys(chains_first["arm"])), list(dict.fromkeys(chains_second["arm"])))
    a_rows = chains_first[chains_first["arm"] == pick[0]]
    b_rows = chains_second[chains_second["arm"] == pick[1]]
    names = (f"{first}:{pick[0]}", f"{second}:{pick[1]}") if pick[0] == pick[1] else (pick[0], pick[1])
    return a_rows, b_rows, names


def two_arms_of_one_run(trace, run_id: str, chains, asked: list[str]):
    """The chains of two arms of the run (the asked ones, else its first two), and their names."""
    from traces.frames import arm_methods
    available = [a for a in arm_methods(trace, run_id) if a in set(chains["arm"])] or \
        list(dict.fromkeys(chains["arm"]))
    chosen = asked or available[:2]
    if len(chosen) != 2 or any(a not in available for a in chosen):
        fail(f"give two arms of {run_id} to compare (--arm A --arm B); it has {', '.join(available)}")
    a_rows, b_rows = (chains[chains["arm"] == a] for a in chosen)
    return a_rows, b_rows, tuple(chosen)


def arms_across_runs(asked: list[str], first: list[str], second: list[str]) -> tuple[str, str]:
    """Which arm of each run to compare: by name, the same in both unless two names are given."""
    if len(asked) > 2:
        fail("give at most two --arm names: one arm compared in both runs, or one arm of each run")
    if len(asked) == 2:
        pair = (asked[0], asked[1])
    elif len(asked) == 1:
        pair = (asked[0], asked[0])
    elif first == second and len(first) == 1:
        pair = (first[0], first[0])
    elif set(first) == set(second):
        fail(f"both runs have the arms {', '.join(first)}: name the one to compare with --arm")
    else:
        fail(f"the runs' arms differ ({', '.join(first)} against {', '.join(second)}): name them with "
             "--arm A --arm B (an arm of the first run, then one of the second)")
    for arm, arms, which in ((pair[0], first, "first"), (pair[1], second, "second")):
        if arm not in arms:
            fail(f"the {which} run has no arm {arm!r}; it has {', '.join(arms)}")
    return pair


def share(value: float) -> str:
    return "unknown (untimed)" if value != value else f"{value:.2f}"


def comparison_table(result, names: tuple[str, str]) -> Table:
    table = Table(title=f"{names[0]} vs {names[1]} over {result.tasks} tasks")
    table.add_column("measure")
    table.add_column(names[0])
    table.add_column(names[1])
    table.add_row("chains correct", f"{result.correct_a}/{result.chains_a}", f"{result.correct_b}/{result.chains_b}")
    table.add_row("tasks where this arm is correct more often", str(result.tasks_a_better), str(result.tasks_b_better))
    for p in FAST_THRESHOLDS:
        if p in result.fast_p:
            table.add_row(f"fast_{p:g} (over tasks)", *(share(v) for v in result.fast_p[p]))
    return table


def ab_command(
    target: str = typer.Argument(..., help="An experiment YAML (run it, then compare its arms) or a run id."),
    other: Optional[str] = typer.Argument(None, help="A second run id: compare two finished runs."),
    arms: list[str] = typer.Option([], "--arm", help="The two arms to compare (default: the first two)."),
    store: Optional[Path] = typer.Option(None, "--store", help="The trace store (SQLite); default "
                                         "runs/agentloop.db, or for an experiment file, its own store."),
    overrides: list[str] = typer.Option([], "--set", help="KEY=VALUE applied to the experiment file (repeatable)."),
) -> None:
    """A/B test over tasks: correctness and speed of two arms of a run, or of the same arm in two runs."""
    from traces import ab
    run_id, store = target_run(target, store, overrides)
    trace = open_store(store)
    first = run_id_in(trace, run_id or target)
    chains_first = chains_of(trace, first)
    if other is not None:
        a_rows, b_rows, names = one_arm_in_two_runs(trace, first, chains_first, other, arms)
    else:
        a_rows, b_rows, names = two_arms_of_one_run(trace, first, chains_first, arms)
    trace.close()
    try:
        result = ab.compare(a_rows, b_rows, *names)
    except ValueError as exc:
        fail(str(exc))
    out.print(comparison_table(result, names))
    out.print(result.verdict)
