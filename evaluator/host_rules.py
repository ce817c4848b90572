"""The static rules as one table, and the allowlists they read.

Every rule has an id, what it allows and why. The static checker cites the id and what is allowed
in every rejection (the rejection becomes the model's next prompt); README.md shows the same table
(`python -m evaluator.host_rules` prints it). Everything not listed is refused: the lists name what
host code may use, never what it may not.
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Rule:
    id: str
    allows: str
    why: str


RULES = (
    Rule("source", "UTF-8 text (no other coding cookie); an `if __name__ == \"__main__\":` block at the end is "
         "removed before checking and never runs",
         "the checked text is compiled and run as it is; a self-test block is the author's, not the kernel's"),
    Rule("imports", "`import` / `from ... import` of torch, torch.nn, torch.nn.functional, torch.cuda, triton, "
         "triton.language (and triton.language.extra.libdevice), math, typing, dataclasses, __future__",
         "every other module reaches the file system, processes or the evaluator, or re-exports modules that do"),
    Rule("module-names", "from torch: dtypes, allocation (empty, zeros, ones, full, arange, *_like, "
         "`torch.tensor` of a scalar list), device and dtype queries, nn.Module, nn.Parameter and the task's "
         "allowances; from triton: jit, autotune, heuristics, Config, cdiv, next_power_of_2, constexpr, the "
         "device-properties query; every triton.language function; every math function; typing's types; "
         "dataclasses.dataclass",
         "PyTorch compute on the host would do the work the kernel is judged on; submodules re-export the rest"),
    Rule("builtins", "names the file binds itself, and the builtins len, range, int, float, bool, str, tuple, "
         "list, dict, set, min, max, abs, sum, any, all, zip, enumerate, sorted, reversed, round, divmod, pow, "
         "isinstance, print, super, slice, iter, next, map, filter, callable and the standard exception types",
         "eval, exec, getattr, open, type, globals and their kind reach code and objects the checks never see"),
    Rule("attributes", "on values in host code: tensor metadata, layout and allocation (shape, dtype, device, "
         "size, stride, numel, is_contiguous, contiguous, view, reshape, permute, transpose, t, T, mT, mH, to, "
         "clone, copy_, fill_, zero_, new_*, item, ...), dtype, device, finfo/iinfo and device-property "
         "fields, methods of str, list and dict that no tensor has, and attribute names the file defines itself",
         "a tensor method is PyTorch compute; any other attribute is a way around the module rules"),
    Rule("dunders", "no double-underscore names, except defining `__init__` and calling `super().__init__()`",
         "dunders are Python's reflection: classes, globals, builtins, frames"),
    Rule("classes", "`class ModelNew(nn.Module)` (KernelBench's format) and other classes with no base or "
         "nn.Module as the base, no keywords, no decorator but @dataclass, a body of methods, a docstring "
         "and constant assignments",
         "a subclass of a tensor, a tuple or anything the evaluator touches runs the candidate's code later, "
         "outside the guards"),
    Rule("decorators", "@triton.jit, @triton.autotune(configs=..., key=..., reset_to_zero=..., restore_value=..., "
         "warmup=..., rep=...), @triton.heuristics({...}) whose values follow the grids rule, @staticmethod, "
         "@torch.no_grad() and @torch.inference_mode()",
         "any other decorator runs code at import and can replace a function with anything; autotuning "
         "hooks and heuristics run inside the launch"),
    Rule("statements", "plain functions, assignments, loops, if, with, try, assert, return, raise; no async, "
         "yield, global, nonlocal or match, and no @ operator on the host",
         "generators and coroutines run later, when the evaluator iterates; global state outlives a call; "
         "match reads attributes by name; @ is a matrix product"),
    Rule("jit-bodies", "inside @triton.jit: triton.language, other @triton.jit functions, parameters, local "
         "names, module constants, math, and range, min, max, len, int, float, abs, print",
         "a kernel body is compiled by Triton; anything else is host code in disguise"),
    Rule("launches", "a @triton.jit function is named in host code only as `kernel[grid](...)`",
         "calling it directly or reading its attributes (`.fn`) runs its body as plain Python with torch tensors"),
    Rule("grids", "a launch grid is a tuple, a lambda or a function of integer arithmetic on names, constants, "
         "triton.cdiv, len, min, max, int, tensor metadata and the meta dict",
         "the grid runs inside the launch, where the runtime guard must let the launch's own work through"),
    Rule("entry", "the task's entry function (or `kernel_function`, or one named after the task, or "
         "`ModelNew.forward`) at module level, at least one @triton.jit kernel, and a launch reachable from the entry",
         "the computation must happen in a Triton kernel that the entry launches"),
)
RULE = {rule.id: rule for rule in RULES}


def markdown_table() -> str:
    lines = ["| rule | allows | why |", "| --- | --- | --- |"]
    lines += [f"| `{r.id}` | {r.allows} | {r.why} |" for r in RULES]
    return "\n".join(lines) + "\n"


# imports ----------------------------------------------------------------------------------------
IMPORTABLE = frozenset({
    "torch", "torch.nn", "torch.nn.functional", "torch.cuda", "triton", "triton.language",
    "triton.language.extra", "triton.language.extra.libdevice", "triton.language.extra.cuda",
    "triton.language.extra.cuda.libdevice", "math", "typing", "dataclasses", "__future__",
})
# Namespaces reachable through attributes; each lists its allowed names in MODULE_NAMES.
NAMESPACES = IMPORTABLE | {
    "triton.language.math", "triton.runtime", "triton.runtime.driver", "triton.runtime.driver.active",
    "triton.runtime.driver.active.utils",
}

# module-names -----------------------------------------------------------------------------------
DTYPE_NAMES = frozenset({
    "float16", "half", "bfloat16", "float32", "float", "float64", "double", "int8", "uint8", "int16", "short",
    "int32", "int", "int64", "long", "bool", "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2",
    "float8_e4m3fnuz", "float8_e5m2fnuz", "complex32", "chalf", "complex64", "cfloat", "complex128", "cdouble",
})
TORCH_NAMES = DTYPE_NAMES | {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
    "arange", "tensor", "Tensor", "Size", "dtype", "device", "finfo", "iinfo", "is_tensor", "is_floating_point",
    "is_complex", "promote_types", "result_type", "broadcast_shapes", "get_default_dtype", "no_grad",
    "inference_mode", "strided", "layout", "memory_format", "contiguous_format", "channels_last",
    "preserve_format", "Generator", "view_as_complex", "view_as_real", "nn", "cuda",
}
CUDA_NAMES = frozenset({
    "current_device", "get_device_properties", "device_count", "is_available", "get_device_name",
    "get_device_capability", "device", "synchronize",
})
TRITON_NAMES = frozenset({
    "jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2", "constexpr", "language", "runtime",
})
TYPING_NAMES = frozenset({
    "Any", "Optional", "Union", "Tuple", "List", "Dict", "Sequence", "Callable", "Iterable", "Mapping",
    "Literal", "Final", "cast", "TypeVar",
})


def _public_functions(module: types.ModuleType) -> frozenset[str]:
    """Public members of a module that are not modules themselves (no re-exported submodules)."""
    return frozenset(n for n in dir(module) if not n.startswith("_")
                     and not isinstance(getattr(module, n, None), types.ModuleType))


def _triton_language_names() -> dict[str, frozenset[str]]:
    import triton.language as tl
    names = {"triton.language": _public_functions(tl) | {"math", "extra"},
             "triton.language.math": _public_functions(tl.math)}
    libdevice = frozenset()
    try:
        from triton.language.extra import libdevice as lib
        libdevice = _public_functions(lib)
    except ImportError:
        pass
    names["triton.language.extra"] = frozenset({"libdevice", "cuda"})
    names["triton.language.extra.libdevice"] = libdevice
    names["triton.language.extra.cuda"] = frozenset({"libdevice"})
    names["triton.language.extra.cuda.libdevice"] = libdevice
    return names


MODULE_NAMES: dict[str, frozenset[str]] = {
    "torch": frozenset(TORCH_NAMES),
    "torch.nn": frozenset({"Module", "Parameter", "functional"}),
    "torch.nn.functional": frozenset(),
    "torch.cuda": CUDA_NAMES,
    "triton": TRITON_NAMES,
    "triton.runtime": frozenset({"driver"}),
    "triton.runtime.driver": frozenset({"active"}),
    "triton.runtime.driver.active": frozenset({"utils", "get_current_device"}),
    "triton.runtime.driver.active.utils": frozenset({"get_device_properties"}),
    "math": _public_functions(math),
    "typing": TYPING_NAMES,
    "__future__": frozenset({"annotations"}),
    "dataclasses": frozenset({"dataclass"}),
    **_triton_language_names(),
}

# builtins ---------------------------------------------------------------------------------------
HOST_BUILTINS = frozenset({
    "len", "range", "int", "float", "bool", "str", "tuple", "list", "dict", "set", "frozenset", "min", "max",
    "abs", "sum", "any", "all", "zip", "enumerate", "sorted", "reversed", "round", "divmod", "pow",
    "isinstance", "print", "super", "slice", "iter", "next", "map", "filter", "callable", "staticmethod",
    "Exception", "ValueError", "TypeError", "RuntimeError", "NotImplementedError", "AssertionError",
    "IndexError", "KeyError", "ZeroDivisionError", "ArithmeticError", "OverflowError", "StopIteration",
    "True", "False", "None", "NotImplemented", "Ellipsis",
})
JIT_BUILTINS = frozenset({"range", "min", "max", "len", "int", "float", "abs", "print", "True", "False", "None"})

# attributes -------------------------------------------------------------------------------------
TENSOR_ATTRIBUTES = frozenset({
    "size", "stride", "dim", "ndimension", "numel", "nelement", "element_size", "itemsize", "nbytes",
    "data_ptr", "is_contiguous", "contiguous", "view", "view_as", "reshape", "reshape_as", "flatten",
    "unflatten", "squeeze", "unsqueeze", "permute", "transpose", "t", "expand", "expand_as", "narrow",
    "select", "unbind", "split", "chunk", "movedim", "as_strided", "to", "type", "float", "half", "bfloat16",
    "double", "int", "long", "bool", "short", "char", "byte", "cuda", "cpu", "clone", "copy_", "fill_",
    "zero_", "new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "item",
    "is_floating_point", "is_complex", "is_signed", "get_device", "detach", "requires_grad_",
    "storage_offset", "dtype", "shape", "device", "ndim", "is_cuda", "is_cpu", "T", "mT", "mH", "H", "data",
    "requires_grad", "layout", "real", "imag", "view_as_real",
})
DTYPE_ATTRIBUTES = frozenset({"is_floating_point", "is_complex", "is_signed", "itemsize", "to_real", "to_complex"})
DEVICE_ATTRIBUTES = frozenset({"type", "index"})
INFO_ATTRIBUTES = frozenset({"eps", "tiny", "bits", "resolution", "smallest_normal", "max", "min"})
DEVICE_PROPERTY_ATTRIBUTES = frozenset({
    "multi_processor_count", "total_memory", "name", "major", "minor", "warp_size", "L2_cache_size",
    "max_threads_per_multi_processor", "regs_per_multiprocessor", "shared_memory_per_block",
    "shared_memory_per_block_optin", "shared_memory_per_multiprocessor", "uuid",
})
CONFIG_ATTRIBUTES = frozenset({"kwargs", "num_warps", "num_stages", "best_config", "value"})
MODULE_ATTRIBUTES = frozenset({
    "register_buffer", "register_parameter", "training", "weight", "bias", "running_mean", "running_var",
    "num_batches_tracked", "eps", "momentum", "affine", "track_running_stats", "in_features", "out_features",
    "in_channels", "out_channels", "kernel_size", "padding", "dilation", "groups", "padding_mode",
    "output_padding", "normalized_shape", "elementwise_affine", "num_features", "num_groups", "num_channels",
    "negative_slope", "p", "embedding_dim", "num_embeddings", "padding_idx", "inplace", "approximate", "beta",
    "threshold", "min_val", "max_val", "lambd", "alpha", "ceil_mode", "count_include_pad", "return_indices",
    "output_size", "scale_factor", "mode", "align_corners", "upscale_factor",
})


def _plain_methods() -> frozenset[str]:
    """Methods of str, list, dict, set, tuple, int and float that no tensor has (`add`, `sort`,
    `index`, `values` are torch compute on a tensor), except `format`, which reads attributes by name."""
    names: set[str] = set()
    for kind in (str, list, dict, set, tuple, int, float):
        names |= {n for n in dir(kind) if not n.startswith("_")}
    return frozenset(names - set(dir(torch.Tensor)) - {"format", "format_map"})


PLAIN_METHODS = _plain_methods()
VALUE_ATTRIBUTES = (TENSOR_ATTRIBUTES | DTYPE_ATTRIBUTES | DEVICE_ATTRIBUTES | INFO_ATTRIBUTES
                    | DEVICE_PROPERTY_ATTRIBUTES | CONFIG_ATTRIBUTES | MODULE_ATTRIBUTES | PLAIN_METHODS)
# finfo/iinfo's max and min are plain numbers; on a tensor they are compute.
INFO_ONLY = frozenset({"max", "min"})


def _reserved_attribute_names() -> frozenset[str]:
    """Names the file may not claim as its own attributes: a tensor's (a `self.sum = ...` must not
    license `x.sum()`). A kernel's attributes need no reserving: host code never reads any."""
    return frozenset(set(dir(torch.Tensor)) - VALUE_ATTRIBUTES)


