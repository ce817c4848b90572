"""Elementwise power with a scalar or broadcast tensor exponent."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, randn


def reference(input_tensor, exponent, out=None):
    return torch.pow(input_tensor, exponent, out=out)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    if size == "standard":
        # positive bases, a full tensor of real exponents
        base = randn((8192, 8192), gen, torch.float32, mode, scale=2.0).abs()
        exponent = randn((8192, 8192), gen, dtype, mode, scale=2.0)
    elif size == "small" and seed % 2 == 0:
        # bases of both signs (negative ones give NaN), a few zeros, a Python float exponent
        base = randn((37, 300), gen, torch.float32, mode, scale=2.0)
        base.view(-1)[::997] = 0.0
        exponent = 1.5
    elif size == "small":
        # positive bases, real exponents broadcast along the last dimension
        base = randn((16, 50, 24), gen, torch.float32, mode).abs() + 0.05
        exponent = randn((50, 1), gen, dtype, mode, scale=1.5)
    elif seed % 2 == 0:
        # bases of both signs and signed zeros against integral exponents -2..4 (real results, with
        # signs, +-inf for zeros under negative exponents): (3,1,101) ** (5,1) -> (3,5,101)
        base = randn((3, 1, 101), gen, torch.float32, mode, scale=2.0)
        base.view(-1)[::41] = 0.0
        base.view(-1)[7::41] = -0.0
        exponent = torch.tensor([[-2.0], [-1.0], [0.0], [3.0], [4.0]]).to(dtype)
    else:
        # a Python int exponent: odd powers keep the sign
        base = randn((1001,), gen, torch.float32, mode, scale=2.0)
        exponent = 3
    return Inputs((base.to(dtype), exponent))


def cost(inputs):
    base, exponent = inputs.args
    out_numel = torch.broadcast_shapes(base.shape, getattr(exponent, "shape", ())).numel()
    return Cost(flops=4 * out_numel, bytes=element_bytes(base, exponent) + out_numel * base.element_size())


TASK = Task(
    id="Math/pow",
    difficulty=3,
    entry="pow",
    signature="pow(input_tensor, exponent, out=None)",
    kernelbenchx_signature="pow(input, exponent, *, out=None)",
    description=(
        "Return input_tensor ** exponent elementwise as a new tensor of the dtype of `input_tensor`. "
        "`exponent` is a Python number (int or float) or a tensor of that dtype; tensors broadcast like NumPy "
        "(up to 4 dimensions; the result may be larger than either operand). Follow torch.pow on real numbers: "
        "a negative base with a non-integral exponent gives NaN and with an integral one a real result of the "
        "right sign; x ** 0 = 1 and 1 ** y = 1 even for NaN; 0 ** y is 0 for y > 0 and +inf for y < 0, but "
        "-0.0 ** y is -0.0 or -inf when y is an odd integer. Compute in float32 for half-precision inputs; "
        "`out` is never passed (it stays None)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
