"""W8A8 batched matrix product: int8 rows of `input`, int8 columns of `mat2`, int32 accumulation."""

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


def reference(input, mat2):
    return torch.bmm(input, mat2)


def _spike_rows(t, count, low, high, gen):
    """Give every row (last dim) of `t` `count` large-magnitude entries at random positions."""
    rows = t.reshape(-1, t.shape[-1]).clone()
    lanes, length = rows.shape
    lane = torch.arange(lanes)
    for _ in range(count):
        pos = torch.randint(0, length, (lanes,), generator=gen)
        mag = uniform((lanes,), gen, torch.float32, low, high)
        sign = torch.where(torch.rand(lanes, generator=gen) < 0.5, -1.0, 1.0)
        rows[lane, pos] = mag * sign
    return rows.reshape(t.shape)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    if seed % 2 == 0:
        b, m, k, n = pick(size, small=(2, 64, 96, 80), standard=(32, 1024, 1024, 1024), edge=(3, 37, 301, 3))
    else:
        b, m, k, n = pick(size, small=(2, 48, 160, 64), standard=(8, 2048, 1024, 2048), edge=(4, 1, 67, 129))
    # Each row of `input` and each column of `mat2` carries a few large entries (activation-like
    # outliers), so its int8 step is coarse and the quantization error clearly measurable; outlier
    # mode uses more and larger ones. (KernelBench-X's generic x50 outliers would push any per-row
    # int8 scheme past the accuracy thresholds, so this task sets its own.)
    count, low, high = (1, 5.0, 7.0) if mode == "standard" else (2, 8.0, 12.0)
    x = _spike_rows(randn((b, m, k), gen, torch.float32, "standard"), count, low, high, gen)
    w = _spike_rows(randn((b, n, k), gen, torch.float32, "standard"), count, low, high, gen).transpose(1, 2)
    # rows, columns and batch entries of different magnitudes, so coarser scales are visibly worse
    row_scale = torch.exp(uniform((b, m, 1), gen, torch.float32, -1.0, 1.0))
    col_scale = torch.exp(uniform((b, 1, n), gen, torch.float32, -1.0, 1.0)) / math.sqrt(k)
    batch_scale = torch.exp(uniform((b, 1, 1), gen, torch.float32, -1.0, 1.0))
    return Inputs(((x * row_scale * batch_scale).to(dtype), (w * col_scale).contiguous().to(dtype)))


def cost(inputs):
    x, w = inputs.args
    b, m, k = x.shape
    n = w.shape[2]
    return Cost(flops=2 * b * m * n * k, bytes=element_bytes(x, w) + b * m * n * x.element_size())


def _symmetric_int8(t, dim):
    amax = t.abs().amax(dim=dim, keepdim=True)
    scale = torch.where(amax > 0, amax / QMAX, torch.ones_like(amax))
    return torch.round(t / scale).clamp(-QMAX, QMAX), scale


def emulate_w8a8(x, w):
    """The pipeline in float64: per-row int8 `input`, per-column int8 `mat2` (per batch entry), exact
    integer products and sums, dequantized by the two scales."""
    xq, sx = _symmetric_int8(x, 2)   # (B, M, 1)
    wq, sw = _symmetric_int8(w, 1)   # (B, 1, N)
    return torch.bmm(xq, wq) * sx * sw


def gate(inputs, got):
    """Pass only when the output carries the W8A8 quantization: much closer to the emulated int8
    pipeline than the quantization moves the float product."""
    x, w = inputs.args[0], inputs.args[1]
    device = got.device
    x64, w64 = x.to(device=device, dtype=torch.float64), w.to(device=device, dtype=torch.float64)
    f_ref = torch.bmm(x64, w64)
    q_ref = emulate_w8a8(x64, w64)
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
        f"pipeline (per-row scales for `input`, per-column scales for `mat2`, each per batch entry, "
        f"scale = max|.|/127, round to nearest even) exceeds {limit:.3g}; quantization moves the float product "
        f"by {q_gap:.3g} and the output is {d_f:.3g} from the unquantized float product"), metrics


TASK = Task(
    id="Quantization/bmm_w8a8",
    difficulty=3,
    entry="bmm_w8a8",
    signature="bmm_w8a8(input: Tensor, mat2: Tensor)",
    description=(
        "Batched product of `input` (B, M, K) and `mat2` (B, K, N), both floating point, computed through an "
        "int8 pipeline; return the (B, M, N) result in the input's dtype. For every batch entry b, quantize each "
        "row i of input[b] symmetrically with scale sx[b, i] = max_k |input[b, i, k]| / 127, and each column j "
        "of mat2[b] with sw[b, j] = max_k |mat2[b, k, j]| / 127: q = round-half-to-even(v / scale) clamped to "
        "[-127, 127], an all-zero row or column giving zeros. Multiply the int8 matrices with int32 accumulation "
        "and dequantize: out[b, i, j] = acc[b, i, j] * sx[b, i] * sw[b, j]. The result is judged against "
        "torch.bmm on the float inputs by approximation metrics, and must carry this quantization (a float "
        "product or coarser scales fail)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32, torch.float16),
    contract=Approximate(min_cosine=0.95, max_l1_relative=0.05, max_rmse_relative=0.1, min_sqnr_db=20.0,
                         gate=gate),
    compute_dtype=torch.int8,
)
