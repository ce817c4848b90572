"""Bitwise AND of two integer tensors, scaled by Binomial samples (a random op, judged statistically)."""

import math

import torch

from evaluator.contracts import Statistical
from evaluator.randomness import LAGS, SIGMAS, SLACK_COUNT, fmt_number, far_lags, ks_uniform
from evaluator.task import Allowance, Cost, Inputs, Task, element_bytes, generator, pick, uniform

# (input shape, other shape, total_count shape, probability shape, logits instead of probs) per
# (size, seed): equal shapes, counts per column, operands broadcasting against each other. The
# standard size has one configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [((64, 128), (64, 128), (128,), (64, 128), False), ((64, 128), (64, 128), (128,), (64, 128), True)],
    "edge": [((3, 1001), (3, 1001), (1001,), (3, 1001), False),
             ((2, 1, 17, 5), (7, 1, 1), (5,), (2, 7, 17, 5), True)],
    "standard": [((8192, 8192), (8192, 8192), (8192,), (8192, 8192), False)],
}
MAX_COUNT = 20
VALUE_BITS = 15  # integer operands in [-2**15, 2**15): the AND and its multiples stay exact in float32
OUTLIER_FRACTION = 0.001
PIT_SEED = 12345


def reference(input, other, total_count, probs=None, logits=None):
    and_result = torch.bitwise_and(input, other)
    sample = torch.distributions.Binomial(total_count=total_count, probs=probs, logits=logits).sample()
    return sample * and_result


def _operand(shape, gen, dtype, mode):
    if dtype == torch.uint8:
        x = torch.randint(0, 256, shape, generator=gen, dtype=torch.int64)
        extremes = torch.tensor([0, 255])
    else:
        x = torch.randint(-2 ** VALUE_BITS, 2 ** VALUE_BITS, shape, generator=gen, dtype=torch.int64)
        extremes = torch.tensor([-2 ** VALUE_BITS, 2 ** VALUE_BITS - 1, -1, 0])
    if mode == "outlier":  # 0.1% of the values at the extremes of the range
        flat = x.reshape(-1)
        count = max(1, round(flat.numel() * OUTLIER_FRACTION))
        picked = torch.randint(0, flat.numel(), (count,), generator=gen)
        flat[picked] = extremes[torch.randint(0, len(extremes), (count,), generator=gen)]
    return x.to(dtype)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, other_shape, count_shape, p_shape, use_logits = cases[seed % len(cases)]
    x = _operand(shape, gen, dtype, mode)
    other = _operand(other_shape, gen, dtype, mode)
    total_count = torch.randint(0, MAX_COUNT + 1, count_shape, generator=gen, dtype=torch.int64)
    if use_logits:
        p = torch.randn(p_shape, generator=gen) * 2.0
    else:
        p = uniform(p_shape, gen, torch.float32, 0.0, 1.0)
    if mode == "outlier":  # 0.1% of the probabilities certain: exactly 0 or 1 (logits +-40)
        flat = p.reshape(-1)
        count = max(1, round(flat.numel() * OUTLIER_FRACTION))
        picked = torch.randint(0, flat.numel(), (count,), generator=gen)
        ends = torch.tensor([-40.0, 40.0]) if use_logits else torch.tensor([0.0, 1.0])
        flat[picked] = ends[torch.randint(0, 2, (count,), generator=gen)]
    kwargs = {"logits": p} if use_logits else {"probs": p}
    return Inputs((x, other, total_count), kwargs)


def _expected_parts(inputs, device):
    x, other, total_count = (t.to(device) for t in inputs.args)
    probs, logits = inputs.kwargs.get("probs"), inputs.kwargs.get("logits")
    p = probs.to(device, torch.float64) if probs is not None else torch.sigmoid(logits.to(device, torch.float64))
    bits = torch.bitwise_and(x, other).to(torch.int64)
    shape = torch.broadcast_shapes(bits.shape, total_count.shape, p.shape)
    dtype = (probs if probs is not None else logits).dtype
    return (bits.expand(shape).double(), total_count.expand(shape).double(), p.expand(shape), shape, dtype)


