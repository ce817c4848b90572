"""The `agentloop` command line: the command tree (the commands themselves live in
`agentloop.commands`, one module per concern) and the entry point, which turns input and
environment problems into one line and Ctrl-C into a hint on resuming."""

from __future__ import annotations

import os
import sys

import typer
from rich.markup import escape

from agentloop.commands import compare, running, scoring, tasks, trace_store
from agentloop.commands.common import EXIT_INTERRUPTED, console
from traces.untrusted_text import plain

RESUMABLE_COMMANDS = ("run", "ab")

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="LLM-written Triton kernels: evaluate candidates, list tasks, calibrate the GPU.")
tasks_app = typer.Typer(no_args_is_help=True, help="List and inspect the task suite.")
app.add_typer(tasks_app, name="tasks")
app.command("eval")(scoring.eval_command)
app.command("run")(running.run_command)
app.command("runs")(trace_store.runs_command)
app.command("report")(trace_store.report_command)
app.command("harvest")(trace_store.harvest_command)
app.command("ab")(compare.ab_command)
tasks_app.command("list")(tasks.tasks_list)
tasks_app.command("show")(tasks.tasks_show)
app.command("calibrate")(scoring.calibrate_command)


# Errors that come from the user's input or environment, by module and class (imported only if
# already loaded, so that --help stays fast): one line and exit status 2, never a traceback.
USER_ERRORS = (("agentloop.config", "ConfigError"), ("traces.store", "StoreError"),
               ("agentloop.generators.base", "GeneratorError"), ("agentloop.ray_evaluation", "RayUnavailable"),
               ("evaluator.loader", "TaskLoadError"), ("sqlite3", "OperationalError"))


def user_error_message(exc: BaseException) -> str | None:
    """The one-line message for an error the user can act on; None for a bug (shown in full)."""
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}"
    for module, name in USER_ERRORS:
        cls = getattr(sys.modules.get(module), name, None)
        if cls is not None and isinstance(exc, cls):
            return str(exc)
    return None


def main() -> None:
    try:
        app()
    except (KeyboardInterrupt, SystemExit) as exc:  # typer turns Ctrl-C into exit status 130, silently
        if isinstance(exc, SystemExit) and exc.code != EXIT_INTERRUPTED:
            raise
        resumable = len(sys.argv) > 1 and sys.argv[1] in RESUMABLE_COMMANDS
        console.print("interrupted" + ("; run the same command again to resume where it stopped" if resumable else ""))
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:  # noqa: BLE001 - input and environment problems get one line
        message = user_error_message(exc)
        if message is None or os.environ.get("AGENTLOOP_DEBUG"):
            raise
        console.print(f"[red]error:[/red] {escape(plain(message))}", highlight=False)
        sys.exit(2)
