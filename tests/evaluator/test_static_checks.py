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
    ("return torch.matmul(x, x)", "`torch.matmul` is not on torch's list"),
    ("return torch.nn.functional.relu(x)", "`torch.nn.functional.relu`"),
    ("return x.sum()", "`.sum` is PyTorch compute"),
    ("return x.exp().add(1)", "`.exp` is PyTorch compute"),
    ("return x.add(x).sort().index_select(0, x)", "`.add` is PyTorch compute"),
    ("return getattr(torch, 'mat' + 'mul')(x, x)", "`getattr` is not an allowed builtin"),
    ("return vars(torch)['matmul'](x, x)", "`vars` is not an allowed builtin"),
    ("return '{0.sum}'.format(x)()", "`.format` is not an allowed attribute"),
    ("return eval('x.sum()')", "`eval` is not an allowed builtin"),
    ("exec('y = 1')\nreturn y", "`exec` is not an allowed builtin"),
    ("return __import__('torch').sum(x)", "`__import__` is not allowed"),
    ("return x.__class__", "access to `__class__`"),
    ("return torch.ops.aten.add(x, x)", "`torch.ops` is not on torch's list"),
    ("torch.cuda.synchronize = None\nreturn y", "monkeypatching"),
    ("triton.language.sum = None\nreturn y", "monkeypatching"),
    ("setattr(torch, 'x', 1)\nreturn y", "`setattr` is not an allowed builtin"),
    ("return torch.cuda.Stream()", "`torch.cuda.Stream`"),
    ("return triton.testing.do_bench(lambda: 0)", "`triton.testing` is not on the list"),
    ("return open('/etc/passwd').read()", "`open` is not an allowed builtin"),
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
    ("from triton.runtime import driver", "import from `triton.runtime`"),
    ("from evaluator import worker", "import from `evaluator`"),
    ("from tasks.Math.softmax import reference", "import from `tasks.Math.softmax`"),
    ("from .sibling import thing", "import from `.sibling`"),
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
    "seen = set()\nseen.update({1})\nitems = sorted([3, 1])\nitems.reverse()\nreturn y",
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


@pytest.mark.parametrize("body, rule", [
    ("import operator\nreturn operator.attrgetter('nn.functional.gelu')(torch)(x)", "imports"),
    ("import operator\nreturn operator.methodcaller('softmax', -1)(x)", "imports"),
    ("import typing\nreturn typing.sys.modules['evaluator.sandboxed.candidate_process']", "module-names"),
    ("import functools\nreturn functools.reduce(lambda a, b: a, [x])", "imports"),
    ("import dataclasses\nreturn dataclasses.inspect.os.getcwd()", "module-names"),
    ("return tl.core.builtins.exec('y = x.sum()')", "module-names"),
    ("return tl.math.core", "module-names"),
    ("return k.fn(x, y, x.numel(), 16)", "launches"),
    ("return k(x, y, x.numel(), 16)", "launches"),
    ("launch = k\nreturn launch[(1,)](x, y, 1, BLOCK=16)", "launches"),
    ("k[lambda meta: (y.copy_(x * 2), 1)[1:]](x, y, 1, BLOCK=16)\nreturn y", "grids"),
    ("return x.values()", "attributes"),
    ("return x.index((0,), (d,))", "attributes"),
    ("return type(x)", "builtins"),
    ("return x.__class__", "dunders"),
    ("return __name__", "dunders"),
    ("return y @ y", "statements"),
    ("return [(yield y)]", "statements"),
    ("match x:\n    case object(__class__=c):\n        return c", "statements"),
    ("return torch.tensor([v * 2 for v in x])", "module-names"),
    ("return torch.finfo(x.dtype).max + x.max()", "attributes"),
])
def test_the_allowlist_refuses_what_it_does_not_name(body, rule):
    report = check(launching(body))
    assert report.verdict is Verdict.STATIC_REJECT
    assert any(p.endswith(f"[rule {rule}]") for p in report.problems), report.problems
    assert f"rule {rule} allows:" in report.reason, "the rejection says what the rule allows"


