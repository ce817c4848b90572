"""TUNE: a search over a correct kernel's launch parameters (block sizes, num_warps, num_stages)
with no LLM call. Variants change one literal at a time in the source text, so the candidate's
comments and layout survive; each variant is scored by the evaluator like any other attempt."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

BLOCK_NAME = re.compile(r"^BLOCK(_[A-Z0-9]+)?(_SIZE)?$|^TILE(_[A-Z0-9]+)?$")
WARPS = (2, 4, 8, 16)
STAGES = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class Knob:
    name: str
    value: int
    start: tuple[int, int]  # (line, column) of the literal, 1-based line
    end: tuple[int, int]


@dataclass(frozen=True)
class Variant:
    description: str
    source: str


def _launch_calls(tree: ast.Module):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            yield node


def _single_int_assignments(tree: ast.Module) -> dict[str, ast.Constant]:
    """Names assigned exactly once in the module, to an integer literal (`block = 1024`)."""
    seen: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            seen.setdefault(node.targets[0].id, []).append(node.value)
    return {name: values[0] for name, values in seen.items()
            if len(values) == 1 and isinstance(values[0], ast.Constant) and type(values[0].value) is int}


def _is_launch_parameter(name: str | None) -> bool:
    return bool(name) and bool(BLOCK_NAME.match(name) or name in ("num_warps", "num_stages"))


def _literal_knob(kw: ast.keyword, literals: dict[str, ast.Constant]) -> Knob | None:
    """The integer literal a launch keyword passes, written in place or through a name assigned once."""
    value = kw.value
    if isinstance(value, ast.Name) and value.id in literals:
        value = literals[value.id]
    if not (isinstance(value, ast.Constant) and type(value.value) is int):
        return None
    return Knob(kw.arg, value.value, (value.lineno, value.col_offset), (value.end_lineno, value.end_col_offset))


def knobs(source: str) -> tuple[list[Knob], list[ast.Call]]:
    """Integer literals that reach kernel launches as block sizes, num_warps or num_stages, written
    in the launch or assigned once to the name the launch passes."""
    tree = ast.parse(source)
    literals = _single_int_assignments(tree)
    launches = list(_launch_calls(tree))
    found: list[Knob] = []
    for call in launches:
        for kw in call.keywords:
            knob = _literal_knob(kw, literals) if _is_launch_parameter(kw.arg) else None
            if knob is not None and knob not in found:
                found.append(knob)
    return found, launches


def _replace(source: str, start: tuple[int, int], end: tuple[int, int], text: str) -> str:
    lines = source.splitlines(keepends=True)
    offset = lambda pos: sum(len(l) for l in lines[:pos[0] - 1]) + pos[1]  # noqa: E731
    return source[:offset(start)] + text + source[offset(end):]


def _alternatives(knob: Knob) -> list[int]:
    if knob.name == "num_warps":
        return [w for w in WARPS if w != knob.value]
    if knob.name == "num_stages":
        return [s for s in STAGES if s != knob.value]
    return [v for v in (knob.value // 2, knob.value * 2) if 16 <= v <= 16384]


def _knob_variants(source: str, found: list[Knob]) -> list[Variant]:
    return [Variant(f"{knob.name}={value} (was {knob.value})", _replace(source, knob.start, knob.end, str(value)))
            for knob in found for value in _alternatives(knob)]


def _warps_variants(source: str, launches: list[ast.Call]) -> list[Variant]:
    """num_warps=8 and num_warps=2 added to each launch that passes arguments but no num_warps."""
    out: list[Variant] = []
    for call in launches:
        if not any(kw.arg == "num_warps" for kw in call.keywords) and (call.args or call.keywords):
            close = (call.end_lineno, call.end_col_offset - 1)
            for warps in (8, 2):
                out.append(Variant(f"num_warps={warps} (was the default)", _replace(source, close, close,
                                                                                   f", num_warps={warps}")))
    return out


def _tried_last(variant: Variant) -> bool:
    """Variants down to num_warps=2 or num_stages=1 come after every other."""
    return "num_warps=2" in variant.description or "num_stages=1" in variant.description


def variants(source: str, max_trials: int = 8) -> list[Variant]:
    """Up to `max_trials` one-change variants, nearest changes first; adds num_warps to launches that
    do not set it."""
    try:
        found, launches = knobs(source)
    except SyntaxError:
        return []
    ranked = sorted(_knob_variants(source, found) + _warps_variants(source, launches), key=_tried_last)
    unique = list({v.source: v for v in ranked}.values())
    return unique[:max_trials]
