"""Secrets out of results: every string a result holds (reasons, tracebacks, kernel names, case
reasons, environment) is scrubbed of the values of secret-looking variables in the evaluator's
environment. The OS boundary keeps candidates from reading those values; this is the second line.

A value found as it is becomes "[redacted]". A text that holds one in disguise (reversed, or with
other characters between its letters and digits) is replaced whole, since which part to cut is not
known."""

from __future__ import annotations

import dataclasses
import re
from enum import Enum
from typing import Any

DISGUISED = "[redacted: held a secret in disguise]"
MIN_DISGUISED_CHARS = 10  # shorter values would match ordinary text by chance once spread out
_NOT_ALNUM = re.compile(r"[^0-9A-Za-z]+")


class Redactor:
    def __init__(self, secrets: list[str]):
        self.secrets = sorted(set(secrets), key=len, reverse=True)
        bare = {_NOT_ALNUM.sub("", s) for s in self.secrets if len(_NOT_ALNUM.sub("", s)) >= MIN_DISGUISED_CHARS}
        self.disguises = sorted(bare | {s[::-1] for s in bare}, key=len, reverse=True)

    def text(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "[redacted]")
        bare = _NOT_ALNUM.sub("", text)
        return DISGUISED if any(d in bare for d in self.disguises) else text

    def value(self, value: Any) -> Any:
        """`value` with every string in it scrubbed: dataclasses are changed in place."""
        if isinstance(value, Enum):
            return value
        if isinstance(value, str):
            return self.text(value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return self._dataclass(value)
        return self._container(value)

    def _dataclass(self, value: Any) -> Any:
        changes = {f.name: self.value(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if getattr(type(value), "__dataclass_params__").frozen:
            return dataclasses.replace(value, **changes)
        for name, changed in changes.items():
            setattr(value, name, changed)
        return value

    def _container(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.value(v) for v in value)
        if isinstance(value, dict):
            return {self.value(k): self.value(v) for k, v in value.items()}
        return value
