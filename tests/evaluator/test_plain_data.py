"""Dataclasses from plain data: strict for configurations, lenient for records of newer versions."""

from dataclasses import dataclass, field
from enum import Enum

import pytest

from evaluator.plain_data import PlainDataError, build


class Color(Enum):
    RED = "red"


@dataclass
class Inner:
    size: float
    color: Color = Color.RED


@dataclass
class Outer:
    name: str
    inner: Inner
    items: list[Inner] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    note: str | None = None


DATA = {"name": "a", "inner": {"size": 2, "color": "red"}, "items": [{"size": 1.5}], "counts": {"x": 3}}


def test_nested_dataclasses_enums_lists_and_optionals_are_built():
    built = build(Outer, DATA, strict=True)
    assert built == Outer("a", Inner(2.0, Color.RED), [Inner(1.5)], {"x": 3})
    assert isinstance(built.inner.size, float)


def test_lenient_drops_keys_a_newer_version_added():
    assert build(Outer, {**DATA, "added_later": 1}).name == "a"


@pytest.mark.parametrize("change, message", [
    ({"added_later": 1}, "config: unknown key 'added_later'; known keys: counts, inner, items, name, note"),
    ({"name": None, "inner": None}, None),
    ({"items": {"size": 1}}, "config.items: expected a list, got dict"),
    ({"inner": {"size": "big"}}, "config.inner.size: expected float, got 'big'"),
    ({"counts": {"x": True}}, "config.counts.x: expected int, got True"),
    ({"inner": {}}, "config.inner: missing key 'size'"),
])
def test_strict_names_where_and_what_was_expected(change, message):
    data = {k: v for k, v in {**DATA, **change}.items() if v is not None}
    if message is None:
        message = "config: missing key 'name'"
    with pytest.raises(PlainDataError) as failed:
        build(Outer, data, "config", strict=True)
    assert str(failed.value) == message
