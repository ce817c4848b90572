"""Maintainability of the candidate's own source: radon's maintainability index and cyclomatic
complexity. Absent (None) when radon is not installed or the source does not parse."""

from __future__ import annotations

from evaluator.result import Maintainability


def measure(source: str) -> Maintainability | None:
    try:
        from radon.complexity import cc_visit
        from radon.metrics import mi_visit
    except ImportError:
        return None
    try:
        blocks = cc_visit(source)
        mi = mi_visit(source, multi=True)
    except (SyntaxError, ValueError, TypeError):
        return None
    complexities = [b.complexity for b in blocks] or [0]
    return Maintainability(mi=round(float(mi), 2), cc_max=max(complexities),
                           cc_mean=round(sum(complexities) / len(complexities), 2))
