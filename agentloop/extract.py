"""Pull the candidate's code out of a model's answer: prose, several code blocks, missing fences."""

from __future__ import annotations

import re

FENCE = re.compile(r"^```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:^```[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
CODE_START = re.compile(r"^(import |from \w|@triton|def |class )", re.MULTILINE)


def _score(block: str, entry: str) -> int:
    """Prefer the block that is a whole solution: defines the entry, a kernel, and imports."""
    score = 0
    if re.search(rf"^def {re.escape(entry)}\s*\(", block, re.MULTILINE):
        score += 4
    if "@triton.jit" in block or "@triton.autotune" in block:
        score += 2
    if re.search(r"^(import|from) ", block, re.MULTILINE):
        score += 1
    return score


def extract_code(text: str | None, entry: str) -> str | None:
    """The best fenced block (the last among equals), else the text from its first code-looking
    line; None when nothing looks like code."""
    if not text or not text.strip():
        return None
    blocks = [m.group(2) for m in FENCE.finditer(text) if m.group(1).lower() in ("", "python", "py", "python3")]
    blocks = [b for b in blocks if b.strip()]
    if blocks:
        best = max(range(len(blocks)), key=lambda i: (_score(blocks[i], entry), i))
        return blocks[best].strip("\n") + "\n"
    start = CODE_START.search(text)
    if start is None:
        return None
    return text[start.start():].strip("\n") + "\n"
