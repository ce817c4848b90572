"""Static checks on a candidate's source, before any of it runs.

The rules: only an allowlist of modules may be imported; PyTorch may be used on the host for
allocation and metadata only, however it is spelled (aliases, from-imports, getattr, tensor
methods, the @ operator); no dynamic code (eval, exec, __import__), no dunder access, no
assignment into imported modules; the entry function exists, a @triton.jit kernel is defined,
and a launch is reachable from the entry. Runtime guards back every rule up (see guards.py).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import torch

from evaluator.candidate_source import foreign_encoding
from evaluator.result import Verdict

ALLOWED_MODULES = {
    "torch", "triton", "math", "typing", "functools", "itertools", "dataclasses", "enum",
    "numbers", "collections", "operator", "__future__",
}
ALLOWED_TORCH_MODULES = {"torch", "torch.nn", "torch.nn.functional", "torch.cuda"}
ALLOWED_TRITON_MODULES = {"triton", "triton.language"}

DTYPE_NAMES = {
    "float16", "half", "bfloat16", "float32", "float", "float64", "double", "int8", "uint8", "int16",
    "short", "int32", "int", "int64", "long", "bool", "float8_e4m3fn", "float8_e5m2", "uint16", "uint32",
}
ALLOWED_TORCH = {f"torch.{n}" for n in DTYPE_NAMES} | {
    "torch.empty", "torch.empty_like", "torch.empty_strided", "torch.zeros", "torch.zeros_like",
    "torch.ones", "torch.ones_like", "torch.full", "torch.full_like", "torch.arange",
    "torch.Tensor", "torch.Size", "torch.dtype", "torch.device", "torch.finfo", "torch.iinfo",
    "torch.is_tensor", "torch.is_floating_point", "torch.promote_types", "torch.result_type",
    "torch.broadcast_shapes", "torch.get_default_dtype", "torch.no_grad", "torch.inference_mode",
    "torch.cuda.current_device", "torch.cuda.get_device_properties", "torch.cuda.device_count",
    "torch.cuda.is_available", "torch.cuda.get_device_name", "torch.cuda.get_device_capability",
    "torch.nn.Module", "torch.nn.Parameter", "torch.strided", "torch.layout", "torch.memory_format",
    "torch.contiguous_format", "torch.channels_last", "torch.preserve_format", "torch.Generator",
    "torch.view_as_complex", "torch.view_as_real", "torch.complex64", "torch.complex128", "torch.cfloat",
    "torch.cdouble",
}
ALLOWED_TRITON_PREFIXES = (
    "triton.jit", "triton.autotune", "triton.heuristics", "triton.Config", "triton.cdiv",
    "triton.next_power_of_2", "triton.language", "triton.constexpr",
    "triton.runtime.driver.active.utils.get_device_properties",
    "triton.runtime.driver.active.get_current_device",
)
JIT_DECORATORS = {"triton.jit", "triton.autotune", "triton.heuristics"}
CONSTEXPR_CALLS = {"triton.language.constexpr", "triton.constexpr"}

ALLOWED_TENSOR_METHODS = {
    "size", "stride", "dim", "ndimension", "numel", "nelement", "element_size", "data_ptr",
    "is_contiguous", "contiguous", "view", "view_as", "reshape", "reshape_as", "flatten", "unflatten",
    "squeeze", "unsqueeze", "permute", "transpose", "t", "expand", "expand_as", "narrow", "select",
    "unbind", "split", "chunk", "movedim", "to", "type", "float", "half", "bfloat16", "double", "int",
    "long", "bool", "short", "char", "byte", "cuda", "cpu", "clone", "copy_", "fill_", "zero_",
    "new_empty", "new_zeros", "new_ones", "new_full", "item", "tolist", "is_floating_point",
    "get_device", "detach", "requires_grad_", "storage_offset", "dtype", "shape", "device", "ndim",
    "is_cuda", "T", "mT", "data", "requires_grad", "is_complex", "is_signed",
}
FORBIDDEN_NAMES = {
    "eval", "exec", "compile", "__import__", "globals", "locals", "vars", "setattr", "delattr",
    "open", "breakpoint", "exit", "quit", "__builtins__", "__loader__", "__spec__",
    "memoryview",
}
ALLOWED_DUNDERS = {"__init__", "__name__"}


def _builtin_method_names() -> set[str]:
    names: set[str] = set()
    for t in (list, dict, set, str, tuple, int, float, bytes, bytearray, complex, frozenset):
        names |= {n for n in dir(t) if not n.startswith("_")}
    return names


TENSOR_COMPUTE_METHODS = frozenset(
    n for n in dir(torch.Tensor)
    if not n.startswith("_") and n not in ALLOWED_TENSOR_METHODS and n not in _builtin_method_names()
)


@dataclass
class StaticReport:
    verdict: Verdict | None = None
    problems: list[str] = field(default_factory=list)
    entry: str | None = None
    kernels: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.verdict is None

    @property
    def reason(self) -> str:
        return "; ".join(self.problems)


def check_source(source: str, entry_names: list[str], allowed_apis: frozenset[str] = frozenset()) -> StaticReport:
    report = StaticReport()
    if not source or not source.strip():
        report.verdict = Verdict.NO_CODE
        report.problems.append("no code was given")
        return report
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        report.verdict = Verdict.COMPILE_FAIL
        report.problems.append(f"line {exc.lineno}: syntax error: {exc.msg}")
        return report
    if not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in ast.walk(tree)):
        report.verdict = Verdict.NO_CODE
        report.problems.append("the code defines no function")
        return report
    checker = _Checker(allowed_apis)
    checker.visit(tree)
    report.problems.extend(filter(None, [foreign_encoding(source)]))
    report.problems.extend(checker.problems)
    compile_errors = _non_constexpr_globals(tree, checker)
    report.kernels = sorted(checker.jit_functions)
    report.entry = _find_entry(tree, entry_names)
    if report.entry is None:
        report.problems.append(f"define the entry function `{entry_names[0]}` at module level "
                               "(with the task's signature)")
    if not checker.jit_functions:
        report.problems.append("no @triton.jit kernel is defined; the computation must happen in a Triton kernel")
    elif report.entry is not None and not _launch_reachable(tree, report.entry, checker):
        report.problems.append(f"`{report.entry}` never launches a Triton kernel (kernel[grid](...)) on any path")
    if report.problems:
        report.verdict = Verdict.STATIC_REJECT
    elif compile_errors:
        report.verdict = Verdict.COMPILE_FAIL
        report.problems.extend(compile_errors)
    return report


def _non_constexpr_globals(tree: ast.Module, checker: "_Checker") -> list[str]:
    """Triton's compiler (not its interpreter) refuses kernels that read plain module globals:
    only constexpr globals, modules, dtypes and other kernels may be read. Caught here so a
    candidate fails the same way on the CPU as on a GPU."""
    plain: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AnnAssign, ast.AugAssign)) else []
        value = getattr(node, "value", None)
        allowed = value is not None and (
            (isinstance(value, ast.Call) and checker.qualified(value.func) in CONSTEXPR_CALLS)
            or (checker.qualified(value) or "").startswith("triton.language."))
        for target in targets:
            if isinstance(target, ast.Name):
                (plain.discard if allowed else plain.add)(target.id)
    errors = []
    for fn in ast.walk(tree):
        if not (isinstance(fn, ast.FunctionDef) and fn.name in checker.jit_functions):
            continue
        local = {a.arg for a in fn.args.args + fn.args.kwonlyargs} | {
            n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for body_node in fn.body:
            for n in ast.walk(body_node):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in plain and n.id not in local:
                    errors.append(f"line {n.lineno}: kernel `{fn.name}` reads the global `{n.id}`, which is not a "
                                  f"constexpr; Triton kernels may only read globals declared as "
                                  f"`{n.id} = tl.constexpr(...)` (or pass the value as an argument)")
    return list(dict.fromkeys(errors))


def _find_entry(tree: ast.Module, entry_names: list[str]) -> str | None:
    functions = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for name in entry_names:
        if name in functions:
            return name
    for node in tree.body if "ModelNew.forward" in entry_names else ():
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            if any(isinstance(b, ast.FunctionDef) and b.name == "forward" for b in node.body):
                return "ModelNew.forward"
    return None


class _Checker(ast.NodeVisitor):
    def __init__(self, allowed_apis: frozenset[str]):
        self.allowed_apis = allowed_apis
        self.aliases: dict[str, str] = {}
        self.module_aliases: set[str] = set()
        self.jit_functions: set[str] = set()
        self.functions: dict[str, ast.AST] = {}
        self.problems: list[str] = []
        self._in_jit = 0

    def problem(self, node: ast.AST, text: str) -> None:
        message = f"line {getattr(node, 'lineno', '?')}: {text}"
        if message not in self.problems:
            self.problems.append(message)

    # imports -----------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if self._module_allowed(node, alias.name):
                local = alias.asname or alias.name.split(".")[0]
                self.aliases[local] = alias.name if alias.asname else alias.name.split(".")[0]
                self.module_aliases.add(local)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self.problem(node, "relative imports are not allowed")
            return
        module = node.module or ""
        if not self._module_allowed(node, module):
            return
        for alias in node.names:
            if alias.name == "*":
                self.problem(node, f"`from {module} import *` is not allowed; import names explicitly")
                continue
            qualified = f"{module}.{alias.name}"
            local = alias.asname or alias.name
            if qualified in ALLOWED_TORCH_MODULES or qualified in ALLOWED_TRITON_MODULES:
                self.module_aliases.add(local)
            elif not self._name_allowed(qualified):
                self.problem(node, self._forbidden_text(qualified))
            self.aliases[local] = qualified

    def _module_allowed(self, node: ast.AST, module: str) -> bool:
        root = module.split(".")[0]
        if root not in ALLOWED_MODULES:
            self.problem(node, f"import of `{module}` is not allowed (allowed: torch, triton, math, typing, "
                               "functools and a few other standard modules)")
            return False
        if root == "torch" and module not in ALLOWED_TORCH_MODULES:
            self.problem(node, f"import of `{module}` is not allowed")
            return False
        if root == "triton" and not (module in ALLOWED_TRITON_MODULES or module.startswith("triton.language.")):
            self.problem(node, f"import of `{module}` is not allowed")
            return False
        return True

    # names and attributes ----------------------------------------------------
    def qualified(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualified(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def _name_allowed(self, qualified: str) -> bool:
        if qualified in self.allowed_apis:
            return True
        root = qualified.split(".")[0]
        if root == "torch":
            return qualified in ALLOWED_TORCH or qualified in ALLOWED_TORCH_MODULES
        if root == "triton":
            return qualified in ALLOWED_TRITON_MODULES or any(
                qualified == p or qualified.startswith(p + ".") for p in ALLOWED_TRITON_PREFIXES)
        return True

    @staticmethod
    def _forbidden_text(qualified: str) -> str:
        if qualified.startswith("torch"):
            return (f"`{qualified}` is PyTorch compute, which is not allowed on the host; write it as a Triton "
                    "kernel (host code may only allocate tensors and read their metadata)")
        return f"`{qualified}` is not allowed"

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_NAMES:
            self.problem(node, f"`{node.id}` is not allowed in a candidate")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("__") and node.attr not in ALLOWED_DUNDERS:
            self.problem(node, f"access to `{node.attr}` is not allowed")
        qualified = self.qualified(node)
        if qualified is not None:
            if not self._name_allowed(qualified) and not self._is_prefix_of_parent(node):
                self.problem(node, self._forbidden_text(qualified))
        elif not self._in_jit and node.attr in TENSOR_COMPUTE_METHODS and not self._rooted_at_module(node):
            self.problem(node, f"`.{node.attr}(...)` is PyTorch compute on the host; do it inside a Triton kernel")
        self.generic_visit(node)

    def _is_prefix_of_parent(self, node: ast.Attribute) -> bool:
        return getattr(node, "_chain_prefix", False)

    def _rooted_at_module(self, node: ast.AST) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id in self.aliases

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "getattr" and node.args:
            self._check_getattr(node)
        self.generic_visit(node)

    def _check_getattr(self, node: ast.Call) -> None:
        if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant) or not isinstance(node.args[1].value, str):
            self.problem(node, "getattr with a computed attribute name is not allowed")
            return
        attr = node.args[1].value
        if attr.startswith("__"):
            self.problem(node, f"access to `{attr}` is not allowed")
            return
        base = self.qualified(node.args[0])
        if base is not None and not self._name_allowed(f"{base}.{attr}"):
            self.problem(node, self._forbidden_text(f"{base}.{attr}"))
        elif base is None and not self._in_jit and attr in TENSOR_COMPUTE_METHODS:
            self.problem(node, f"`.{attr}(...)` is PyTorch compute on the host; do it inside a Triton kernel")

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult) and not self._in_jit:
            self.problem(node, "the @ operator is PyTorch compute on the host; use tl.dot in a Triton kernel")
        self.generic_visit(node)

    # assignments into modules (monkeypatching) -------------------------------
    def _check_target(self, target: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._check_target(t)
            return
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            root = target
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name) and root.id in self.aliases:
                self.problem(target, f"assigning into `{self.aliases[root.id]}` (monkeypatching) is not allowed")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._check_target(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_target(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._check_target(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._check_target(target)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        for name in node.names:
            if name in self.aliases:
                self.problem(node, f"rebinding the imported name `{name}` is not allowed")

    # functions ---------------------------------------------------------------
    def _is_jit(self, node: ast.FunctionDef) -> bool:
        for deco in node.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            if self.qualified(target) in JIT_DECORATORS:
                return True
        return False

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.functions.setdefault(node.name, node)
        jit = self._is_jit(node)
        if jit:
            self.jit_functions.add(node.name)
        self._in_jit += jit
        self.generic_visit(node)
        self._in_jit -= jit

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for item in node.body:
            if isinstance(item, ast.FunctionDef):
                self.functions.setdefault(f"{node.name}.{item.name}", item)
                self.functions.setdefault(item.name, item)
        self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            node.value._chain_prefix = True  # type: ignore[attr-defined]
        super().generic_visit(node)


def _launch_reachable(tree: ast.Module, entry: str, checker: _Checker) -> bool:
    """True if some function reachable from the entry calls something subscripted: kernel[grid](...)."""
    seen: set[str] = set()
    todo = [entry]
    while todo:
        name = todo.pop()
        if name in seen or name not in checker.functions or name in checker.jit_functions:
            continue
        seen.add(name)
        for node in ast.walk(checker.functions[name]):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
                return True
            if isinstance(node, ast.Name) and node.id in checker.functions:
                todo.append(node.id)
            if isinstance(node, ast.Attribute) and node.attr in checker.functions:
                todo.append(node.attr)
    return False
