"""Entries of the evaluator's on-disk caches (baselines, calibration) read as data that may be
damaged: an entry that does not parse into its schema is treated as missing, so it is measured
again and written anew, never a crash and never a number taken on trust."""

from __future__ import annotations

import dataclasses
import json
import math
import typing
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def read_table(path: Path) -> dict[str, Any]:
    """A cache file's table; empty when the file is missing, unreadable or not a JSON object."""
    try:
        table = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return table if isinstance(table, dict) else {}


def _fits(value: Any, hint: Any) -> bool:
    if typing.get_origin(hint) is dict:
        key_type, item_type = typing.get_args(hint)
        return isinstance(value, dict) and all(_fits(k, key_type) and _fits(v, item_type) for k, v in value.items())
    number = _NUMBERS.get(hint)
    return number(value) if number is not None else isinstance(value, hint)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# Numbers in a cache entry are finite and not negative; a bool is not a number.
_NUMBERS = {
    float: lambda value: _is_number(value) and math.isfinite(value) and value >= 0,
    int: lambda value: isinstance(value, int) and not isinstance(value, bool) and value >= 0,
}


def parse_entry(schema: type[T], entry: Any) -> T | None:
    """`entry` as a `schema` dataclass when it has exactly its fields, each of its type (numbers
    finite and not negative); None otherwise."""
    if not isinstance(entry, dict):
        return None
    fields = {f.name: f for f in dataclasses.fields(schema)}
    required = {name for name, f in fields.items()
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    if not required <= set(entry) <= set(fields):
        return None
    hints = typing.get_type_hints(schema)
    if not all(_fits(value, hints[name]) for name, value in entry.items()):
        return None
    return schema(**entry)
