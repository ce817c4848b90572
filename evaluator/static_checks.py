"""Static checks on a candidate's source, before any of it runs.

Host code is an allowlist (host_rules.py holds the table and the lists): imports, the names used
from each module, bare names, attribute names, decorators, classes and statements must each be on
a list; @triton.jit bodies use triton.language and other kernels; kernels are only launched; launch
grids are integer arithmetic. Every problem names its rule and what the rule allows. A trailing
`if __name__ == "__main__":` block is blanked out first: the text checked is the text that runs.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field

import torch

from evaluator import host_rules as rules
from evaluator.candidate_source import foreign_encoding
from evaluator.result import Verdict

TENSOR_NAMES = frozenset(dir(torch.Tensor))
PYTHON_BUILTINS = frozenset(dir(builtins))  # any other unbound name is the candidate's NameError


@dataclass
class StaticReport:
    verdict: Verdict | None = None
    problems: list[str] = field(default_factory=list)
    entry: str | None = None
    kernels: list[str] = field(default_factory=list)
    # The text to run: the source with its __main__ block blanked (line numbers kept).
    source: str = ""
    cited: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.verdict is None

    @property
    def reason(self) -> str:
        allows = [f"rule {r} allows: {rules.RULE[r].allows}" for r in self.cited]
        return "; ".join(self.problems + allows)


def check_source(source: str, entry_names: list[str], allowed_apis: frozenset[str] = frozenset()) -> StaticReport:
    report = StaticReport(source=source)
    if not source or not source.strip():
        return _fail(report, Verdict.NO_CODE, "no code was given")
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return _fail(report, Verdict.COMPILE_FAIL, f"line {exc.lineno}: syntax error: {exc.msg}")
    report.source = without_main_block(source, tree)
    tree = ast.parse(report.source)
    if not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in ast.walk(tree)):
        return _fail(report, Verdict.NO_CODE, "the code defines no function")
    checker = Checker(tree, allowed_apis)
    encoding = foreign_encoding(source)
    if encoding:
        checker.problem(None, "source", encoding)
    checker.visit(tree)
    report.kernels = sorted(checker.jit_functions)
    report.entry = _find_entry(tree, entry_names)
    if report.entry is None:
        checker.problem(None, "entry", f"define the entry function `{entry_names[0]}` at module level "
                                       "(with the task's signature)")
    if not checker.jit_functions:
        checker.problem(None, "entry", "no @triton.jit kernel is defined; the computation must happen in a "
                                       "Triton kernel")
    elif report.entry is not None and not _launch_reachable(report.entry, checker):
        checker.problem(None, "entry", f"`{report.entry}` never launches a Triton kernel (kernel[grid](...)) "
                                       "on any path")
    report.problems, report.cited = checker.problems, checker.cited
    compile_errors = _non_constexpr_globals(tree, checker)
    if report.problems:
        report.verdict = Verdict.STATIC_REJECT
    elif compile_errors:
        report.verdict = Verdict.COMPILE_FAIL
        report.problems.extend(compile_errors)
    return report


def _fail(report: StaticReport, verdict: Verdict, text: str) -> StaticReport:
    report.verdict = verdict
    report.problems.append(text)
    return report


def _is_main_guard(node: ast.stmt) -> bool:
    if not (isinstance(node, ast.If) and not node.orelse and isinstance(node.test, ast.Compare)):
        return False
    test = node.test
    sides = [test.left, *test.comparators]
    return (len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and {ast.dump(s) for s in sides} == {ast.dump(ast.Name("__name__", ast.Load())),
                                                  ast.dump(ast.Constant("__main__"))})


def without_main_block(source: str, tree: ast.Module) -> str:
    """The source with every top-level `if __name__ == "__main__":` block (with no else) blanked."""
    lines = source.splitlines(keepends=True)
    for node in tree.body:
        if _is_main_guard(node):
            for i in range(node.lineno - 1, node.end_lineno):
                lines[i] = "\n"
    return "".join(lines)


class Scope:
    """What the file binds: names, its own attribute names, and the names bound to finfo/iinfo."""

    def __init__(self, tree: ast.Module):
        self.names: set[str] = set()
        self.own_attributes: set[str] = set()
        self.info_names: set[str] = set()
        for node in ast.walk(tree):
            self._collect(node)
        self.own_attributes -= rules.RESERVED_ATTRIBUTES

    def _collect(self, node: ast.AST) -> None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            self.names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.names.add(node.name)
            if isinstance(node, ast.ClassDef):
                self.own_attributes |= {_bound_name(item) for item in node.body} - {None}
        elif isinstance(node, ast.arg):
            self.names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self.names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            self.own_attributes.add(node.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self.names |= {a.asname or a.name.split(".")[0] for a in node.names}
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                isinstance(node.value.func, ast.Attribute) and node.value.func.attr in ("finfo", "iinfo"):
            self.info_names |= {t.id for t in node.targets if isinstance(t, ast.Name)}


def _bound_name(item: ast.stmt) -> str | None:
    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return item.name
    if isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name):
        return item.targets[0].id
    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
        return item.target.id
    return None


class Checker(ast.NodeVisitor):
    def __init__(self, tree: ast.Module, allowed_apis: frozenset[str]):
        self.allowed_apis = allowed_apis
        self.scope = Scope(tree)
        self.aliases: dict[str, str] = _allowed_aliases(tree, allowed_apis)
        self.jit_functions = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and self._jit(n)}
        self.functions: dict[str, ast.AST] = {}
        self.assigned: dict[str, list[ast.AST]] = {}
        self.problems: list[str] = []
        self.cited: list[str] = []
        self.jit_locals: set[str] | None = None
        self.parents: dict[int, ast.AST] = {}
        self.module_constants = _module_constants(tree)
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.assigned.setdefault(target.id, []).append(node.value)
            if isinstance(node, ast.FunctionDef):
                self.assigned.setdefault(node.name, []).append(node)

    def problem(self, node: ast.AST | None, rule: str, text: str) -> None:
        where = f"line {node.lineno}: " if node is not None and hasattr(node, "lineno") else ""
        message = f"{where}{text} [rule {rule}]"
        if message not in self.problems:
            self.problems.append(message)
        if rule not in self.cited:
            self.cited.append(rule)

    @property
    def in_jit(self) -> bool:
        return self.jit_locals is not None

    # names ----------------------------------------------------------------------------------------
    def qualified(self, node: ast.AST) -> str | None:
        """The dotted name a module-rooted expression names, while every prefix is a namespace."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualified(node.value)
            return f"{base}.{node.attr}" if base in rules.NAMESPACES else None
        return None

    def _module_name_allowed(self, namespace: str, name: str) -> bool:
        qualified = f"{namespace}.{name}"
        return name in rules.MODULE_NAMES.get(namespace, ()) or qualified in self.allowed_apis

    def _forbidden_module_name(self, node: ast.AST, qualified: str) -> None:
        if qualified.startswith("torch"):
            self.problem(node, "module-names", f"`{qualified}` is not on torch's list: host code only allocates "
                                               "and reads metadata; write the computation as a Triton kernel")
        else:
            self.problem(node, "module-names", f"`{qualified}` is not on the list of names from its module")

    # imports --------------------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name not in rules.IMPORTABLE:
                self.problem(node, "imports", f"import of `{alias.name}` is not allowed")
                continue
            local = alias.asname or alias.name.split(".")[0]
            self.aliases[local] = alias.name if alias.asname else alias.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or module not in rules.IMPORTABLE:
            self.problem(node, "imports", f"import from `{'.' * node.level}{module}` is not allowed")
            return
        for alias in node.names:
            qualified = f"{module}.{alias.name}"
            if alias.name == "*":
                self.problem(node, "imports", f"`from {module} import *` is not allowed; import names explicitly")
            elif qualified not in rules.NAMESPACES and not self._module_name_allowed(module, alias.name):
                self._forbidden_module_name(node, qualified)
            else:
                self.aliases[alias.asname or alias.name] = qualified

    # bare names -----------------------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        if name.startswith("__"):
            self.problem(node, "dunders", f"`{name}` is not allowed")
        elif self.in_jit:
            self._jit_name(node)
        elif name in self.jit_functions and isinstance(node.ctx, ast.Load) and not self._launched(node):
            self.problem(node, "launches", f"the kernel `{name}` is used as a value; launch it as "
                                           f"`{name}[grid](...)`")
        elif name not in self.scope.names and name not in rules.HOST_BUILTINS and name in PYTHON_BUILTINS:
            self.problem(node, "builtins", f"`{name}` is not an allowed builtin")

    def _launched(self, node: ast.Name) -> bool:
        parent = self.parents.get(id(node))
        grand = self.parents.get(id(parent))
        return isinstance(parent, ast.Subscript) and parent.value is node and isinstance(grand, ast.Call) \
            and grand.func is parent

    def _jit_name(self, node: ast.Name) -> None:
        name = node.id
        if name in self.jit_locals or name in self.jit_functions or name in rules.JIT_BUILTINS:
            return
        qualified = self.aliases.get(name)
        if qualified is not None:
            if qualified.split(".")[0] in ("triton", "math"):
                return
            self.problem(node, "jit-bodies", f"`{name}` ({qualified}) cannot be used inside a Triton kernel")
        elif name in self.module_constants:
            return
        else:
            self.problem(node, "jit-bodies", f"`{name}` cannot be used inside a Triton kernel (only "
                                             "triton.language, other @triton.jit functions and constants)")

    # attributes -----------------------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        base = self.qualified(node.value)
        if attr.startswith("__"):
            if not (attr == "__init__" and _is_super_call(node.value)):
                self.problem(node, "dunders", f"access to `{attr}` is not allowed")
        elif base in rules.NAMESPACES:
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                self.problem(node, "module-names", f"assigning into `{base}` (monkeypatching) is not allowed")
            elif f"{base}.{attr}" not in rules.NAMESPACES and not self._module_name_allowed(base, attr):
                self._forbidden_module_name(node, f"{base}.{attr}")
        elif isinstance(node.value, ast.Name) and node.value.id in self.jit_functions and not self.in_jit:
            self.problem(node, "launches", f"`{node.value.id}.{attr}`: a kernel is only launched, as "
                                           f"`{node.value.id}[grid](...)`")
        elif not self._value_attribute_allowed(node):
            self._forbidden_attribute(node)
        self.generic_visit(node)

    def _value_attribute_allowed(self, node: ast.Attribute) -> bool:
        attr = node.attr
        if self.in_jit:
            return attr in rules.JIT_ATTRIBUTES
        if attr in rules.INFO_ONLY:
            return self._is_info(node.value)
        if attr == "index":  # a device's index, or list.index(v); a tensor's index binds dimensions (two arguments)
            call = self.parents.get(id(node))
            return (isinstance(node.value, ast.Attribute) and node.value.attr == "device") or (
                isinstance(call, ast.Call) and call.func is node and len(call.args) == 1 and not call.keywords
                and not isinstance(call.args[0], ast.Starred))
        return attr in rules.VALUE_ATTRIBUTES or attr in self.scope.own_attributes

    def _is_info(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            return self.qualified(node.func) in ("torch.finfo", "torch.iinfo")
        return isinstance(node, ast.Name) and node.id in self.scope.info_names

    def _forbidden_attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        if self.in_jit:
            self.problem(node, "jit-bodies", f"`.{attr}` is not a triton.language attribute")
        elif attr in TENSOR_NAMES:
            self.problem(node, "attributes", f"`.{attr}` is PyTorch compute on the host (or reaches past the "
                                             "allowed names); do it inside a Triton kernel")
        else:
            self.problem(node, "attributes", f"`.{attr}` is not an allowed attribute name")

    # calls, launches and grids --------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        if self.qualified(node.func) == "torch.tensor" and not _scalar_list(node):
            self.problem(node, "module-names", "`torch.tensor` only uploads scalars here: "
                                               "`torch.tensor([float(v)], device=...)`")
        func = node.func
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name) and \
                func.value.id in self.jit_functions and not self.in_jit:
            self._check_grid(func.slice)
        if isinstance(func, ast.Name) and func.id in self.scope.names and func.id not in self.jit_functions \
                and self.in_jit and func.id not in self.jit_locals and func.id not in rules.JIT_BUILTINS \
                and func.id not in self.aliases:
            self.problem(node, "jit-bodies", f"`{func.id}` is not a @triton.jit function; a kernel calls only "
                                             "triton.language and other @triton.jit functions")
        self.generic_visit(node)

    def _check_grid(self, grid: ast.AST) -> None:
        for expression in self._grid_expressions(grid, set()):
            for sub in ast.walk(expression):
                if not self._grid_node_allowed(sub):
                    self.problem(sub, "grids", f"`{ast.unparse(sub)}` is not allowed in a launch grid")
                    break

    def _grid_expressions(self, grid: ast.AST, seen: set[str]) -> list[ast.AST]:
        if isinstance(grid, ast.Lambda):
            return [grid.body]
        if isinstance(grid, ast.Name) and grid.id not in seen:
            seen.add(grid.id)
            found = []
            for value in self.assigned.get(grid.id, []):
                if isinstance(value, ast.FunctionDef):
                    found += [s for s in value.body if not _docstring(s)]
                elif isinstance(value, (ast.Lambda, ast.Name)):
                    found += self._grid_expressions(value, seen)
            return found
        return [grid] if not isinstance(grid, ast.Name) else []

    def _grid_node_allowed(self, node: ast.AST) -> bool:
        if isinstance(node, (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.keyword)):
            return True
        if isinstance(node, (ast.Return, ast.Assign, ast.Tuple, ast.List, ast.Constant, ast.Name, ast.BinOp,
                             ast.UnaryOp, ast.Subscript, ast.Slice, ast.IfExp, ast.Compare, ast.BoolOp)):
            return not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.MatMult)
        if isinstance(node, ast.Attribute):
            return (node.attr in rules.TENSOR_ATTRIBUTES or node.attr in self.scope.own_attributes
                    or self.qualified(node) is not None)
        if isinstance(node, ast.Call):
            if node.keywords:
                return False
            func = node.func
            name = self.qualified(func) or (func.id if isinstance(func, ast.Name) else None)
            return name in rules.GRID_CALLS or (isinstance(func, ast.Attribute) and func.attr in (
                "numel", "size", "stride", "dim", "element_size"))
        return False

    # definitions ----------------------------------------------------------------------------------
    def _jit(self, node: ast.FunctionDef) -> bool:
        return any(self._decorator_name(d) in rules.JIT_DECORATORS for d in node.decorator_list)

    def _decorator_name(self, deco: ast.AST) -> str | None:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = self.qualified(target)
        if name is None and isinstance(target, ast.Name) and target.id == "staticmethod":
            return "staticmethod"
        return name

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.functions.setdefault(node.name, node)
        parent = self.parents.get(id(node))
        in_class = isinstance(parent, ast.ClassDef)
        if node.name.startswith("__") and not (in_class and node.name == "__init__"):
            self.problem(node, "dunders", f"defining `{node.name}` is not allowed")
        for deco in node.decorator_list:
            name = self._decorator_name(deco)
            allowed = name in rules.JIT_DECORATORS or name in rules.HOST_DECORATORS or (
                name == "staticmethod" and in_class)
            if not allowed:
                self.problem(deco, "decorators", f"the decorator `{ast.unparse(deco)}` is not allowed")
            elif isinstance(deco, ast.Call):
                self._check_decorator_arguments(name, deco)
        if node.name in self.jit_functions and not self.in_jit:
            self._visit_jit(node)
        else:
            self.generic_visit(node)

    def _check_decorator_arguments(self, name: str, deco: ast.Call) -> None:
        """Autotuning hooks run inside the launch: none but zeroing and restoring named arguments;
        heuristics are integer arithmetic on the arguments, like grids."""
        for keyword in deco.keywords:
            if name == "triton.autotune" and keyword.arg not in rules.AUTOTUNE_KEYWORDS:
                self.problem(keyword.value, "decorators", f"`triton.autotune({keyword.arg}=...)` is not allowed "
                                                          f"(allowed: {', '.join(sorted(rules.AUTOTUNE_KEYWORDS))})")
        if name != "triton.heuristics":
            return
        for table in [*deco.args, *(k.value for k in deco.keywords)]:
            for value in table.values if isinstance(table, ast.Dict) else [table]:
                self._check_grid(value)

    def _visit_jit(self, node: ast.FunctionDef) -> None:
        for deco in node.decorator_list:
            self.visit(deco)
        self.jit_locals = {a.arg for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs} | {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        try:
            for item in [*node.args.defaults, *node.args.kw_defaults, *node.body]:
                if item is not None:
                    self.visit(item)
            for arg in node.args.args + node.args.kwonlyargs:
                if arg.annotation is not None:
                    self.visit(arg.annotation)
        finally:
            self.jit_locals = None

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self.problem(node, "statements", "async functions are not allowed")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            if self.qualified(base) not in rules.CLASS_BASES:
                self.problem(base, "classes", f"`{node.name}` may derive only from nn.Module, not "
                                              f"`{ast.unparse(base)}`")
        if node.keywords:
            self.problem(node, "classes", f"`{node.name}` takes no keywords (metaclass)")
        for deco in node.decorator_list:
            if self._decorator_name(deco) not in rules.CLASS_DECORATORS:
                self.problem(deco, "classes", f"the class decorator `{ast.unparse(deco)}` is not allowed")
            elif isinstance(deco, ast.Call) and deco.args:
                self.problem(deco, "classes", "@dataclass takes keywords only")
        for item in node.body:
            if isinstance(item, ast.FunctionDef):
                self.functions.setdefault(f"{node.name}.{item.name}", item)
                self.functions.setdefault(item.name, item)
            elif not (_docstring(item) or isinstance(item, ast.Pass) or _constant_assignment(item)):
                self.problem(item, "classes", f"the body of `{node.name}` may hold only methods, a docstring "
                                              "and constants")
        self.generic_visit(node)

    # statements -----------------------------------------------------------------------------------
    def _statement(self, node: ast.AST, what: str) -> None:
        self.problem(node, "statements", f"{what} is not allowed")
        self.generic_visit(node)

    def visit_Global(self, node):
        self._statement(node, "`global`")

    def visit_Nonlocal(self, node):
        self._statement(node, "`nonlocal`")

    def visit_Yield(self, node):
        self._statement(node, "`yield` (a generator runs later, when it is iterated)")

    def visit_YieldFrom(self, node):
        self._statement(node, "`yield from`")

    def visit_Await(self, node):
        self._statement(node, "`await`")

    def visit_AsyncFor(self, node):
        self._statement(node, "`async for`")

    def visit_AsyncWith(self, node):
        self._statement(node, "`async with`")

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult) and not self.in_jit:
            self.problem(node, "statements", "the @ operator is a matrix product on the host; use tl.dot in a kernel")
        self.generic_visit(node)

    def visit_Match(self, node):
        self._statement(node, "`match` (class patterns read attributes by name)")


