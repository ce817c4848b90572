"""Select slices along a dimension by index, then compare them element-wise for equality."""

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, dim, index, other, *, out=None):
    selected = torch.index_select(input, dim, index)
    result = torch.eq(selected, other)
    if out is not None:
        out.copy_(result)
        return out
    return result


# (input shape, dim, number of indices, index dtype, other: "full", "row" (broadcast over the
# leading dims) or "scalar") per (size, seed). The standard size has one configuration.
CASES = {
    "small": [((64, 100), 0, 50, torch.int64, "full"), ((8, 20, 30), -1, 45, torch.int32, "scalar")],
    "edge": [((1001,), 0, 7, torch.int64, "full"), ((5, 1, 17), 1, 3, torch.int32, "row")],
    "standard": [((16384, 4096), 0, 8192, torch.int64, "full")],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dim, count, index_dtype, kind = cases[seed % len(cases)]
    # Few distinct values (multiples of 1/2, integers for integer dtypes), so equal pairs are common.
    step = 0.5 if dtype.is_floating_point else 1.0
    x = (randn(shape, gen, torch.float32, mode, scale=3.0) / (2 * step)).round() * step
    x = x.to(dtype)
    index = torch.randint(0, shape[dim], (count,), generator=gen, dtype=index_dtype)
    selected = x.index_select(dim, index)
    if kind == "scalar":
        other = step if dtype.is_floating_point else int(step)  # present in the input, exact in every dtype
    else:
        base = selected if kind == "full" else selected.reshape(-1, selected.shape[-1])[0]
        changed = torch.rand(base.shape, generator=gen) < 0.5
        other = torch.where(changed, base + step, base).contiguous()  # about half the pairs differ
    return Inputs((x, dim, index, other))


def cost(inputs):
    x, dim, index, other = inputs.args
    slice_numel = x.numel() // x.shape[dim]
    selected = slice_numel * index.numel()
    read = slice_numel * torch.unique(index).numel() * x.element_size()  # repeated slices read once
    return Cost(flops=selected, bytes=element_bytes(index, other) + read + selected)


TASK = Task(
    id="Fusion/fused_index_select_eq",
    difficulty=4,
    entry="fused_index_select_eq",
    signature="fused_index_select_eq(input, dim, index, other, *, out=None)",
    description=(
        "Pick the slices of `input` along dimension `dim` (possibly negative) listed in the 1-D `index` "
        "(int32 or int64, indices may repeat, in any order): S has `input`'s shape except that dim has "
        "len(index) entries, and the slice at position j along dim is input's slice index[j]. Then compare S "
        "element-wise with `other`, a tensor of `input`'s dtype that broadcasts to S's shape or a Python "
        "number, and return the torch.bool tensor of S's shape that is True where the values are equal. "
        "`out` stays None; the result must match exactly."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.int32),
    contract=Exact(),
)
