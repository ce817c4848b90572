"""The visitor that holds every node of a candidate's source to the allowlists of host_rules.py."""

from __future__ import annotations

import ast
import builtins

import torch

from evaluator import host_rules as rules
from evaluator.node_shapes import (has_one_plain_argument, is_class_body_constant, is_docstring, is_matmul,
                                   is_scalar_list, is_super_call)
from evaluator.source_scope import (Scope, allowed_aliases, assigned_values, import_binding, module_constants,
                                    module_name_allowed, stored_names)

TENSOR_NAMES = frozenset(dir(torch.Tensor))
PYTHON_BUILTINS = frozenset(dir(builtins))  # any other unbound name is the candidate's NameError

GRID_SYNTAX = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.keyword)
GRID_EXPRESSIONS = (ast.Return, ast.Assign, ast.Tuple, ast.List, ast.Constant, ast.Name, ast.BinOp, ast.UnaryOp,
                    ast.Subscript, ast.Slice, ast.IfExp, ast.Compare, ast.BoolOp)
GRID_METHODS = ("numel", "size", "stride", "dim", "element_size")


class Checker(ast.NodeVisitor):
    """Visits a candidate's module once and collects every broken rule as a problem."""

    def __init__(self, tree: ast.Module, allowed_apis: frozenset[str]):
        self.allowed_apis = allowed_apis
        self.scope = Scope(tree)
        self.aliases: dict[str, str] = allowed_aliases(tree, allowed_apis)
        self.jit_functions = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and self._jit(n)}
        self.functions: dict[str, ast.AST] = {}
        self.assigned: dict[str, list[ast.AST]] = assigned_values(tree)
        self.problems: list[str] = []
        self.cited: list[str] = []
        self.jit_locals: set[str] | None = None
        self.parents: dict[int, ast.AST] = _parents(tree)
        self.module_constants = module_constants(tree)

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
        return module_name_allowed(namespace, name, self.allowed_apis)

    def _forbidden_module_name(self, node: ast.AST, qualified: str) -> None:
        if qualified.startswith("torch"):
            self.problem(node, "module-names", f"`{qualified}` is not on torch's list: host code only allocates "
                                               "and reads metadata; write the computation as a Triton kernel")
        else:
            self.problem(node, "module-names", f"`{qualified}` is not on the list of names from its module")

    def _names_kernel(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and node.id in self.jit_functions

    # imports --------------------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name not in rules.IMPORTABLE:
                self.problem(node, "imports", f"import of `{alias.name}` is not allowed")
                continue
            local, module = import_binding(alias)
            self.aliases[local] = module

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
        base = self.qualified(node.value)
        if node.attr.startswith("__"):
            self._check_dunder_attribute(node)
        elif base in rules.NAMESPACES:
            self._check_module_attribute(node, base)
        elif self._names_kernel(node.value) and not self.in_jit:
            self.problem(node, "launches", f"`{node.value.id}.{node.attr}`: a kernel is only launched, as "
                                           f"`{node.value.id}[grid](...)`")
        elif not self._value_attribute_allowed(node):
            self._forbidden_attribute(node)
        self.generic_visit(node)

    def _check_dunder_attribute(self, node: ast.Attribute) -> None:
        if not (node.attr == "__init__" and is_super_call(node.value)):
            self.problem(node, "dunders", f"access to `{node.attr}` is not allowed")

    def _check_module_attribute(self, node: ast.Attribute, base: str) -> None:
        qualified = f"{base}.{node.attr}"
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.problem(node, "module-names", f"assigning into `{base}` (monkeypatching) is not allowed")
        elif qualified not in rules.NAMESPACES and not self._module_name_allowed(base, node.attr):
            self._forbidden_module_name(node, qualified)

    def _value_attribute_allowed(self, node: ast.Attribute) -> bool:
        attr = node.attr
        if self.in_jit:
            return attr in rules.JIT_ATTRIBUTES
        if attr in rules.INFO_ONLY:
            return self._is_info(node.value)
        if attr == "index":
            return self._index_allowed(node)
        return attr in rules.VALUE_ATTRIBUTES or attr in self.scope.own_attributes

    def _index_allowed(self, node: ast.Attribute) -> bool:
        """A device's index, or list.index(v); a tensor's index binds dimensions (two arguments)."""
        if isinstance(node.value, ast.Attribute) and node.value.attr == "device":
            return True
        call = self.parents.get(id(node))
        return isinstance(call, ast.Call) and call.func is node and has_one_plain_argument(call)

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
        if self.qualified(node.func) == "torch.tensor" and not is_scalar_list(node):
            self.problem(node, "module-names", "`torch.tensor` only uploads scalars here: "
                                               "`torch.tensor([float(v)], device=...)`")
        if isinstance(node.func, ast.Subscript) and self._names_kernel(node.func.value) and not self.in_jit:
            self._check_grid(node.func.slice)
        if self.in_jit and self._calls_host_function(node.func):
            self.problem(node, "jit-bodies", f"`{node.func.id}` is not a @triton.jit function; a kernel calls "
                                             "only triton.language and other @triton.jit functions")
        self.generic_visit(node)

    def _calls_host_function(self, func: ast.AST) -> bool:
        """Inside a kernel: whether `func` names something the file binds that is no kernel, local, JIT
        builtin or import."""
        if not (isinstance(func, ast.Name) and func.id in self.scope.names):
            return False
        name = func.id
        return not (name in self.jit_functions or name in self.jit_locals or name in rules.JIT_BUILTINS
                    or name in self.aliases)

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
                    found += [s for s in value.body if not is_docstring(s)]
                elif isinstance(value, (ast.Lambda, ast.Name)):
                    found += self._grid_expressions(value, seen)
            return found
        return [grid] if not isinstance(grid, ast.Name) else []

    def _grid_node_allowed(self, node: ast.AST) -> bool:
        if isinstance(node, GRID_SYNTAX):
            return True
        if isinstance(node, GRID_EXPRESSIONS):
            return not is_matmul(node)
        if isinstance(node, ast.Attribute):
            return (node.attr in rules.TENSOR_ATTRIBUTES or node.attr in self.scope.own_attributes
                    or self.qualified(node) is not None)
        if isinstance(node, ast.Call):
            return self._grid_call_allowed(node)
        return False

    def _grid_call_allowed(self, node: ast.Call) -> bool:
        if node.keywords:
            return False
        func = node.func
        name = self.qualified(func) or (func.id if isinstance(func, ast.Name) else None)
        return name in rules.GRID_CALLS or (isinstance(func, ast.Attribute) and func.attr in GRID_METHODS)

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
        in_class = isinstance(self.parents.get(id(node)), ast.ClassDef)
        if node.name.startswith("__") and not (in_class and node.name == "__init__"):
            self.problem(node, "dunders", f"defining `{node.name}` is not allowed")
        for deco in node.decorator_list:
            self._check_function_decorator(deco, in_class)
        if node.name in self.jit_functions and not self.in_jit:
            self._visit_jit(node)
        else:
            self.generic_visit(node)

    def _check_function_decorator(self, deco: ast.AST, in_class: bool) -> None:
        name = self._decorator_name(deco)
        if not _function_decorator_allowed(name, in_class):
            self.problem(deco, "decorators", f"the decorator `{ast.unparse(deco)}` is not allowed")
        elif isinstance(deco, ast.Call):
            self._check_decorator_arguments(name, deco)

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
        self.jit_locals = _kernel_locals(node)
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
        self._check_class_bases(node)
        if node.keywords:
            self.problem(node, "classes", f"`{node.name}` takes no keywords (metaclass)")
        self._check_class_decorators(node)
        self._check_class_body(node)
        self.generic_visit(node)

    def _check_class_bases(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            if self.qualified(base) not in rules.CLASS_BASES:
                self.problem(base, "classes", f"`{node.name}` may derive only from nn.Module, not "
                                              f"`{ast.unparse(base)}`")

    def _check_class_decorators(self, node: ast.ClassDef) -> None:
        for deco in node.decorator_list:
            if self._decorator_name(deco) not in rules.CLASS_DECORATORS:
                self.problem(deco, "classes", f"the class decorator `{ast.unparse(deco)}` is not allowed")
            elif isinstance(deco, ast.Call) and deco.args:
                self.problem(deco, "classes", "@dataclass takes keywords only")

    def _check_class_body(self, node: ast.ClassDef) -> None:
        """Registers the methods (as `Class.method` and `method`); anything else must be a constant."""
        for item in node.body:
            if isinstance(item, ast.FunctionDef):
                self.functions.setdefault(f"{node.name}.{item.name}", item)
                self.functions.setdefault(item.name, item)
            elif not is_class_body_constant(item):
                self.problem(item, "classes", f"the body of `{node.name}` may hold only methods, a docstring "
                                              "and constants")

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
        if is_matmul(node) and not self.in_jit:
            self.problem(node, "statements", "the @ operator is a matrix product on the host; use tl.dot in a kernel")
        self.generic_visit(node)

    def visit_Match(self, node):
        self._statement(node, "`match` (class patterns read attributes by name)")


def _parents(tree: ast.Module) -> dict[int, ast.AST]:
    """Each node's parent, by the child's id."""
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _kernel_locals(function: ast.FunctionDef) -> set[str]:
    arguments = function.args
    return {a.arg for a in arguments.args + arguments.kwonlyargs + arguments.posonlyargs} | stored_names(function)


def _function_decorator_allowed(name: str | None, in_class: bool) -> bool:
    return name in rules.JIT_DECORATORS or name in rules.HOST_DECORATORS or (name == "staticmethod" and in_class)
