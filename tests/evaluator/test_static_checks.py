"""The static rules: what a candidate may and may not write, however it is spelled."""

import textwrap

import pytest

from evaluator.result import Verdict
from evaluator.static_checks import check_source

KERNEL = '''
import torch
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.sum(tl.load(x_ptr + offs, mask=offs < n), axis=0), mask=offs < n)
'''


def check(body: str, entry: str = "f", allowed=frozenset()):
    return check_source(KERNEL + textwrap.dedent(body), [entry, "kernel_function"], allowed)


def launching(body: str) -> str:
    """`body` inside an entry that also launches the kernel."""
    return "def f(x):\n    y = torch.empty_like(x)\n    k[(1,)](x, y, x.numel(), BLOCK=16)\n" + \
        textwrap.indent(textwrap.dedent(body), "    ")


def test_a_plain_launch_passes():
    report = check(launching("return y"))
    assert report.ok, report.problems
    assert report.entry == "f" and report.kernels == ["k"]


@pytest.mark.parametrize("body, fragment", [
    ("return torch.matmul(x, x)", "`torch.matmul` is PyTorch compute"),
    ("return torch.nn.functional.relu(x)", "`torch.nn.functional.relu`"),
    ("return x.sum()", "`.sum(...)`"),
    ("return x.exp().add(1)", "`.exp(...)`"),
    ("return x @ x", "the @ operator"),
    ("return getattr(torch, 'mat' + 'mul')(x, x)", "computed attribute name"),
    ("return getattr(torch, 'matmul')(x, x)", "`torch.matmul`"),
    ("return getattr(x, 'sum')()", "`.sum(...)`"),
    ("return eval('x.sum()')", "`eval` is not allowed"),
    ("exec('y = 1')\nreturn y", "`exec` is not allowed"),
    ("return __import__('torch').sum(x)", "`__import__` is not allowed"),
    ("return x.__class__", "access to `__class__`"),
    ("return torch.ops.aten.add(x, x)", "`torch.ops.aten.add`"),
    ("torch.cuda.synchronize = None\nreturn y", "monkeypatching"),
    ("triton.language.sum = None\nreturn y", "monkeypatching"),
    ("setattr(torch, 'x', 1)\nreturn y", "`setattr` is not allowed"),
    ("return torch.cuda.Stream()", "`torch.cuda.Stream`"),
    ("return triton.testing.do_bench(lambda: 0)", "`triton.testing.do_bench`"),
    ("return open('/etc/passwd').read()", "`open` is not allowed"),
])
def test_torch_compute_and_escape_hatches_are_rejected(body, fragment):
    report = check(launching(body))
    assert report.verdict is Verdict.STATIC_REJECT
    assert any(fragment in p for p in report.problems), report.problems


@pytest.mark.parametrize("imports, fragment", [
    ("import torch.nn.functional as F\nact = F.gelu", "`torch.nn.functional.gelu`"),
    ("from torch import matmul as mm", "`torch.matmul`"),
    ("from torch.nn.functional import gelu", "`torch.nn.functional.gelu`"),
    ("import torch as T\nact = T.tanh", "`torch.tanh`"),
    ("import os", "import of `os`"),
    ("import subprocess", "import of `subprocess`"),
    ("import importlib", "import of `importlib`"),
    ("import time", "import of `time`"),
    ("import ctypes", "import of `ctypes`"),
    ("import torch.utils.cpp_extension", "import of `torch.utils.cpp_extension`"),
    ("from triton.runtime import driver", "import of `triton.runtime`"),
    ("from evaluator import worker", "import of `evaluator`"),
    ("from tasks.Math.softmax import reference", "import of `tasks.Math.softmax`"),
    ("from .sibling import thing", "relative imports"),
    ("from torch import *", "import *"),
])
def test_imports_and_aliases_are_resolved(imports, fragment):
    report = check(imports + "\n" + launching("return y"))
    assert report.verdict is Verdict.STATIC_REJECT
    assert any(fragment in p for p in report.problems), report.problems


@pytest.mark.parametrize("body", [
    "z = x.contiguous().view(-1).to(torch.float32)\nreturn z.reshape(x.shape).permute(1, 0).t()",
    "n = x.shape[0] * x.stride(0) + x.numel() + x.element_size()\nreturn y",
    "buf = torch.zeros((4, 4), device=x.device, dtype=torch.float16)\nreturn buf.fill_(1.0)",
    "props = torch.cuda.get_device_properties(0)\nreturn y",
    "seen = set()\nseen.add(1)\nitems = sorted([3, 1])\nitems.sort()\nreturn y",
    "import math\nreturn math.sqrt(2) * triton.cdiv(5, 2) * triton.next_power_of_2(3)",
    "from triton.language.extra import libdevice\nreturn y",
])
def test_allocation_metadata_and_plain_python_pass(body):
    report = check(launching(body))
    assert report.ok, report.problems


def test_entry_and_launch_are_required():
    assert "define the entry function `g`" in check(launching("return y"), entry="g").reason
    no_kernel = check_source("import torch\ndef f(x):\n    return x\n", ["f"])
    assert no_kernel.verdict is Verdict.STATIC_REJECT and "no @triton.jit kernel" in no_kernel.reason
    unlaunched = check("def f(x):\n    return torch.empty_like(x)\n")
    assert "never launches" in unlaunched.reason


def test_launch_through_helpers_and_methods_is_found():
    helper = check("def launch(x, y):\n    k[(1,)](x, y, 1, BLOCK=16)\n\ndef f(x):\n    y = torch.empty_like(x)\n"
                   "    launch(x, y)\n    return y\n")
    assert helper.ok, helper.problems
    model = check("class ModelNew(torch.nn.Module):\n    def run(self, x):\n        k[(1,)](x, x, 1, BLOCK=16)\n"
                  "    def forward(self, x):\n        self.run(x)\n        return x\n", entry="ModelNew.forward")
    assert model.ok and model.entry == "ModelNew.forward", model.problems


def test_kernel_function_alias_is_an_entry():
    assert check(launching("return y").replace("def f(", "def kernel_function("), entry="gelu").entry == \
        "kernel_function"


def test_allowances_open_a_named_call():
    body = launching("seed = torch.randint(0, 2**31 - 1, (1,)).item()\nreturn y")
    assert check(body).verdict is Verdict.STATIC_REJECT
    assert check(body, allowed=frozenset({"torch.randint"})).ok


@pytest.mark.parametrize("source, verdict", [
    ("", Verdict.NO_CODE),
    ("   \n# just a comment\n", Verdict.NO_CODE),
    ("x = 1\n", Verdict.NO_CODE),
    ("def f(:\n", Verdict.COMPILE_FAIL),
])
def test_empty_and_unparsable_sources(source, verdict):
    assert check_source(source, ["f"]).verdict is verdict
