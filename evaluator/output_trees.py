"""Output trees (tensors and scalars in tuples and lists): flattened, described, compared in structure and bit for bit."""

from __future__ import annotations

from typing import Any

import torch


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def flatten(tree: Any) -> list[Any]:
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in flatten(item)]
    return [tree]


def describe(tree: Any) -> str:
    if isinstance(tree, torch.Tensor):
        return f"tensor{tuple(tree.shape)} {dtype_name(tree.dtype)}"
    if isinstance(tree, (tuple, list)):
        return f"{type(tree).__name__} of {len(tree)}: (" + ", ".join(describe(t) for t in tree) + ")"
    return type(tree).__name__


_SAME_WIDTH = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal shape, dtype and bits (NaNs included, +0.0 and -0.0 told apart)."""
    if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
        return False
    if a.is_complex():
        return same_bits(torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj()))
    view = torch.uint8 if a.dtype == torch.bool else _SAME_WIDTH[a.element_size()]
    return torch.equal(a.view(view), b.view(view))


def identical(a: Any, b: Any) -> bool:
    """The same tree of tensors and scalars, bit for bit."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return type(a) is type(b) and same_bits(a, b)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def structure_problem(expected: Any, got: Any) -> str | None:
    """Why `got` cannot be compared with `expected` (shape, dtype, arity), or None."""
    if isinstance(expected, torch.Tensor):
        return _tensor_problem(expected, got)
    if isinstance(expected, (tuple, list)):
        return _sequence_problem(expected, got)
    if isinstance(got, (torch.Tensor, tuple, list)):
        return f"returned {describe(got)} where {type(expected).__name__} was expected"
    return None


def _tensor_problem(expected: torch.Tensor, got: Any) -> str | None:
    if not isinstance(got, torch.Tensor):
        return f"returned {describe(got)} where a tensor was expected ({describe(expected)})"
    if tuple(got.shape) != tuple(expected.shape):
        return f"output shape {tuple(got.shape)} where {tuple(expected.shape)} was expected"
    if got.dtype != expected.dtype:
        return (f"output dtype {dtype_name(got.dtype)} where {dtype_name(expected.dtype)} was "
                "expected (return the reference's dtype; compute in higher precision inside the kernel if needed)")
    return None


def _sequence_problem(expected: tuple | list, got: Any) -> str | None:
    if not isinstance(got, (tuple, list)) or len(got) != len(expected):
        return f"returned {describe(got)} where {describe(expected)} was expected"
    return next((problem for e, g in zip(expected, got) if (problem := structure_problem(e, g))), None)
