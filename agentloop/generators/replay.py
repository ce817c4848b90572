"""Replay recorded responses instead of calling a model: from a bundled recording (JSON lines) or
from a trace store (re-scoring a finished run, e.g. on new hardware)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from agentloop.generators.base import Fatal, GeneratorSpec, Request, Response

BUNDLED = Path(__file__).resolve().parent.parent / "recordings"
BUNDLED_PREFIX = "bundled:"


def bundled_recording(name: str) -> str:
    """How a configuration names a recording shipped with agentloop: its name and a hash of its
    content, never where agentloop is installed, so a run's identity does not move with the install."""
    digest = hashlib.sha256((BUNDLED / name).read_bytes()).hexdigest()[:12]
    return f"{BUNDLED_PREFIX}{name}@{digest}"


def recording_path(value: str) -> Path:
    """The file a recording option names: a bundled recording (checked against its hash) or a path."""
    if not value.startswith(BUNDLED_PREFIX):
        return Path(value)
    name, _, digest = value.removeprefix(BUNDLED_PREFIX).partition("@")
    path = BUNDLED / name
    if not path.is_file() or "/" in name:
        raise Fatal(f"no bundled recording {name!r}; bundled: {', '.join(p.name for p in BUNDLED.glob('*.jsonl'))}")
    if digest and bundled_recording(name) != value:
        raise Fatal(f"the bundled recording {name} is not the one this configuration names ({value}); "
                    f"this version of agentloop ships {bundled_recording(name)}")
    return path


class ReplayGenerator:
    name = "replay"

    def __init__(self, spec: GeneratorSpec):
        self.spec = spec
        self.responses: dict[tuple, dict] = {}
        if "recording" in spec.options:
            self._load_recording(recording_path(str(spec.options["recording"])))
        elif "store" in spec.options and "run" in spec.options:
            self._load_store(Path(spec.options["store"]), spec.options["run"])
        else:
            raise Fatal("the replay generator needs options.recording (a .jsonl file) or options.store and "
                        "options.run (a trace store and one of its runs)")

    def _load_recording(self, path: Path) -> None:
        try:
            lines = path.read_text().splitlines()
        except OSError as exc:
            raise Fatal(f"cannot read recording {path}: {exc.strerror}") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                key = (entry["task"], entry.get("arm", "*"), int(entry["sample"]), int(entry["round"]),
                       entry.get("purpose", "kernel"))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                raise Fatal(f"{path}:{number}: not a recording entry (task, sample, round, response)") from None
            self.responses[key] = entry

    def _load_store(self, path: Path, run_id: str) -> None:
        from traces.store import TraceStore
        store = TraceStore(path)
        try:
            for attempt in store.attempts(run_id):
                if attempt.trial == 0 and attempt.response is not None:
                    key = (attempt.task_id, attempt.arm, attempt.sample, attempt.round, "kernel")
                    self.responses[key] = {"response": attempt.response, "model": attempt.model,
                                           "tokens_in": attempt.tokens_in, "tokens_out": attempt.tokens_out}
        finally:
            store.close()
        if not self.responses:
            raise Fatal(f"run {run_id!r} in {path} has no recorded responses")

    async def generate(self, request: Request) -> Response:
        for arm in (request.arm, "*"):
            entry = self.responses.get((request.task_id, arm, request.sample, request.round, request.purpose))
            if entry is not None:
                return Response(text=entry["response"], model=entry.get("model", self.spec.model),
                                tokens_in=int(entry.get("tokens_in", 0)), tokens_out=int(entry.get("tokens_out", 0)),
                                finish_reason="replayed")
        raise Fatal(f"the recording has no {request.purpose} response for {request.task_id} sample {request.sample} "
                    f"round {request.round}")

    async def close(self) -> None:
        pass
