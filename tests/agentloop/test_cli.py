"""The `agentloop` command line, run as a user would run it (a real subprocess)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from evaluator.result import EvalResult

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = ROOT / "tasks" / "Activation" / "gelu_solution.py"
WRONG = ROOT / "tests" / "evaluator" / "verdicts" / "incorrect.py"


def agentloop(*args: str, cwd: Path | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="200", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "agentloop", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=cwd or ROOT)


def test_eval_one_file_prints_json_and_exit_status():
    good = agentloop("eval", "gelu", str(SOLUTION), "--json", "--device", "cpu")
    assert good.returncode == 0, good.stderr
    result = EvalResult.from_json(good.stdout)
    assert result.verdict.value == "CORRECT" and result.environment.interpreter
    bad = agentloop("eval", "Activation/gelu", str(WRONG), "--device", "cpu")
    assert bad.returncode == 1
    assert "INCORRECT" in bad.stdout


def test_eval_suite_scores_a_folder_named_by_task(tmp_path):
    shutil.copy(SOLUTION, tmp_path / "gelu.py")
    (tmp_path / "Math").mkdir()
    shutil.copy(WRONG, tmp_path / "Math" / "softmax.py")
    (tmp_path / "notes.py").write_text("x = 1\n")
    done = agentloop("eval", "--suite", str(tmp_path), "--json", "--device", "cpu")
    assert done.returncode == 1
    results = {r["task_id"]: r["verdict"] for r in json.loads(done.stdout)}
    assert results == {"Activation/gelu": "CORRECT", "Math/softmax": "STATIC_REJECT"}
    assert "skipping" in done.stderr and "notes.py" in done.stderr


@pytest.mark.parametrize("args, message", [
    (["eval", "gelux", str(SOLUTION)], "unknown task 'gelux'; did you mean"),
    (["eval", "gelu", "/nonexistent/file.py"], "no such file"),
    (["eval", "gelu"], "give TASK and FILE"),
    (["eval", "gelu", str(SOLUTION), "--suite", "."], "not both"),
    (["eval", "gelu", str(SOLUTION), "--device", "tpu"], "unsupported device"),
    (["tasks", "show", "nope"], "unknown task 'nope'"),
])
def test_bad_input_gets_a_clear_error(args, message):
    done = agentloop(*args)
    assert done.returncode == 2
    assert message in done.stderr


def test_non_utf8_candidate_is_refused(tmp_path):
    path = tmp_path / "latin1.py"
    path.write_bytes("# caf\xe9\n".encode("latin-1"))
    done = agentloop("eval", "gelu", str(path), "--device", "cpu")
    assert done.returncode == 2 and "not UTF-8" in done.stderr


def test_huge_candidates_are_refused(tmp_path):
    enormous = tmp_path / "enormous.py"
    with open(enormous, "wb") as f:
        f.truncate(100 << 20)  # sparse: 100 MiB on paper
    done = agentloop("eval", "gelu", str(enormous), "--device", "cpu")
    assert done.returncode == 2 and "far too large" in done.stderr
    padded = tmp_path / "padded.py"
    padded.write_text(SOLUTION.read_text() + ("# padding\n" * 200_000))
    done = agentloop("eval", "gelu", str(padded), "--device", "cpu", "--json")
    result = EvalResult.from_json(done.stdout)
    assert result.verdict.value == "STATIC_REJECT" and "MiB of source" in result.reason


BROKEN_TASKS = {
    "syntax error": ("def reference(:\n", "failed to import: SyntaxError"),
    "raises on import": ("raise RuntimeError('boom')\n", "failed to import: RuntimeError: boom"),
    "no TASK": ("x = 1\n", "must bind TASK"),
    "wrong id": ((ROOT / "tasks" / "Reduce" / "sum.py").read_text(), "TASK.id is 'Reduce/sum'"),
}


@pytest.mark.parametrize("broken", sorted(BROKEN_TASKS))
def test_malformed_task_modules_get_a_clear_error(tmp_path, broken):
    text, message = BROKEN_TASKS[broken]
    shutil.copytree(ROOT / "tasks" / "Reduce", tmp_path / "Reduce", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "Reduce" / "mine.py").write_text(text)
    env = dict(os.environ, COLUMNS="200", PYTHONPATH=str(ROOT), AGENTLOOP_TASKS_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-m", "agentloop", "tasks", "list"], capture_output=True, text=True,
                          timeout=300, env=env, cwd=ROOT)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "mine.py" in done.stderr and message in done.stderr and "Traceback" not in done.stderr


def test_tasks_list_and_show():
    listing = agentloop("tasks", "list")
    from evaluator.loader import load_suite
    expected = f"{len(load_suite())} tasks"
    assert listing.returncode == 0 and expected in listing.stdout and "Quantization" in listing.stdout
    shown = agentloop("tasks", "show", "Optimizer/AdamW")
    assert shown.returncode == 0
    for text in ("adamw_step(param, grad", "mutates arguments: [0, 2, 3]", "standard", "MB moved"):
        assert text in shown.stdout
    assert "differs from KernelBench-X" not in shown.stdout
    different = agentloop("tasks", "show", "Fusion/fused_fractional_max_pool2d_with_relu")
    assert "differs from KernelBench-X's definition: adds `_random_samples`" in " ".join(different.stdout.split())


def test_calibrate_without_a_gpu_says_why():
    pytest.importorskip("torch")
    import torch
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    done = agentloop("calibrate")
    assert done.returncode == 2 and "needs a CUDA GPU" in done.stderr


def test_eval_references_scores_shipped_solutions():
    done = agentloop("eval", "--references", "--task", "Random", "--task", "Pooling/avg_pool1d", "--device",
                     "cpu", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    results = [EvalResult.from_dict(r) for r in json.loads(done.stdout)]
    assert sorted(r.task_id for r in results) == ["Pooling/avg_pool1d", "Random/logspace", "Random/rand"]
    assert all(r.correct for r in results)


def test_wheel_carries_tasks_and_prompts(tmp_path):
    pytest.importorskip("hatchling")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w",
                           str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("agentloop_kernels-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "evaluator/_tasks/Activation/gelu.py" in names
    assert "evaluator/_tasks/Activation/gelu_solution.py" in names
    assert "agentloop/_prompts/README.md" in names and "agentloop/_prompts/repair.j2" in names
    assert "agentloop/recordings/demo.jsonl" in names and "agentloop/recordings/demo.yaml" in names
    assert "agentloop/cli.py" in names and "evaluator/evaluate.py" in names


def test_ab_runs_an_experiments_arms_and_compares_them(tmp_path):
    answer = ("```python\nimport torch\nimport triton\n\n@triton.jit\ndef k(x):\n    pass\n\n"
              "def gelu(input, approximate='none'):\n    k[(1,)](input)\n    return torch.erf(input)\n```\n")
    config = tmp_path / "ab.yaml"
    config.write_text(f"""
