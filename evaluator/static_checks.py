"""Static checks on a candidate's source, before any of it runs.

Host code is an allowlist (host_rules.py holds the table and the lists): imports, the names used
from each module, bare names, attribute names, decorators, classes and statements must each be on
a list; @triton.jit bodies use triton.language and other kernels; kernels are only launched; launch
grids are integer arithmetic. Every problem names its rule and what the rule allows. A trailing
`if __name__ == "__main__":` block is blanked out first: the text checked is the text that runs.
The rule visitor is rule_checker.py, what the file binds source_scope.py, the shapes of nodes it
looks for node_shapes.py. Here: the report, the entry point and its launches, and the globals
Triton's compiler would refuse.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from evaluator import host_rules as rules
from evaluator.candidate_source import foreign_encoding
from evaluator.result import Verdict
from evaluator.rule_checker import Checker
from evaluator.source_scope import DEFINITIONS, FUNCTION_DEFINITIONS, assignment_targets, stored_names


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
    if not any(isinstance(n, DEFINITIONS) for n in ast.walk(tree)):
        return _fail(report, Verdict.NO_CODE, "the code defines no function")
    checker = Checker(tree, allowed_apis)
    encoding = foreign_encoding(source)
    if encoding:
        checker.problem(None, "source", encoding)
    checker.visit(tree)
    report.kernels = sorted(checker.jit_functions)
    report.entry = _find_entry(tree, entry_names)
    _check_entry(checker, report.entry, entry_names[0])
    report.problems, report.cited = checker.problems, checker.cited
    _settle_verdict(report, _non_constexpr_globals(tree, checker))
    return report


def _fail(report: StaticReport, verdict: Verdict, text: str) -> StaticReport:
    report.verdict = verdict
    report.problems.append(text)
    return report


def _settle_verdict(report: StaticReport, compile_errors: list[str]) -> None:
    """A broken rule rejects; otherwise what Triton's compiler would refuse fails to compile."""
    if report.problems:
        report.verdict = Verdict.STATIC_REJECT
    elif compile_errors:
        report.verdict = Verdict.COMPILE_FAIL
        report.problems.extend(compile_errors)


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


# the entry and its launches ---------------------------------------------------------------------
def _find_entry(tree: ast.Module, entry_names: list[str]) -> str | None:
    functions = {n.name for n in tree.body if isinstance(n, FUNCTION_DEFINITIONS)}
    for name in entry_names:
        if name in functions:
            return name
    if "ModelNew.forward" in entry_names and any(_defines_method(n, "ModelNew", "forward") for n in tree.body):
        return "ModelNew.forward"
    return None


def _defines_method(node: ast.stmt, class_name: str, method: str) -> bool:
    return isinstance(node, ast.ClassDef) and node.name == class_name and any(
        isinstance(item, ast.FunctionDef) and item.name == method for item in node.body)


def _check_entry(checker: Checker, entry: str | None, first_entry_name: str) -> None:
    if entry is None:
        checker.problem(None, "entry", f"define the entry function `{first_entry_name}` at module level "
                                       "(with the task's signature)")
    if not checker.jit_functions:
        checker.problem(None, "entry", "no @triton.jit kernel is defined; the computation must happen in a "
                                       "Triton kernel")
    elif entry is not None and not _launch_reachable(entry, checker):
        checker.problem(None, "entry", f"`{entry}` never launches a Triton kernel (kernel[grid](...)) "
                                       "on any path")


def _launch_reachable(entry: str, checker: Checker) -> bool:
    """True if some function reachable from the entry calls something subscripted: kernel[grid](...)."""
    seen: set[str] = set()
    todo = [entry]
    while todo:
        name = todo.pop()
        if name in seen or name not in checker.functions or name in checker.jit_functions:
            continue
        seen.add(name)
        if _launches(checker.functions[name]):
            return True
        todo += _functions_named(checker.functions[name], checker.functions)
    return False


def _launches(function: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript) for n in ast.walk(function))


def _functions_named(function: ast.AST, functions: dict[str, ast.AST]) -> list[str]:
    """The file's functions that `function` names, bare or as an attribute, in the order they appear."""
    return [name for name in map(_name_or_attribute, ast.walk(function)) if name in functions]


def _name_or_attribute(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


# globals the compiler refuses -------------------------------------------------------------------
def _non_constexpr_globals(tree: ast.Module, checker: Checker) -> list[str]:
    """Triton's compiler (not its interpreter) refuses kernels that read plain module globals:
    only constexpr globals, modules, dtypes and other kernels may be read. Caught here so a
    candidate fails the same way on the CPU as on a GPU."""
    plain = _plain_globals(tree, checker)
    kernels = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in checker.jit_functions]
    errors = [f"line {read.lineno}: kernel `{kernel.name}` reads the global `{read.id}`, which is not a "
              f"constexpr; Triton kernels may only read globals declared as "
              f"`{read.id} = tl.constexpr(...)` (or pass the value as an argument)"
              for kernel in kernels for read in _global_reads(kernel, plain)]
    return list(dict.fromkeys(errors))


def _plain_globals(tree: ast.Module, checker: Checker) -> set[str]:
    """Module-level names whose last module-level assignment is not a constexpr."""
    plain: set[str] = set()
    for node in tree.body:
        constexpr = _constexpr_value(getattr(node, "value", None), checker)
        for target in assignment_targets(node):
            if isinstance(target, ast.Name):
                (plain.discard if constexpr else plain.add)(target.id)
    return plain


def _constexpr_value(value: ast.AST | None, checker: Checker) -> bool:
    """A `tl.constexpr(...)` call, or a triton.language name (a dtype, a function)."""
    if value is None:
        return False
    if isinstance(value, ast.Call) and checker.qualified(value.func) in rules.CONSTEXPR_CALLS:
        return True
    return (checker.qualified(value) or "").startswith("triton.language.")


def _global_reads(kernel: ast.FunctionDef, plain: set[str]) -> Iterator[ast.Name]:
    """The names a kernel's body reads from `plain` and does not bind itself."""
    local = {a.arg for a in kernel.args.args + kernel.args.kwonlyargs} | stored_names(kernel)
    for statement in kernel.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in plain \
                    and node.id not in local:
                yield node
