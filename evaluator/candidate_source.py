"""The candidate's source as one text: what the static checks read is what runs.

Python decodes a file's bytes by its PEP 263 coding cookie, but a str is compiled as it is. The
candidate's process therefore compiles the text the evaluator checked (written as UTF-8, read back
as UTF-8) instead of importing the file, and pins that text in linecache, where Triton reads each
kernel's source: the bytes on disk, which the candidate's own code could rewrite, are never read
again. A cookie naming another encoding is refused by the static checks, since it can only mean
the file says something else than its text."""

from __future__ import annotations

import linecache
import re
import sys
import types
from pathlib import Path

_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
UTF8_NAMES = frozenset({"utf-8", "utf8", "utf_8", "u8", "utf-8-sig"})


def declared_encoding(source: str) -> tuple[int, str] | None:
    """(line, encoding) of a coding cookie in the first two lines, as Python would read it."""
    for number, line in enumerate(source.splitlines()[:2], 1):
        match = _COOKIE.match(line)
        if match:
            return number, match.group(1)
        if line.strip() and not line.lstrip().startswith("#"):
            return None  # a cookie on line 2 counts only below a comment or blank line
    return None


def foreign_encoding(source: str) -> str | None:
    """Why the source cannot be taken as it reads, or None."""
    declared = declared_encoding(source)
    if declared is None or declared[1].lower().replace("_", "-") in UTF8_NAMES:
        return None
    return (f"line {declared[0]}: declares the source encoding {declared[1]!r}; only UTF-8 is accepted "
            "(remove the coding line)")


def load_module(path: str, name: str) -> types.ModuleType:
    """Runs the text at `path` (UTF-8) as the module `name`, with its source pinned for inspection."""
    text = Path(path).read_text(encoding="utf-8")
    linecache.cache[path] = (len(text), None, text.splitlines(keepends=True), path)
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    exec(compile(text, path, "exec", dont_inherit=True), module.__dict__)
    return module
