"""Scoring many candidates (agentloop/suite.py): an evaluation the evaluator fails on leaves the
others scored."""

import asyncio

from rich.console import Console

from agentloop.suite import Submission, interleaved, score
from evaluator.environment import environment
from evaluator.result import EvalResult, Stage, Verdict

PROCESS_ERROR = ("the evaluator for cuda:1 failed:\nTraceback (most recent call last):\n  File \"evaluate.py\", "
                 "line 181, in evaluate\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB.\n")


class Evaluations:
    """Scores every task CORRECT except those named, for which it raises as an evaluator process does."""

    def __init__(self, failing: set[str] = frozenset()):
        self.failing = failing
        self.started: list[str] = []

    async def evaluate(self, task, code):
        self.started.append(task.id)
        await asyncio.sleep(0)
        if task.id in self.failing:
            raise RuntimeError(PROCESS_ERROR)
        return EvalResult(task_id=task.id, verdict=Verdict.CORRECT, stage=Stage.DONE, reason="", source_hash="",
                          environment=environment("cpu", 0))

    def close(self, abandon=False):
        pass


def test_an_evaluation_that_raises_is_named_with_what_was_raised_and_the_rest_are_scored(suite, tmp_path):
    tasks = [suite["Activation/gelu"], suite["Math/softmax"], suite["Reduce/sum"]]
    submissions = [Submission(task, "", tmp_path / f"{i}.py") for i, task in enumerate(tasks)]
    console = Console(file=open(tmp_path / "log.txt", "w"), force_terminal=False)
    scored = score(Evaluations({"Math/softmax"}), submissions, console)
    console.file.close()
    assert [r.task_id for r in scored.results] == ["Activation/gelu", "Reduce/sum"]
    assert not scored.interrupted
    [(task_id, error)] = scored.unscored
    assert task_id == "Math/softmax"
    assert error.startswith("RuntimeError: the evaluator for cuda:1 failed:")
    assert error.endswith("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB.")
    lines = [line for line in (tmp_path / "log.txt").read_text().splitlines() if line]
    assert "Math/softmax: not scored (2 of 3)" in lines and lines[-1].endswith("(3 of 3)")


def test_categories_take_turns_to_start_and_results_keep_the_submissions_order(suite, tmp_path):
    """A suite sorted by name starts one task of each category in turn, so that a category of costly
    tasks does not run all at once; the results still come back in the order given."""
    ids = ["LinearAlgebra/qr", "LinearAlgebra/svd", "LinearAlgebra/lu", "Math/abs", "Reduce/sum", "Reduce/mean"]
    submissions = [Submission(suite[task_id], "", tmp_path / "x.py") for task_id in ids]
    assert [ids[i] for i in interleaved(submissions)] == [
        "LinearAlgebra/qr", "Math/abs", "Reduce/sum", "LinearAlgebra/svd", "Reduce/mean", "LinearAlgebra/lu"]
    evaluations = Evaluations()
    with open(tmp_path / "log.txt", "w") as log:
        scored = score(evaluations, submissions, Console(file=log, force_terminal=False))
    assert evaluations.started == [ids[i] for i in interleaved(submissions)]
    assert [r.task_id for r in scored.results] == ids
