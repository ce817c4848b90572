"""The text the static checks read is the text that runs, whatever the file says about itself."""

import inspect
import linecache

import pytest

from evaluator.candidate_source import declared_encoding, foreign_encoding, load_module


@pytest.mark.parametrize("source, declared", [
    ("# coding: utf-7\nx = 1\n", (1, "utf-7")),
    ("#!/usr/bin/env python\n# -*- coding: latin-1 -*-\n", (2, "latin-1")),
    ("x = 1\n# coding: utf-7\n", None),  # below code, a cookie is a comment
    ("x = 1\n", None),
])
def test_cookies_are_found_where_python_reads_them(source, declared):
    assert declared_encoding(source) == declared


def test_only_utf8_is_accepted():
    assert foreign_encoding("# coding: utf-8\n") is None and foreign_encoding("# coding=UTF_8\n") is None
    assert "utf-7" in foreign_encoding("# vim: set fileencoding=utf-7 :\n")


def test_the_module_runs_the_text_read_once_and_keeps_it_as_its_source(tmp_path):
    path = tmp_path / "candidate.py"
    path.write_text("# coding: utf-7\ndef f():\n    # +AAo-    return 'hidden'\n    return 'checked'\n")
    module = load_module(str(path), "candidate_source_test")
    assert module.f() == "checked"  # the cookie did not decode a hidden line into code
    path.write_text("def f():\n    return 'rewritten on disk'\n")
    linecache.checkcache(str(path))
    assert "checked" in inspect.getsource(module.f)  # where Triton reads a kernel's source
