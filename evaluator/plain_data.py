"""Plain data (what JSON and YAML hold) from dataclasses, and dataclasses from it, checked strictly where asked."""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from enum import Enum
from typing import Any


class PlainDataError(ValueError):
    """Data that does not fit the type; the message names where (`where`) and what was expected."""


def to_plain(value: Any) -> Any:
    """Dataclasses as mappings, Enums as their values, tuples as lists, all the way down."""
    if dataclasses.is_dataclass(value):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value


@functools.lru_cache(maxsize=None)
def _hints(tp: type) -> dict[str, Any]:
    return typing.get_type_hints(tp)


def build(tp: Any, data: Any, where: str = "data", strict: bool = False) -> Any:
    """`data` as an instance of `tp` (a dataclass, an Enum or a typing form). Strict: every key known,
    every required key present, every mapping, list and scalar of its type. Lenient: unknown keys
    dropped (a record written by a newer version), nothing else checked."""
    generic = _GENERICS.get(typing.get_origin(tp))
    if generic is not None:
        return generic(tp, data, where, strict)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(data)
    if dataclasses.is_dataclass(tp):
        return _dataclass(tp, data, where, strict)
    return _scalar(tp, data, where, strict)


def _optional(tp: Any, data: Any, where: str, strict: bool) -> Any:
    options = [a for a in typing.get_args(tp) if a is not type(None)]
    return None if data is None else build(options[0], data, where, strict)


def _list(tp: Any, data: Any, where: str, strict: bool) -> list:
    _expect(strict, isinstance(data, list), where, "a list", data)
    (item,) = typing.get_args(tp)
    return [build(item, v, f"{where}[{i}]", strict) for i, v in enumerate(data)]


def _dict(tp: Any, data: Any, where: str, strict: bool) -> dict:
    _expect(strict, isinstance(data, dict), where, "a mapping", data)
    item = typing.get_args(tp)[1] if typing.get_args(tp) else Any
    return {k: build(item, v, f"{where}.{k}", strict) for k, v in data.items()}


# Builders of the typing forms, by their origin (`X | None` and `Optional[X]` both unions).
_GENERICS = {typing.Union: _optional, types.UnionType: _optional, list: _list, dict: _dict}


def _dataclass(tp: type, data: Any, where: str, strict: bool) -> Any:
    _expect(strict, isinstance(data, dict), where, "a mapping", data)
    fields = dataclasses.fields(tp)
    known = {f.name for f in fields}
    if strict:
        _check_keys(fields, known, data, where)
    hints = _hints(tp)
    values = {k: build(hints[k], v, f"{where}.{k}", strict) for k, v in data.items() if k in known}
    try:
        return tp(**values)
    except TypeError as exc:
        raise PlainDataError(f"{where}: {exc}") from None


def _check_keys(fields: tuple[dataclasses.Field, ...], known: set[str], data: dict, where: str) -> None:
    """Every key of `data` a field's, every field without a default among them."""
    unknown = sorted(set(data) - known)
    if unknown:
        raise PlainDataError(f"{where}: unknown key {unknown[0]!r}; known keys: {', '.join(sorted(known))}")
    missing = [f.name for f in fields if _required(f) and f.name not in data]
    if missing:
        raise PlainDataError(f"{where}: missing key {missing[0]!r}")


def _required(f: dataclasses.Field) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _scalar(tp: Any, data: Any, where: str, strict: bool) -> Any:
    if not strict:
        return data
    if tp is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if tp in (int, float, str, bool) and not (isinstance(data, tp) and not (tp is int and isinstance(data, bool))):
        raise PlainDataError(f"{where}: expected {tp.__name__}, got {data!r}")
    return data


def _expect(strict: bool, holds: bool, where: str, what: str, data: Any) -> None:
    if strict and not holds:
        raise PlainDataError(f"{where}: expected {what}, got {type(data).__name__}")
