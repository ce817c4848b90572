"""GELU on int8 fixed-point tensors: dequantize with a fixed scale, apply GELU, requantize."""

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick

# An int8 value q stands for q * SCALE (symmetric, zero point 0), in and out: 5 fractional bits, so
# the inputs cover [-4, 3.97], where GELU bends. With this scale no value of either form lands
# within 3e-3 of a quantization step of a rounding tie (checked over all 256 codes), so float32
# and float64 evaluations round the same way and the result is exact.
SCALE = 1.0 / 32.0


def reference(input, approximate="none"):
    x = input.to(torch.float32) * SCALE
    y = torch.nn.functional.gelu(x, approximate=approximate)
    return torch.round(y / SCALE).clamp(-128, 127).to(torch.int8)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shape = pick(size, small=((33, 257), (4, 9, 130))[seed % 2], standard=(8192, 8192),
                 edge=((3, 1001), (5, 1, 17))[seed % 2])
    if mode == "standard":
        q = torch.randint(-128, 128, shape, generator=gen, dtype=torch.int16)   # every code, uniformly
    else:
        # mostly codes near zero, with 0.1% of the elements at the extremes of the int8 range
        q = (torch.randn(shape, generator=gen) * 12).round().clamp(-128, 127).to(torch.int16)
        flat = q.reshape(-1)
        count = max(1, round(flat.numel() * 0.001))
        picked = torch.randint(0, flat.numel(), (count,), generator=gen)
        flat[picked] = torch.where(torch.rand(count, generator=gen) < 0.5, -128, 127).to(torch.int16)
    approximate = "tanh" if seed % 2 and size != "standard" else "none"
    return Inputs((q.to(dtype),), {"approximate": approximate})


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=10 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Activation/gelu_int8",
    difficulty=1,
    entry="gelu_int8",
    signature="gelu_int8(input: Tensor, approximate: str='none')",
    description=(
        "GELU on a torch.int8 tensor of any shape, returning a new torch.int8 tensor of the same shape. Each "
        "int8 code q is a fixed-point number with scale 1/32 (zero point 0), i.e. the real value x = q / 32. "
        "Compute y = GELU(x) in float32 (approximate='none': 0.5 * x * (1 + erf(x / sqrt(2))); approximate='tanh': "
        "0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))), then requantize with the same scale: "
        "round(y * 32) to the nearest integer (ties to even), clamp to [-128, 127] and store as int8. The "
        "output must match exactly; no code of either form is near a rounding tie."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.int8,),
    contract=Exact(),
)
