"""A newcomer's mistakes and a hostile environment get one line and an exit status, never a
traceback; a run in which chains produced nothing does not exit 0; Ctrl-C says how to resume."""

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agentloop.test_run import agentloop_env
from tests.traces import known_store
from traces.store import TraceStore

ROOT = Path(__file__).resolve().parents[2]


def agentloop(*args: str, cwd: Path, env: dict | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentloop", *args], capture_output=True, text=True,
                          timeout=timeout, env=env or agentloop_env(), cwd=cwd)


def one_line_error(done: subprocess.CompletedProcess, message: str, status: int = 2) -> None:
    assert done.returncode == status, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], done.stderr[-3000:]


def stores(folder: Path) -> None:
    """store.db holds run `demo` (attempts worked out by hand); empty.db a run `nothing` without any."""
    known_store.build(folder / "store.db", run_id="demo").close()
    empty = TraceStore(folder / "empty.db")
    empty.ensure_run("nothing", {"name": "nothing"})
    empty.close()


@pytest.mark.parametrize("args, message", [
    (["run", "--provider", "nosuch"], "unknown generator provider 'nosuch'; choose one of"),
    (["run", "--provider", "openai"], "environment variable OPENAI_API_KEY is not set"),
    (["run", "--provider", "anthropic"], "environment variable ANTHROPIC_API_KEY is not set"),
    (["run", "--max-rounds", "0"], "budgets.max_rounds: must be at least 1"),
    (["run", "--max-rounds", "-2"], "budgets.max_rounds: must be at least 1"),
    (["run", "--workers", "-3"], "evaluation.workers must be 0"),
    (["run", "--set", "budgets.target_speedup=-1"], "budgets.target_speedup: must be more than 0"),
    (["run", "bad.yaml"], "bad.yaml: not valid YAML: expected ',' or ']'"),
    (["run", "--store", "/proc/no/store.db"], "/proc/no: No such file or directory"),
    (["report", "demo", "--store", "missing.db"], "no trace store here"),
    (["report", "nothing", "--store", "empty.db"], "run 'nothing' has no attempts"),
    (["harvest", "nothing", "--store", "empty.db"], "run 'nothing' has no attempts"),
    (["report", "demo", "--store", "store.db", "--out", "/proc/no/report"], "/proc/no: No such file or directory"),
    (["harvest", "demo", "--store", "store.db", "--out", "/proc/no/data"], "/proc/no: No such file or directory"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_input_and_environment_problems_get_one_line_and_status_2(tmp_path, args, message):
    (tmp_path / "bad.yaml").write_text("samples: [1\n")
    stores(tmp_path)
    extra = ["--no-progress"] if args[0] == "run" else []
    one_line_error(agentloop(*args, *extra, cwd=tmp_path), message)


def test_a_run_whose_chains_produced_nothing_exits_3_and_says_why(tmp_path):
    env = agentloop_env(AGENTLOOP_BASE_URL="http://127.0.0.1:9/v1")  # nothing listens there
    done = agentloop("run", "--task", "gelu", "--no-progress", "--set", "generator.max_retries=0",
                     "--store", "runs.db", cwd=tmp_path, env=env)
    assert done.returncode == 3, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert "1 of 1 chains produced no attempt: generator failed" in done.stderr
    assert "warning" in done.stderr
    store = TraceStore(tmp_path / "runs.db")
    (run,) = store.runs()
    (empty,) = store.chains_without_attempts(run["id"])
    assert empty["task_id"] == "Activation/gelu" and empty["reason"].startswith("generator failed")
    store.close()
    report = agentloop("report", run["id"], "--store", "runs.db", cwd=tmp_path)
    one_line_error(report, "has no attempts (its chains produced none)")


def test_every_option_has_help_text():
    import typer.main

    from agentloop.cli import app
    missing, seen = [], []

    def walk(command, path: str) -> None:
        for param in command.params:
            seen.append(f"{path} {param.name}")
            if not getattr(param, "help", None):
                missing.append(f"{path} {param.opts[0]}")
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}")
    walk(typer.main.get_command(app), "agentloop")
    assert "agentloop run max_rounds" in seen and "agentloop tasks show name" in seen
    assert missing == []


def test_ctrl_c_during_a_run_says_that_rerunning_resumes(tmp_path):
    process = subprocess.Popen([sys.executable, "-m", "agentloop", "run", "--device", "cpu", "--no-progress",
                                "--store", "runs.db"], cwd=tmp_path, env=agentloop_env(), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = ""
    while '"event": "attempt"' not in seen:  # the first attempt is in: the chains are running
        line = process.stderr.readline()
        if not line:
            break  # it ended: the assertions below say how
        seen += line
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, seen + err
    assert "Traceback" not in err and "run the same command again to resume" in err
    trace = TraceStore(tmp_path / "runs.db")
    recorded = trace.attempts()
    trace.close()
    assert recorded, "the attempt finished before the interrupt is kept"
    killed = [a.task_id for a in recorded if a.result and "was killed by" in a.result.reason]
    assert not killed, "an evaluation abandoned at the interrupt is no attempt (the rerun makes it)"


def test_help_and_input_checks_do_not_wait_for_torch():
    """--help and the configuration checks import neither torch nor the evaluator (seconds of
    imports on a busy machine); the check is on what is imported, not on a time."""
    probe = ("import sys; from agentloop import cli, config; config.load_experiment(None, ['samples=2']); "
             "print(sorted(m for m in ('torch', 'triton', 'evaluator.evaluate') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=agentloop_env(),
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_off_a_terminal_tables_are_not_squeezed(tmp_path):
    """Piped (a CI log, `| tee`) with no COLUMNS, a table is laid out wide: no header is broken
    over lines, as it was at rich's default of 80 columns."""
    env = {k: v for k, v in agentloop_env().items() if k != "COLUMNS"}
    done = agentloop("tasks", "list", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    header = next(line for line in done.stdout.splitlines() if "category" in line)
    assert "difficulty 1-5" in header and "names" in header
    assert max(len(line) for line in done.stdout.splitlines()) > 100
