"""Predicates on the shape of one AST node, as the static rules read it."""

from __future__ import annotations

import ast

SCALAR_CASTS = ("float", "int", "bool")


def is_super_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def is_matmul(node: ast.AST) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)


def has_one_plain_argument(call: ast.Call) -> bool:
    return len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred)


def is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def is_class_body_constant(item: ast.stmt) -> bool:
    return is_docstring(item) or isinstance(item, ast.Pass) or is_constant_assignment(item)


def is_constant(node: ast.AST) -> bool:
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(is_constant(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp):
        return is_constant(node.operand)
    return isinstance(node, ast.Constant)


def is_constant_assignment(node: ast.AST) -> bool:
    if isinstance(node, ast.Assign):
        return all(isinstance(t, ast.Name) for t in node.targets) and is_constant(node.value)
    return isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and (
        node.value is None or is_constant(node.value))


def is_scalar_list(node: ast.Call) -> bool:
    """`torch.tensor(v)` or `torch.tensor([a, b])` of numbers, names and float/int/bool calls."""
    if not node.args:
        return False
    value = node.args[0]
    items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
    return all(is_scalar_item(i) for i in items)


def is_scalar_item(node: ast.AST) -> bool:
    return isinstance(node, (ast.Constant, ast.Name, ast.UnaryOp, ast.BinOp)) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in SCALAR_CASTS)
