"""Code extraction from model answers: fenced blocks, prose around them, missing fences."""

import pytest

from agentloop.extract import extract_code


SOLUTION = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n\ndef softmax(input, dim, dtype=None):\n    k[(1,)](input)\n"


@pytest.mark.parametrize("text", [
    f"Here you go:\n```python\n{SOLUTION}```\nThis should be fast.",
    f"The bug was here:\n```python\nx = tl.exp(x)\n```\nFixed version:\n```python\n{SOLUTION}```\n",
    f"```\n{SOLUTION}```",
    f"I will subtract the max first.\n\n{SOLUTION}",
    f"```python\n{SOLUTION}",  # the answer was cut off before the closing fence
    f"Full module:\n```py\n{SOLUTION}```\nAnd a test:\n```python\nprint(softmax(x, 0))\n```",
])
def test_extraction_copes_with_prose_blocks_and_missing_fences(text):
    assert extract_code(text, "softmax").strip() == SOLUTION.strip()


@pytest.mark.parametrize("text", ["", "   ", "I cannot help with that.", "```text\nno code\n```"])
def test_no_code_is_none(text):
    assert extract_code(text, "softmax") is None
