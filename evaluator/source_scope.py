"""What a candidate's source binds: its names, attribute names, finfo/iinfo names and import aliases."""

from __future__ import annotations

import ast

from evaluator import host_rules as rules

FUNCTION_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
DEFINITIONS = (*FUNCTION_DEFINITIONS, ast.ClassDef)
INFO_CALLS = ("finfo", "iinfo")


class Scope:
    """What the file binds: names, its own attribute names, and the names bound to finfo/iinfo."""

    def __init__(self, tree: ast.Module):
        nodes = list(ast.walk(tree))
        self.names: set[str] = set().union(*map(_names_bound_by, nodes))
        self.own_attributes: set[str] = set().union(*map(_attributes_defined_by, nodes)) - rules.RESERVED_ATTRIBUTES
        self.info_names: set[str] = set().union(*map(_info_names_bound_by, nodes))


def _names_bound_by(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Name):
        return {node.id} if isinstance(node.ctx, (ast.Store, ast.Del)) else set()
    if isinstance(node, DEFINITIONS):
        return {node.name}
    if isinstance(node, ast.arg):
        return {node.arg}
    if isinstance(node, ast.ExceptHandler):
        return {node.name} if node.name else set()
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {alias.asname or alias.name.split(".")[0] for alias in node.names}
    return set()


def _attributes_defined_by(node: ast.AST) -> set[str]:
    if isinstance(node, ast.ClassDef):
        return {_bound_name(item) for item in node.body} - {None}
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
        return {node.attr}
    return set()


def _info_names_bound_by(node: ast.AST) -> set[str]:
    """The names `x = <anything>.finfo(...)` (or `.iinfo(...)`) binds."""
    if isinstance(node, ast.Assign) and _calls_method(node.value, INFO_CALLS):
        return {target.id for target in node.targets if isinstance(target, ast.Name)}
    return set()


def _calls_method(node: ast.AST, names: tuple[str, ...]) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names


def _bound_name(item: ast.stmt) -> str | None:
    if isinstance(item, FUNCTION_DEFINITIONS):
        return item.name
    if isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name):
        return item.targets[0].id
    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
        return item.target.id
    return None


def import_binding(alias: ast.alias) -> tuple[str, str]:
    """The local name `import alias` binds, and the module that name stands for."""
    top = alias.name.split(".")[0]
    return alias.asname or top, alias.name if alias.asname else top


def module_name_allowed(namespace: str, name: str, allowed_apis: frozenset[str]) -> bool:
    return name in rules.MODULE_NAMES.get(namespace, ()) or f"{namespace}.{name}" in allowed_apis


def allowed_aliases(tree: ast.Module, allowed_apis: frozenset[str]) -> dict[str, str]:
    """Local names bound by allowed imports (problems are reported when the imports are visited)."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update(_import_aliases(node))
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module in rules.IMPORTABLE:
            aliases.update(_import_from_aliases(node, allowed_apis))
    return aliases


def _import_aliases(node: ast.Import) -> dict[str, str]:
    return dict(import_binding(alias) for alias in node.names if alias.name in rules.IMPORTABLE)


def _import_from_aliases(node: ast.ImportFrom, allowed_apis: frozenset[str]) -> dict[str, str]:
    aliases = {}
    for alias in node.names:
        qualified = f"{node.module}.{alias.name}"
        if qualified in rules.NAMESPACES or module_name_allowed(node.module, alias.name, allowed_apis):
            aliases[alias.asname or alias.name] = qualified
    return aliases


def assigned_values(tree: ast.Module) -> dict[str, list[ast.AST]]:
    """Every value each plain name is assigned, anywhere, and every function of that name."""
    assigned: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
        if isinstance(node, ast.FunctionDef):
            assigned.setdefault(node.name, []).append(node)
    return assigned


def assignment_targets(node: ast.stmt) -> list[ast.expr]:
    """What a module-level assignment binds."""
    if isinstance(node, ast.Assign):
        return node.targets
    return [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []


def module_constants(tree: ast.Module) -> set[str]:
    return {t.id for node in tree.body for t in assignment_targets(node) if isinstance(t, ast.Name)}


def stored_names(function: ast.FunctionDef) -> set[str]:
    """Every name a function (its decorators, defaults and nested definitions included) assigns."""
    return {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