RESERVED_ATTRIBUTES = _reserved_attribute_names()


def _jit_value_attributes() -> frozenset[str]:
    import triton.language as tl
    names: set[str] = set()
    for kind in (tl.tensor, tl.dtype, tl.block_type, tl.pointer_type, tl.constexpr):
        names |= {n for n in dir(kind) if not n.startswith("_")}
    return frozenset(names | {"dtype", "shape", "type", "element_ty", "primitive_bitwidth", "int_bitwidth",
                              "fp_mantissa_width", "numel", "value", "name"})


JIT_ATTRIBUTES = _jit_value_attributes()

# decorators -------------------------------------------------------------------------------------
JIT_DECORATORS = frozenset({"triton.jit", "triton.autotune", "triton.heuristics"})
HOST_DECORATORS = frozenset({"torch.no_grad", "torch.inference_mode"})
CLASS_BASES = frozenset({"torch.nn.Module"})
CLASS_DECORATORS = frozenset({"dataclasses.dataclass"})
CONSTEXPR_CALLS = frozenset({"triton.language.constexpr", "triton.constexpr"})
AUTOTUNE_KEYWORDS = frozenset({"configs", "key", "reset_to_zero", "restore_value", "warmup", "rep",
                               "use_cuda_graph", "cache_results"})
GRID_CALLS = frozenset({"triton.cdiv", "len", "min", "max", "int", "abs"})


if __name__ == "__main__":
    print(markdown_table(), end="")