name: ab-test
tasks: {{ids: [gelu, softmax]}}
samples: 2
generator: {{provider: scripted, model: fixed, options: {{text: {json.dumps(answer)}}}}}
arms:
  - {{name: short, method: iterative, budgets: {{max_rounds: 1}}}}
  - {{name: long, method: iterative, feedback: [compile_errors], budgets: {{max_rounds: 2, stagnation_rounds: 5}}}}
evaluation: {{device: cpu}}
store: {tmp_path / 'in-the-file.db'}
""")
    done = agentloop("ab", str(config), "--store", str(tmp_path / "t.db"))  # the option wins over the file
    assert done.returncode == 0, done.stderr[-3000:]
    assert "short vs long" in done.stdout and "0/4" in done.stdout
    assert "No detectable difference in correctness" in done.stdout
    assert not (tmp_path / "in-the-file.db").exists()
    from traces.store import TraceStore
    trace = TraceStore(tmp_path / "t.db")
    rounds = {(a.arm, a.task_id, a.sample): a.round for a in trace.attempts()}
    assert max(v for (arm, *_), v in rounds.items() if arm == "short") == 0
    assert max(v for (arm, *_), v in rounds.items() if arm == "long") == 1
    trace.close()


def test_kernelbench_problems_from_a_folder():
    problems = ROOT / "tests" / "evaluator" / "kernelbench" / "problems"
    listing = agentloop("tasks", "list", "--kernelbench", str(problems))
    assert listing.returncode == 0 and "KernelBench" in listing.stdout
    done = agentloop("eval", "KernelBench/1_relu", str(ROOT / "tests/evaluator/kernelbench/candidates/1_relu.py"),
                     "--kernelbench", str(problems), "--device", "cpu", "--json")
    assert done.returncode == 0 and EvalResult.from_json(done.stdout).correct
    missing = agentloop("tasks", "list", "--kernelbench", "/nonexistent")
    assert missing.returncode == 2 and "not a folder" in missing.stderr


def test_a_kernelbench_folder_as_people_keep_it(tmp_path):
    """Helper scripts beside the problems are skipped and named; a problem built with .cuda() runs
    on the CPU; a broken problem file is a sentence and exit status 2, not a traceback."""
    problems = ROOT / "tests" / "evaluator" / "kernelbench" / "problems"
    (tmp_path / "4_scaled_add_cuda.py").write_text((problems / "4_scaled_add_cuda.py").read_text())
    (tmp_path / "run_all.py").write_text("import sys\n")
    done = agentloop("eval", "KernelBench/4_scaled_add_cuda",
                     str(ROOT / "tests/evaluator/kernelbench/candidates/4_scaled_add_cuda.py"),
                     "--kernelbench", str(tmp_path), "--device", "cpu", "--json")
    assert done.returncode == 0 and EvalResult.from_json(done.stdout).correct, done.stderr
    assert "skipped 1 files that define none of Model" in done.stderr and "run_all.py" in done.stderr
    (tmp_path / "5_broken.py").write_text("import torch\nx = torch.zeros(3, device='cuda') + undefined\n")
    broken = agentloop("tasks", "list", "--kernelbench", str(tmp_path))
    assert broken.returncode == 2 and "5_broken.py: the problem file failed to import: NameError" in broken.stderr
    assert "Traceback" not in broken.stderr


def test_an_evaluation_the_evaluator_fails_on_leaves_the_others_scored(tmp_path):
    """A problem whose own reference raises cannot be scored (the evaluator's error, not a verdict):
    that candidate is named as not scored, the others' results are printed, and the exit status says so."""
    problems, candidates = tmp_path / "problems", tmp_path / "candidates" / "KernelBench"
    problems.mkdir()
    candidates.mkdir(parents=True)
    relu = (ROOT / "tests/evaluator/kernelbench/problems/1_relu.py").read_text()
    (problems / "1_relu.py").write_text(relu)
    (problems / "6_broken_forward.py").write_text(
        relu.replace("return torch.relu(x)", "raise RuntimeError('this reference cannot run')"))
    for name in ("1_relu", "6_broken_forward"):
        shutil.copy(ROOT / "tests/evaluator/kernelbench/candidates/1_relu.py", candidates / f"{name}.py")
    done = agentloop("eval", "--suite", str(candidates.parent), "--kernelbench", str(problems), "--device", "cpu",
                     "--json")
    assert done.returncode == 3, done.stderr
    assert [(r["task_id"], r["verdict"]) for r in json.loads(done.stdout)] == [("KernelBench/1_relu", "CORRECT")]
    assert ("not scored: KernelBench/6_broken_forward: the evaluator failed (RuntimeError: this reference "
            "cannot run)") in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_eval_prints_what_it_had_scored(sent):
    """Ctrl-C, or a SIGTERM (a time limit, a job scheduler), after the first candidate of several was
    scored: its result is printed, and the exit status says the run was interrupted."""
    env = dict(os.environ, COLUMNS="200", PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "agentloop", "eval", "--references", "--task", "Random", "--task",
               "Pooling/avg_pool1d", "--task", "Reduce", "--device", "cpu", "--workers", "1", "--json"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                          cwd=ROOT) as running:
        first = running.stderr.readline()
        while first and " of " not in first:  # progress lines: "TASK: VERDICT (1 of N)"
            first = running.stderr.readline()
        assert first, "no candidate was scored"
        running.send_signal(sent)
        stdout, stderr = running.communicate(timeout=600)
    assert running.returncode == 130, stderr
    results = [EvalResult.from_dict(r) for r in json.loads(stdout)]
    total = int(first.rsplit(" of ", 1)[1].rstrip(")\n"))
    assert 1 <= len(results) < total and all(r.correct for r in results)
    assert f"{len(results)} of {total} candidates scored before the interrupt" in stderr
    assert "Traceback" not in stderr and "InvalidStateError" not in stderr, stderr[-3000:]
