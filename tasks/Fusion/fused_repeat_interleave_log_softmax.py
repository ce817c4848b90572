"""Repeat each element along a dimension (repeat_interleave), then log-softmax along that dimension."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, repeats, dim=None, *, output_size=None, dtype=None, out=None):
    repeated = torch.repeat_interleave(input, repeats, dim=dim, output_size=output_size)
    # with dim=None the repeated tensor is flat, and log_softmax runs along its only dim
    result = torch.nn.functional.log_softmax(repeated, dim=0 if dim is None else dim, dtype=dtype)
    if out is not None:
        out.copy_(result)
        return out
    return result


# Per (size, seed): (shape, repeats: an int or "tensor" for per-index counts, dim, pass output_size?,
# float32 result for half inputs?). Counts may be 0 (that index vanishes from the slice). The standard
# size has one configuration.
CASES = {
    "small": [((16, 20, 24), 3, 1, False, False), ((37, 100), "tensor", -1, True, True)],
    "edge": [((7, 143), 2, None, False, False), ((13, 5, 3), "tensor", 0, False, True)],
    "standard": [((8192, 2048), 4, -1, False, False)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, repeats, dim, give_size, wide = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode, scale=2.0)
    if repeats == "tensor":
        repeats = torch.randint(0, 4, (shape[dim],), generator=gen)
        repeats[0] = 2  # at least one index survives
    kwargs = {"dim": dim}
    if give_size:
        kwargs["output_size"] = int(repeats.sum())
    if wide and dtype != torch.float32:
        kwargs["dtype"] = torch.float32
    return Inputs((x, repeats), kwargs)


def cost(inputs):
    x, repeats = inputs.args
    dim = inputs.kwargs.get("dim")
    length = x.numel() if dim is None else x.shape[dim]
    total = int(repeats.sum()) if isinstance(repeats, torch.Tensor) else repeats * length
    out_numel = x.numel() // max(length, 1) * total
    out_dtype = inputs.kwargs.get("dtype") or x.dtype
    out_size = torch.empty((), dtype=out_dtype).element_size()
    return Cost(flops=4 * x.numel() + out_numel,
                bytes=element_bytes(x, repeats) + out_numel * out_size)


TASK = Task(
    id="Fusion/fused_repeat_interleave_log_softmax",
    difficulty=3,
    entry="fused_repeat_interleave_log_softmax",
    signature=("fused_repeat_interleave_log_softmax(input, repeats, dim=None, *, output_size=None, dtype=None, "
               "out=None)"),
    description=(
        "Along dimension `dim`, index l of `input` is copied repeats[l] times in a row (`repeats` is a Python int "
        "used for every index, or a 1-D int64 tensor of length input.size(dim) on the input's device, entries "
        ">= 0 with a positive sum); with dim=None the input is flattened first. Then log_softmax is taken along "
        "that dimension of the repeated tensor (the flat one for dim=None), and the result is returned: "
        "value minus log(sum of exp over the repeated slice). `output_size`, when given, is the repeated length "
        "(the sum of the counts). The result has the input's dtype, or `dtype` (float32 for half inputs) when "
        "given; compute in float32, stable against large outliers. `out` is always None."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