def _allowed_aliases(tree: ast.Module, allowed_apis: frozenset[str]) -> dict[str, str]:
    """Local names bound by allowed imports (problems are reported when the imports are visited)."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in rules.IMPORTABLE:
                    local = alias.asname or alias.name.split(".")[0]
                    aliases[local] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module in rules.IMPORTABLE:
            for alias in node.names:
                qualified = f"{node.module}.{alias.name}"
                if qualified in rules.NAMESPACES or alias.name in rules.MODULE_NAMES.get(node.module, ()) \
                        or qualified in allowed_apis:
                    aliases[alias.asname or alias.name] = qualified
    return aliases


def _is_super_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _constant(node: ast.AST) -> bool:
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_constant(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand)
    return isinstance(node, ast.Constant)


def _constant_assignment(node: ast.AST) -> bool:
    if isinstance(node, ast.Assign):
        return all(isinstance(t, ast.Name) for t in node.targets) and _constant(node.value)
    return isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and (
        node.value is None or _constant(node.value))


def _scalar_list(node: ast.Call) -> bool:
    """`torch.tensor(v)` or `torch.tensor([a, b])` of numbers, names and float/int/bool calls."""
    if not node.args:
        return False
    value = node.args[0]
    items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
    return all(isinstance(i, (ast.Constant, ast.Name, ast.UnaryOp, ast.BinOp)) or (
        isinstance(i, ast.Call) and isinstance(i.func, ast.Name) and i.func.id in ("float", "int", "bool"))
        for i in items)


def _targets(node: ast.stmt) -> list[ast.expr]:
    """What a module-level assignment binds."""
    if isinstance(node, ast.Assign):
        return node.targets
    return [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []


def _module_constants(tree: ast.Module) -> set[str]:
    return {t.id for node in tree.body for t in _targets(node) if isinstance(t, ast.Name)}


def _non_constexpr_globals(tree: ast.Module, checker: Checker) -> list[str]:
    """Triton's compiler (not its interpreter) refuses kernels that read plain module globals:
    only constexpr globals, modules, dtypes and other kernels may be read. Caught here so a
    candidate fails the same way on the CPU as on a GPU."""
    plain: set[str] = set()
    for node in tree.body:
        targets = _targets(node)
        value = getattr(node, "value", None)
        allowed = value is not None and (
            (isinstance(value, ast.Call) and checker.qualified(value.func) in rules.CONSTEXPR_CALLS)
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


def _launch_reachable(entry: str, checker: Checker) -> bool:
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
