"""Changes to the project's own files while candidates run are detected, and stop evaluation."""

import textwrap

import pytest

from evaluator.evaluate import Evaluator, EvaluatorConfig, ProjectTampered
from evaluator.integrity import ProjectIntegrity

WRITER = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def nothing(x_ptr):
        pass

    def gelu(input, approximate="none"):
        nothing[(1,)](input)
        with open(TARGET, "a") as f:
            f.write("# tampered\\n")
        raise RuntimeError("done")
''')


def test_snapshot_sees_modified_added_and_removed_files(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    integrity = ProjectIntegrity([tmp_path])
    assert integrity.changes() == []
    (tmp_path / "a.py").write_text("x = 1\n")  # touched, same content
    assert integrity.changes() == []
    (tmp_path / "a.py").write_text("x = 3\n")
    (tmp_path / "c.py").write_text("z = 0\n")
    (tmp_path / "b.py").unlink()
    assert [p.rsplit("/", 1)[1] for p in integrity.changes()] == ["a.py", "b.py", "c.py"]


def _watched_project(tmp_path):
    """A project with one file, and an evaluator's configuration that watches it."""
    project = tmp_path / "project"
    project.mkdir()
    target = project / "contracts.py"
    target.write_text("# a file of the project\n")
    return target, EvaluatorConfig(device="cpu", static_checks=False, cache_dir=tmp_path / "cache", watched=[project])


def test_a_candidate_cannot_write_into_the_project(tmp_path, suite):
    """The OS refuses the write (the project is outside the candidate's view, or read-only in it)."""
    target, config = _watched_project(tmp_path)
    with Evaluator(config) as evaluator:
        result = evaluator.evaluate(suite["Activation/gelu"], WRITER.replace("TARGET", repr(str(target))))
    assert result.verdict.value == "RUNTIME_FAIL" and "Error" in result.reason and "done" not in result.reason
    assert target.read_text() == "# a file of the project\n"


def test_a_change_to_the_project_while_candidates_run_stops_evaluation(tmp_path, suite):
    target, config = _watched_project(tmp_path)
    task = suite["Activation/gelu"]
    with Evaluator(config) as evaluator:
        target.write_text("# tampered\n")  # by whatever it was: the next evaluation notices
        result = evaluator.evaluate(task, task.solution_path.read_text())
        assert result.verdict.value == "CONTRACT_FAIL" and "project's own files changed" in result.reason
        assert "contracts.py" in result.reason
        with pytest.raises(ProjectTampered):
            evaluator.evaluate(task, task.solution_path.read_text())


def test_the_task_suite_and_its_references_are_watched():
    from evaluator.settings import default_watched
    from evaluator.loader import tasks_root

    watched = [p.resolve() for p in default_watched()]
    suite = tasks_root().resolve()
    assert any(suite == w or suite.is_relative_to(w) for w in watched)
