"""W8A8 2-D convolution: int8 activations (one scale per tensor), int8 weights (per output channel),
int32 accumulation, bias added after dequantization."""

import math

import torch

from evaluator.contracts import Approximate
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform

QMAX = 127.0
# the gate's allowance for rounding the output to the evaluated dtype (relative, in norm)
OUTPUT_ROUNDING = {torch.float32: 1e-5, torch.float16: 1e-3, torch.bfloat16: 8e-3}
# a candidate must be this close to the emulated W8A8 result, as a fraction of how far the
# quantization moves the float convolution
GATE_FRACTION = 0.25


def reference(input, weight, bias=None, stride=1, padding=0):
    return torch.nn.functional.conv2d(input, weight, bias, stride, padding)


# Per size, the cases seeds rotate through: (N, C_in, H, W), (C_out, kH, kW), stride, padding, bias?.
# The standard size has one configuration for the timing seeds (0 and 2).
SMALL = (((2, 8, 10, 10), (16, 3, 3), 1, 1, True),
         ((2, 24, 9, 11), (40, 3, 3), 2, 0, False))
EDGE = (((1, 3, 7, 10), (5, 3, 2), 2, 1, True),
        ((3, 5, 1, 9), (1, 1, 3), 1, 0, False))
STANDARD = (((32, 128, 56, 56), (256, 3, 3), 1, 1, True),      # ~59 GFLOP
            ((32, 128, 112, 112), (256, 3, 3), 2, 1, False))   # ~59 GFLOP, strided


