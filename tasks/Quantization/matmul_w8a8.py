"""W8A8 matrix product: int8 activations (per row), int8 weights (per output channel), int32 accumulation."""

import math

import torch

from evaluator.contracts import Approximate
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform

QMAX = 127.0
# the gate's allowance for rounding the output to the evaluated dtype (relative, in norm)
OUTPUT_ROUNDING = {torch.float32: 1e-5, torch.float16: 1e-3, torch.bfloat16: 8e-3}
# a candidate must be this close to the emulated W8A8 result, as a fraction of how far the
# quantization moves the float product
GATE_FRACTION = 0.25


def reference(input, weight):
    return torch.matmul(input, weight)


def _spike(t, dim, count, low, high, gen):
    """Give every slice along `dim` (rows: dim=1, columns: dim=0) `count` large-magnitude entries."""
    t = t.clone()
    lanes = t.shape[1 - dim]
    length = t.shape[dim]
    lane = torch.arange(lanes)
    for _ in range(count):
        pos = torch.randint(0, length, (lanes,), generator=gen)
        mag = uniform((lanes,), gen, torch.float32, low, high)
        sign = torch.where(torch.rand(lanes, generator=gen) < 0.5, -1.0, 1.0)
        if dim == 1:
            t[lane, pos] = mag * sign
        else:
            t[pos, lane] = mag * sign
    return t


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    if seed % 2 == 0:
        m, k, n = pick(size, small=(64, 96, 80), standard=(4096, 4096, 4096), edge=(37, 1001, 3))
    else:
        m, k, n = pick(size, small=(48, 160, 64), standard=(8192, 4096, 2048), edge=(1, 67, 129))
    # Each activation row and weight column carries a few large entries (like activation outliers),
    # so its int8 step is coarse and the quantization error is clearly measurable; the outlier mode
    # uses more and larger ones. (The generic x50 outliers would push any per-row/per-channel int8
    # scheme past the accuracy thresholds, so this task sets its own.)
    count, low, high = (1, 5.0, 7.0) if mode == "standard" else (2, 8.0, 12.0)
    x = _spike(randn((m, k), gen, torch.float32, "standard"), 1, count, low, high, gen)
    w = _spike(randn((k, n), gen, torch.float32, "standard"), 0, count, low, high, gen)
    # rows and output channels of different magnitudes, so per-tensor scales are visibly worse
    row_scale = torch.exp(uniform((m, 1), gen, torch.float32, -1.0, 1.0))
    col_scale = torch.exp(uniform((1, n), gen, torch.float32, -1.0, 1.0)) / math.sqrt(k)
    return Inputs(((x * row_scale).to(dtype), (w * col_scale).to(dtype)))


def cost(inputs):
    x, w = inputs.args
    m, k = x.shape
    n = w.shape[1]
    return Cost(flops=2 * m * n * k, bytes=element_bytes(x, w) + m * n * x.element_size())


def _symmetric_int8(t, dim):
    amax = t.abs().amax(dim=dim, keepdim=True)
    scale = torch.where(amax > 0, amax / QMAX, torch.ones_like(amax))
    return torch.round(t / scale).clamp(-QMAX, QMAX), scale


def emulate_w8a8(x, w):
    """The W8A8 pipeline in float64: per-row int8 activations, per-column int8 weights, exact integer dot."""
    x64, w64 = x.double(), w.double()
    xq, sx = _symmetric_int8(x64, 1)   # (M, 1)
    wq, sw = _symmetric_int8(w64, 0)   # (1, N)
    return (xq @ wq) * sx * sw         # integer products and sums are exact in float64


def gate(inputs, got):
    """Pass only when the output carries the W8A8 quantization: much closer to the emulated int8
    pipeline than the quantization moves the float product."""
    x, w = inputs.args[0], inputs.args[1]
    f_ref = x.double() @ w.double()
    q_ref = emulate_w8a8(x, w)
    g = got.to(device=f_ref.device, dtype=torch.float64)
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
        f"pipeline (per-row activation scales, per-output-channel weight scales, scale = max|.|/127, round to "
        f"nearest) exceeds {limit:.3g}; quantization moves the float product by {q_gap:.3g} and the output is "
        f"{d_f:.3g} from the unquantized float product"), metrics


TASK = Task(
    id="Quantization/matmul_w8a8",
    difficulty=3,
    entry="matmul_w8a8",
    signature="matmul_w8a8(input: Tensor, weight: Tensor)",
    description=(
        "Multiply `input` (M, K) by `weight` (K, N), both floating point, through a W8A8 integer pipeline and "
        "return the (M, N) result in the input's dtype. Quantize each row i of `input` symmetrically to int8 with "
        "scale sx[i] = max_k |input[i, k]| / 127 (q = round-to-nearest(x / sx), clamped to [-127, 127]), and each "
        "output channel j (column j of `weight`) likewise with sw[j] = max_k |weight[k, j]| / 127; an all-zero "
        "row or column quantizes to zeros. Multiply the int8 matrices with int32 accumulation and dequantize: "
        "out[i, j] = acc[i, j] * sx[i] * sw[j]. The result is judged against torch.matmul on the float inputs "
        "by approximation metrics, and must match the described quantization (a float matmul or per-tensor "
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
