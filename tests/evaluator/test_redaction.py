"""Secrets are scrubbed from every string of a result, in disguise too."""

from evaluator.redaction import DISGUISED, Redactor
from evaluator.result import CaseResult, EvalResult, KernelInfo, Stage, Verdict
from evaluator.environment import environment

SECRET = "sk-live-4f9a8b7c6d5e"


def _result(**texts) -> EvalResult:
    result = EvalResult(task_id="Activation/gelu", verdict=Verdict.RUNTIME_FAIL, stage=Stage.CALL,
                        reason=texts.get("reason", ""), source_hash="0", environment=environment("cpu"))
    result.kernels = [KernelInfo(name=texts.get("kernel", "k"))]
    result.cases = [CaseResult(size="small", dtype="float32", mode="standard", seed=0, passed=False,
                               reason=texts.get("case", ""))]
    result.traceback = texts.get("traceback")
    return result


def test_every_string_field_is_scrubbed():
    redacted = Redactor([SECRET]).value(_result(reason=f"key={SECRET}", kernel=f"k_{SECRET}",
                                                case=f"got {SECRET}", traceback=SECRET))
    text = redacted.to_json()
    assert SECRET not in text
    assert redacted.reason == "key=[redacted]" and redacted.traceback == "[redacted]"
    assert redacted.verdict is Verdict.RUNTIME_FAIL  # enums stay what they are


def test_disguised_copies_are_caught():
    redactor = Redactor([SECRET])
    for disguised in (SECRET[::-1], ".".join(SECRET), " ".join(SECRET.upper().lower()), SECRET.replace("-", "_")):
        assert redactor.text(f"raised RuntimeError: {disguised}") == DISGUISED, disguised


def test_ordinary_text_is_left_alone():
    redactor = Redactor([SECRET, "hunter2x"])
    text = "outside tolerance at index (3, 4): expected 0.5, got 0.25; hunter 2 x"
    assert redactor.text(text) == text