def _lag_correlations(resid, shape):
    """Independent draws leave no correlation between standardized residuals at fixed distances
    (block sizes, row and plane strides, the half, third and quarter of the output)."""
    n = resid.numel()
    lags = set(LAGS) | set(far_lags(n, shape))
    failures = []
    for lag in sorted(d for d in lags if 0 < d < n and n - d >= 1000):
        a, b = resid[:-lag], resid[lag:]
        denom = float((a.square().sum() * b.square().sum()).sqrt())
        if denom == 0:
            continue
        corr = float((a * b).sum()) / denom
        if abs(corr) * math.sqrt(n - lag) > SIGMAS:
            failures.append(f"samples {lag} elements apart are correlated (correlation {fmt_number(corr)} over {n - lag} "
                            "pairs, independent draws give about 0): blocks, rows or halves reuse the same random "
                            "stream (or mirror it, total_count - k)")
            break
    return failures


def _call_correlation(residuals, live):
    """Two calls' standardized residuals must be uncorrelated position by position (a second call that
    mirrors the first, total_count - k, or reuses its uniforms differs from it and still fails here)."""
    failures = []
    count = int(live.sum())
    if count < 1000:
        return failures
    for i in range(len(residuals)):
        for j in range(i + 1, len(residuals)):
            a, b = residuals[i], residuals[j]
            denom = float((a.square().sum() * b.square().sum()).sqrt())
            if denom == 0:
                continue
            corr = float((a * b).sum()) / denom
            if abs(corr) * math.sqrt(count) > SIGMAS:
                failures.append(f"calls {i + 1} and {j + 1} drew correlated counts (correlation {fmt_number(corr)} over "
                                f"{count} elements, independent draws give about 0): seed every call afresh instead "
                                "of transforming the previous call's draws")
    return failures


def spread_indices(n, count, device):
    """`count` indices spread evenly over range(n), in integers (a float32 linspace rounds past n - 1)."""
    return torch.arange(count, dtype=torch.int64, device=device) * (n - 1) // (count - 1)


def check(inputs, runs):
    from scipy import stats  # only the statistical judgement needs scipy

    if not runs or not isinstance(runs[0], torch.Tensor):
        return ["returned no tensor"]
    device = runs[0].device
    bits, n, p, shape, dtype = _expected_parts(inputs, device)
    failures, draws, residuals = [], [], []
    for number, run in enumerate(runs, start=1):
        if not isinstance(run, torch.Tensor) or tuple(run.shape) != tuple(shape) or run.dtype != dtype:
            got = f"{tuple(run.shape)} {run.dtype}" if isinstance(run, torch.Tensor) else type(run).__name__
            return [f"call {number}: returned {got}, expected shape {tuple(shape)} and dtype {dtype}"]
        got = run.to(device, torch.float64)
        if not bool(torch.isfinite(got).all()):
            return [f"call {number}: {int((~torch.isfinite(got)).sum())} elements are NaN or Inf (unwritten?)"]
        zero = bits == 0
        k = torch.where(zero, torch.zeros_like(got), got / torch.where(zero, torch.ones_like(bits), bits))
        wrong = (zero & (got != 0)) | (~zero & ((k != k.round()) | (k < 0) | (k > n)))
        wrong |= ~zero & (((p == 0) & (k != 0)) | ((p == 1) & (k != n)))
        if bool(wrong.any()):
            i = int(torch.nonzero(wrong.reshape(-1))[0])
            return [f"call {number}: {int(wrong.sum())} elements are not (an integer count in [0, total_count], "
                    f"0 when p = 0 and total_count when p = 1) times bitwise_and(input, other) (first at flat index "
                    f"{i}: got {float(got.reshape(-1)[i]):.6g}, AND = {int(bits.reshape(-1)[i])}, total_count = "
                    f"{int(n.reshape(-1)[i])}, p = {float(p.reshape(-1)[i]):.4g})"]
        draws.append(k)
        live = ~zero & (p > 0) & (p < 1) & (n > 0)
        var = torch.where(live, n * p * (1 - p), torch.zeros_like(p))
        resid = torch.where(live, k - n * p, torch.zeros_like(p))
        total_var = float(var.sum())
        if total_var > 0:
            z = float(resid.sum()) / math.sqrt(total_var)
            if abs(z) > SIGMAS:
                failures.append(f"call {number}: the counts are biased: their sum is {fmt_number(z)} standard deviations "
                                "from total_count * p (a Binomial(total_count, p) draw per element)")
            standardized = torch.where(live, resid / var.clamp_min(1e-300).sqrt(), torch.zeros_like(p)).reshape(-1)
            failures += [f"call {number}: {f}" for f in _lag_correlations(standardized, shape)]
            residuals.append(standardized)
        # randomized probability integral transform: U(0, 1) exactly when k ~ Binomial(n, p)
        index = torch.nonzero(live.reshape(-1)).reshape(-1)
        if index.numel() > (1 << 20):
            index = index[spread_indices(index.numel(), 1 << 20, device)]
        if index.numel() >= 32:
            kk, nn, pp = (t.reshape(-1)[index].cpu().numpy() for t in (k, n, p))
            jitter = torch.rand(index.numel(), generator=torch.Generator().manual_seed(PIT_SEED), dtype=torch.float64)
            pit = stats.binom.cdf(kk - 1, nn, pp) + jitter.numpy() * stats.binom.pmf(kk, nn, pp)
            failures += [f"call {number}: the counts do not follow Binomial(total_count, p): {f}"
                         for f in ks_uniform(torch.from_numpy(pit), 0.0, 1.0)]
    if len(residuals) > 1 and not failures:
        failures += _call_correlation(residuals, ~zero & (p > 0) & (p < 1) & (n > 0))
    if len(draws) > 1:
        live = (bits != 0) & (p > 0) & (p < 1) & (n > 0)
        index = torch.nonzero(live.reshape(-1)).reshape(-1)
        if index.numel() > (1 << 20):
            index = index[spread_indices(index.numel(), 1 << 20, device)]
        if index.numel() >= 32:
            nn, pp = (t.reshape(-1)[index].cpu().numpy() for t in (n, p))
            grid = torch.arange(MAX_COUNT + 1, dtype=torch.float64).numpy()[:, None]
            same = (stats.binom.pmf(grid, nn[None, :], pp[None, :]) ** 2).sum(axis=0)
            expected = float(same.sum())
            allowed = expected + SIGMAS * math.sqrt(float((same * (1 - same)).sum())) + SLACK_COUNT
            for i in range(len(draws)):
                for j in range(i + 1, len(draws)):
                    equal = int((draws[i].reshape(-1)[index] == draws[j].reshape(-1)[index]).sum())
                    if equal > allowed:
                        failures.append(f"calls {i + 1} and {j + 1} drew the same counts at {equal} of {index.numel()} "
                                        f"positions (independent draws agree at about {expected:.0f}): draw a fresh "
                                        "seed on every call")
    return failures