def _spike(t, count, low, high, gen):
    """Set `count` random entries of `t` to large magnitudes (random signs)."""
    flat = t.reshape(-1).clone()
    pos = torch.randint(0, flat.numel(), (count,), generator=gen)
    sign = torch.where(torch.rand(count, generator=gen) < 0.5, -1.0, 1.0)
    flat[pos] = uniform((count,), gen, torch.float32, low, high) * sign
    return flat.reshape(t.shape)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, small=SMALL, standard=STANDARD, edge=EDGE)
    x_shape, (c_out, kh, kw), stride, padding, has_bias = cases[seed % len(cases)]
    c_in = x_shape[1]
    fan_in = c_in * kh * kw
    # A few activation spikes set the per-tensor int8 step (more and larger ones in outlier mode), and
    # every output channel's filter has one large tap, so both quantization errors are clearly
    # measurable. (KernelBench-X's generic x50 outliers would wreck any per-tensor int8 scale, so this
    # task sets its own.)
    x_count, x_low, x_high = ((1, 5.0, 7.0) if mode == "standard" else (2, 8.0, 12.0))
    x_count *= max(1, math.prod(x_shape) // 20000)
    w_low, w_high = (4.0, 6.0) if mode == "standard" else (6.0, 8.0)
    x = randn(x_shape, gen, torch.float32, "standard")
    x = _spike(x * torch.exp(uniform((1, c_in, 1, 1), gen, torch.float32, -0.5, 0.5)), x_count, x_low, x_high, gen)
    w = randn((c_out, fan_in), gen, torch.float32, "standard")
    taps = torch.randint(0, fan_in, (c_out,), generator=gen)
    sign = torch.where(torch.rand(c_out, generator=gen) < 0.5, -1.0, 1.0)
    w[torch.arange(c_out), taps] = uniform((c_out,), gen, torch.float32, w_low, w_high) * sign
    # output channels of different magnitudes, so a single weight scale is visibly worse
    w = w * torch.exp(uniform((c_out, 1), gen, torch.float32, -1.0, 1.0)) / math.sqrt(fan_in)
    b = randn((c_out,), gen, torch.float32, "standard", scale=0.2).to(dtype) if has_bias else None
    return Inputs((x.to(dtype), w.reshape(c_out, c_in, kh, kw).to(dtype), b),
                  {"stride": stride, "padding": padding})


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _out_size(x, w, stride, padding):
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    return (x.shape[2] + 2 * ph - w.shape[2]) // sh + 1, (x.shape[3] + 2 * pw - w.shape[3]) // sw + 1


def cost(inputs):
    x, w, b = inputs.args
    oh, ow = _out_size(x, w, inputs.kwargs.get("stride", 1), inputs.kwargs.get("padding", 0))
    c_out, c_in, kh, kw = w.shape
    out_numel = x.shape[0] * c_out * oh * ow
    flops = 2 * out_numel * c_in * kh * kw + (out_numel if b is not None else 0)
    return Cost(flops=flops, bytes=element_bytes(x, w, b) + out_numel * x.element_size())


def emulate_w8a8(x, w, b, stride, padding):
    """The pipeline in float64: one int8 scale for the whole input, one per output channel for the
    weight, an exact integer convolution (float64 holds the int32 sums exactly), dequantization, bias."""
    ax = x.abs().amax()
    sx = ax / QMAX if float(ax) > 0 else torch.ones_like(ax)
    xq = torch.round(x / sx).clamp(-QMAX, QMAX)
    aw = w.abs().amax(dim=(1, 2, 3), keepdim=True)
    sw = torch.where(aw > 0, aw / QMAX, torch.ones_like(aw))
    wq = torch.round(w / sw).clamp(-QMAX, QMAX)
    out = torch.nn.functional.conv2d(xq, wq, None, stride, padding) * sx * sw.reshape(1, -1, 1, 1)
    return out if b is None else out + b.reshape(1, -1, 1, 1)


def gate(inputs, got):
    """Pass only when the output carries the W8A8 quantization: much closer to the emulated int8
    pipeline than the quantization moves the float convolution."""
    x, w, b = inputs.args
    stride, padding = inputs.kwargs.get("stride", 1), inputs.kwargs.get("padding", 0)
    device = got.device
    x64, w64 = x.to(device=device, dtype=torch.float64), w.to(device=device, dtype=torch.float64)
    b64 = None if b is None else b.to(device=device, dtype=torch.float64)
    f_ref = torch.nn.functional.conv2d(x64, w64, b64, stride, padding)
    q_ref = emulate_w8a8(x64, w64, b64, stride, padding)
    g = got.to(torch.float64)
    f_norm = float(f_ref.norm()) or 1.0
    q_norm = float(q_ref.norm()) or 1.0
    q_gap = float((q_ref - f_ref).norm()) / f_norm
    d_q = float((g - q_ref).norm()) / q_norm
    d_f = float((g - f_ref).norm()) / f_norm
    limit = GATE_FRACTION * q_gap + OUTPUT_ROUNDING.get(x.dtype, 1e-3)
    metrics = {"w8a8_distance": d_q, "float_distance": d_f, "quantization_gap": q_gap, "w8a8_limit": limit}
    if d_q <= limit:
        return True, "", metrics
    return False, (
        f"output does not carry the W8A8 quantization: relative distance {d_q:.3g} to the emulated int8 "
        f"pipeline (one scale for the whole input, one per output channel for the weight, scale = max|.|/127, "
        f"round to nearest even, bias added after dequantization) exceeds {limit:.3g}; quantization moves the "
        f"float convolution by {q_gap:.3g} and the output is {d_f:.3g} from the unquantized float result"), metrics


TASK = Task(
    id="Quantization/conv2d_w8a8",
    difficulty=3,
    entry="conv2d_w8a8",
    signature="conv2d_w8a8(input: Tensor, weight: Tensor, bias: Tensor = None, stride: int = 1, padding: int = 0)",
    description=(
        "2-D convolution (cross-correlation, as torch.nn.functional.conv2d) of `input` (N, C_in, H, W) with "
        "`weight` (C_out, C_in, kH, kW), computed through an int8 pipeline; `stride` and `padding` (zeros on "
        "both sides) are ints applied to both spatial dims, and the optional `bias` (C_out,) is added in floating "
        "point after dequantization. Quantize the whole input with one scale sx = max|input| / 127 and each "
        "output channel's filter with sw[o] = max |weight[o]| / 127 (q = round-half-to-even(v / scale), clamped "
        "to [-127, 127]; an all-zero tensor or filter gives zeros), convolve the int8 tensors with int32 "
        "accumulation, and return acc * sx * sw[o] + bias[o] as an (N, C_out, OH, OW) tensor in the input's "
        "dtype, OH = (H + 2*padding - kH) // stride + 1 (likewise OW). It is judged against the float "
        "convolution by approximation metrics and must carry this quantization (a float convolution or other "
        "scales fail)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32, torch.float16),
    contract=Approximate(min_cosine=0.95, max_l1_relative=0.05, max_rmse_relative=0.1, min_sqnr_db=20.0,
                         gate=gate),
    compute_dtype=torch.int8,
)
