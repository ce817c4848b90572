"""Text a model or a candidate wrote (answers, code, reasons, tracebacks, printed output), made
inert for each place it is shown: markdown, prompts and the terminal. HTML gets jinja2's escaping."""

from __future__ import annotations

import re

# C0 and C1 control characters but tab and newline: ANSI escape sequences start with ESC (or CSI),
# a carriage return rewrites the line, a backspace erases; shown as U+FFFD instead.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
BACKTICK_RUNS = re.compile(r"`+")
MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~&])")


def plain(text: object) -> str:
    """The text with every control character but tab and newline replaced by U+FFFD."""
    return CONTROL.sub("\ufffd", str(text))


def fence_for(text: str) -> str:
    """A backtick fence longer than any run of backticks in `text` (at least three), so the text
    cannot close the block it is shown in."""
    longest = max((len(run) for run in BACKTICK_RUNS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def fenced(text: object, info: str = "") -> str:
    """`text` as a fenced code block that it cannot break out of."""
    body = plain(text).rstrip("\n")
    fence = fence_for(body)
    return f"{fence}{info}\n{body}\n{fence}"


def markdown_text(text: object) -> str:
    """`text` for one line of markdown (a table cell, a heading): special characters escaped,
    line breaks made spaces, so it renders literally and stays in its cell."""
    one_line = " ".join(plain(text).splitlines())
    return MARKDOWN_SPECIAL.sub(r"\\\1", one_line)