def cost(inputs):
    x, other, total_count = inputs.args
    p = inputs.kwargs.get("probs")
    if p is None:
        p = inputs.kwargs.get("logits")
    out_numel = torch.Size(torch.broadcast_shapes(x.shape, other.shape, total_count.shape, p.shape)).numel()
    # a Binomial draw by inversion takes about total_count / 2 steps of a few operations
    return Cost(flops=out_numel * (MAX_COUNT // 2) * 4,
                bytes=element_bytes(x, other, total_count, p) + out_numel * p.element_size())


TASK = Task(
    id="Math/bitwise_and_binomial",
    difficulty=2,
    entry="bitwise_and_binomial",
    signature=("bitwise_and_binomial(input: torch.Tensor, other: torch.Tensor, total_count: torch.Tensor, "
               "probs: torch.Tensor = None, logits: torch.Tensor = None)"),
    description=(
        "Draw, for every element, an independent count k ~ Binomial(total_count, p) (total_count: int64 tensor of "
        "trials, p = probs, or sigmoid(logits) when `logits` is given instead) and return k * "
        "bitwise_and(input, other), where `input` and `other` are integer tensors of one dtype; all operands "
        "broadcast together as in NumPy, and the result has the broadcast shape and the dtype of probs/logits "
        "(float32). The output is random and judged statistically (exact multiples of the AND, counts "
        "distributed as Binomial(total_count, p), no correlation between elements, fresh draws on every call), "
        "so seed the kernel's generator (e.g. tl.rand) from torch.randint on every call; p = 0 must give k = 0 "
        "and p = 1 must give k = total_count."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.int32, torch.int64, torch.uint8),
    contract=Statistical(check=check),
    allowed=(Allowance(api="torch.randint", aten=("randint",),
                       why="draw a fresh seed on the host for the kernel's own random stream"),),
)