@pytest.mark.parametrize("code, rule", [
    ("class Box(tuple):\n    pass\n", "classes"),
    ("class Box:\n    def __iter__(self):\n        return iter(())\n", "dunders"),
    ("class Box:\n    print('at import')\n", "classes"),
    ("class Box(metaclass=type):\n    pass\n", "classes"),
    ("import functools\n@functools.total_ordering\nclass Box:\n    pass\n", "imports"),
    ("def deco(c):\n    return c\n@deco\nclass Box:\n    pass\n", "classes"),
    ("import functools\n@functools.lru_cache\ndef g(x):\n    return x\n", "decorators"),
    ("def deco(f):\n    return f\n@deco\ndef g(x):\n    return x\n", "decorators"),
    ("@triton.autotune(configs=[triton.Config({'B': 1})], key=[], prune_configs_by={'early_config_prune': "
     "print})\n@triton.jit\ndef t(x_ptr, B: tl.constexpr):\n    pass\n", "decorators"),
    ("@triton.heuristics({'B': lambda args: args['x_ptr'].copy_(args['x_ptr'] * 2)})\n@triton.jit\n"
     "def t(x_ptr, B: tl.constexpr):\n    pass\n", "grids"),
    ("@triton.jit\ndef t(x_ptr):\n    x = torch.softmax(x_ptr, 0)\n", "jit-bodies"),
    ("def helper(v):\n    return v\n@triton.jit\ndef t(x_ptr):\n    helper(x_ptr)\n", "jit-bodies"),
    ("@triton.jit\ndef t(x_ptr):\n    x_ptr.fn(0)\n", "jit-bodies"),
    ("counter = 0\ndef g():\n    global counter\n    counter += 1\n", "statements"),
    ("async def g():\n    pass\n", "statements"),
])
def test_definitions_follow_the_table(code, rule):
    report = check(code + launching("return y"))
    assert report.verdict is Verdict.STATIC_REJECT
    assert any(p.endswith(f"[rule {rule}]") for p in report.problems), report.problems


@pytest.mark.parametrize("body", [
    "s = torch.tensor([float(x.shape[0])], device=x.device, dtype=torch.float32)\nreturn y",
    "return x.mH.contiguous() if x.dtype in (torch.complex32, torch.complex64) else x.mT",
    "info = torch.finfo(x.dtype)\nreturn info.max - torch.iinfo(torch.int32).min",
    "grid = lambda meta: (triton.cdiv(x.numel(), meta['BLOCK']), x.shape[0] // 2)\n"
    "k[grid](x, y, x.numel(), BLOCK=16)\nreturn y",
    "props = triton.runtime.driver.active.utils.get_device_properties(x.device.index)\nreturn props['max_shared_mem']",
    "from typing import Optional, Tuple\nparts: Optional[Tuple[int, ...]] = None\nreturn y",
    "from triton.language.extra import libdevice\nreturn y",
    "kinds = [True, False]\nreturn kinds.index(True) + x.device.index + kinds.count(False)",
])
def test_common_styles_pass(body):
    report = check(launching(body))
    assert report.ok, report.problems


def test_a_model_class_and_its_methods_pass():
    code = ("class ModelNew(torch.nn.Module):\n    SCALE = 2.0\n    def __init__(self, n):\n"
            "        super().__init__()\n        self.weight = torch.nn.Parameter(torch.ones(n))\n"
            "    def run(self, x):\n        k[(1,)](x, self.weight, 1, BLOCK=16)\n"
            "    def forward(self, x):\n        self.run(x)\n        return x\n")
    report = check(code, entry="ModelNew.forward")
    assert report.ok, report.problems


def test_a_dataclass_config_passes():
    code = ("from dataclasses import dataclass\n@dataclass(frozen=True)\nclass Launch:\n    BLOCK: int\n"
            "    warps: int = 4\n    @staticmethod\n    def pick(n):\n        return Launch(16, 4)\n")
    body = "cfg = Launch.pick(x.numel())\nk[lambda meta: (triton.cdiv(x.numel(), cfg.BLOCK),)](x, y, 1, BLOCK=cfg.BLOCK)\n" \
           "return y"
    report = check(code + launching(body))
    assert report.ok, report.problems


def test_own_attributes_cannot_license_tensor_methods():
    code = "class Box:\n    def __init__(self):\n        self.softmax = 1\n" + launching("return x.softmax(0)")
    assert any("`.softmax` is PyTorch compute" in p for p in check(code).problems)


def test_a_main_block_is_blanked_and_not_checked():
    main = "\nif __name__ == \"__main__\":\n    import numpy\n    x = torch.randn(8)\n    print(f(x).sum())\n"
    report = check(launching("return y") + main)
    assert report.ok, report.problems
    assert "numpy" not in report.source and report.source.count("\n") == (KERNEL + launching("return y") + main).count("\n")
    with_else = check(launching("return y") + main + "else:\n    x = 1\n")
    assert any("[rule dunders]" in p for p in with_else.problems), "a main block with an else still runs: checked"


def test_the_readme_shows_the_rule_table():
    from pathlib import Path

    from evaluator.host_rules import RULES, markdown_table
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    shown = [line.strip() for line in readme.splitlines()]
    table = markdown_table().splitlines()
    start = shown.index(table[0]) if table[0] in shown else -1
    assert shown[start:start + len(table)] == table, "regenerate README's table: python -m evaluator.host_rules"
    assert len({r.id for r in RULES}) == len(RULES)
