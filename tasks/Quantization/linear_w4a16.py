"""W4A16 linear layer: weight-only quantization to packed int4 with per-output-channel scales,
16-bit activations, float32 accumulation."""

import math

import torch

from evaluator.contracts import Approximate
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform

QMAX = 7.0
# the gate's allowance for rounding the output to the evaluated dtype (relative, in norm)
OUTPUT_ROUNDING = {torch.float32: 1e-5, torch.float16: 1e-3, torch.bfloat16: 8e-3}
# a candidate must be this close to the emulated W4A16 result, as a fraction of how far the
# quantization moves the float product
GATE_FRACTION = 0.25


def reference(input, weight, bias=None):
    return torch.nn.functional.linear(input, weight, bias)


def _untie(w):
    """Move weights that sit exactly on a rounding tie of w * 7 / max|row| (e.g. half the row's maximum,
    common in 16-bit types) one step toward zero, so every float32 evaluation order of the quantization
    rounds each weight the same way and the gate can emulate it exactly."""
    w64 = w.to(torch.float64)
    amax = w64.abs().amax(dim=1, keepdim=True)
    t = w64.abs() * QMAX / torch.where(amax > 0, amax, torch.ones_like(amax))
    tie = ((t - t.floor()) - 0.5).abs() < 1e-5
    return torch.where(tie, torch.nextafter(w, torch.zeros_like(w)), w)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    # (leading dims of input, in_features K, out_features N, bias?); the standard size has one
    # configuration for the timing seeds (0 and 2)
    if seed % 2 == 0:
        lead, k, n, has_bias = pick(size, small=((64,), 96, 80, True), standard=((4, 1024), 4096, 4096, True),
                                    edge=((37,), 67, 3, True))
    else:
        lead, k, n, has_bias = pick(size, small=((2, 24), 160, 48, False), standard=((2048,), 8192, 2048, False),
                                    edge=((1, 1), 33, 129, False))
    # Activations are not quantized, so KernelBench-X's x50 outliers apply to them as usual. Weights are
    # uniform within each output channel (channels of different magnitudes): per-channel int4 then moves
    # the product by about 7% (1/14 of the channel's spread), clearly measurable yet inside the accuracy
    # thresholds; a heavy-tailed weight would push per-channel int4 past them.
    x = randn(lead + (k,), gen, dtype, mode)
    amp = torch.exp(uniform((n, 1), gen, torch.float32, -1.0, 1.0)) * math.sqrt(3.0 / k)
    w = _untie((uniform((n, k), gen, torch.float32, -1.0, 1.0) * amp).to(dtype))
    b = randn((n,), gen, torch.float32, "standard", scale=0.2).to(dtype) if has_bias else None
    return Inputs((x, w, b))


def cost(inputs):
    x, w, b = inputs.args
    n, k = w.shape
    rows = x.numel() // k
    return Cost(flops=2 * rows * n * k, bytes=element_bytes(x, w, b) + rows * n * x.element_size())


def emulate_w4a16(x, w, b):
    """The pipeline in float64: per-output-channel symmetric int4 weight, unquantized activations."""
    amax = w.abs().amax(dim=1, keepdim=True)
    scale = torch.where(amax > 0, amax / QMAX, torch.ones_like(amax))
    wq = torch.round(w / scale).clamp(-QMAX, QMAX) * scale
    return torch.nn.functional.linear(x, wq, b)


def gate(inputs, got):
    """Pass only when the output carries the int4 weight quantization: much closer to the emulated
    pipeline than the quantization moves the float product."""
    x, w, b = inputs.args
    device = got.device
    x64, w64 = x.to(device=device, dtype=torch.float64), w.to(device=device, dtype=torch.float64)
    b64 = None if b is None else b.to(device=device, dtype=torch.float64)
    f_ref = torch.nn.functional.linear(x64, w64, b64)
    q_ref = emulate_w4a16(x64, w64, b64)
    g = got.to(torch.float64)
    f_norm = float(f_ref.norm()) or 1.0
    q_norm = float(q_ref.norm()) or 1.0
    q_gap = float((q_ref - f_ref).norm()) / f_norm
    d_q = float((g - q_ref).norm()) / q_norm
    d_f = float((g - f_ref).norm()) / f_norm
    limit = GATE_FRACTION * q_gap + OUTPUT_ROUNDING.get(x.dtype, 1e-3)
    metrics = {"w4a16_distance": d_q, "float_distance": d_f, "quantization_gap": q_gap, "w4a16_limit": limit}
    if d_q <= limit:
        return True, "", metrics
    return False, (
        f"output does not carry the W4A16 quantization: relative distance {d_q:.3g} to the emulated pipeline "
        f"(int4 weight, one scale max|.|/7 per output channel, round to nearest even, clamp to [-7, 7]; "
        f"activations unquantized) exceeds {limit:.3g}; quantization moves the float product by {q_gap:.3g} and "
        f"the output is {d_f:.3g} from the unquantized float product"), metrics


TASK = Task(
    id="Quantization/linear_w4a16",
    difficulty=4,
    entry="linear_w4a16",
    signature="linear_w4a16(input: Tensor, weight: Tensor, bias: Tensor = None)",
    description=(
        "Linear layer input @ weight.T + bias with the weight quantized to 4 bits: `input` is (*, K) in a 16-bit "
        "float type, `weight` is (N, K) and the optional `bias` (N,) in the same type. Quantize each output "
        "channel (row n of `weight`) symmetrically with scale s[n] = max_k |weight[n, k]| / 7: q = "
        "round-half-to-even(weight / s) clamped to [-7, 7] (an all-zero row gives zeros); hold q packed two "
        "per byte (low nibble k = 2j, high nibble k = 2j + 1, two's complement) and unpack it inside the "
        "matrix-product kernel. Activations are not quantized: out = (input @ q.T) * s + bias, accumulated in "
        "float32 and returned as a (*, N) tensor in the input's dtype. It is judged against "
        "torch.nn.functional.linear on the float inputs by approximation metrics and must carry this "
        "quantization (a float weight or other scales fail)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float16, torch.bfloat16),
    contract=Approximate(min_cosine=0.9, max_l1_relative=0.1, max_rmse_relative=0.15,
                         min_sqnr_db=round(-20 * math.log10(0.15), 1), gate=gate),
)
