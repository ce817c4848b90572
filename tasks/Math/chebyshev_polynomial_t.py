"""Chebyshev polynomials of the first kind T_n(x), elementwise with broadcast degrees."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, uniform, with_outliers

# (x shape, degree) per (size, seed): the degree is a Python int or the shape of an int64 tensor of
# degrees (-1 to 12) that broadcasts against x. The standard size has one configuration, so the seeds
# that rotate during timing share it.
CASES = {
    "small": [((33, 257), 9), ((4, 50, 41), (50, 1))],
    "edge": [((3, 1001), 6), ((2, 1, 17, 5), (1, 3, 1, 5))],
    "standard": [((8192, 8192), (8192,))],
}
MAX_DEGREE = 12
SPECIAL = [1.0, -1.0, 0.0, -0.0, 0.5, -0.5, 0.99999994, -0.99999994, 1e-20]


def reference(input, n, out=None):
    return torch.special.chebyshev_polynomial_t(input, n, out=out)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, degree = cases[seed % len(cases)]
    # x on the polynomials' natural interval [-1, 1]; outliers (x50) leave it, where T_n grows like
    # (2|x|)^n / 2 and only the three-term recurrence applies
    x = uniform(shape, gen, torch.float32, -1.0, 1.0)
    if mode == "outlier":
        x = with_outliers(x, gen)
    if size != "standard":
        x.view(-1)[:len(SPECIAL)] = torch.tensor(SPECIAL)
    if isinstance(degree, int):
        n = degree
    else:
        n = torch.randint(-1, MAX_DEGREE + 1, degree, generator=gen, dtype=torch.int64)
    return Inputs((x.to(dtype), n))


def cost(inputs):
    x, n = inputs.args
    shape = torch.broadcast_shapes(x.shape, n.shape) if isinstance(n, torch.Tensor) else x.shape
    out_numel = torch.Size(shape).numel()
    n_bytes = element_bytes(n) if isinstance(n, torch.Tensor) else 0
    return Cost(flops=30 * out_numel, bytes=element_bytes(x) + n_bytes + out_numel * x.element_size())


TASK = Task(
    id="Math/chebyshev_polynomial_t",
    difficulty=3,
    entry="chebyshev_polynomial_t",
    signature="chebyshev_polynomial_t(input, n, out=None)",
    kernelbenchx_signature="chebyshev_polynomial_t(input, n, *, out=None)",
    description=(
        "Return T_n(x), the Chebyshev polynomial of the first kind, for the float32 tensor `input` and the "
        "degree `n`, a Python int or an int64 tensor broadcasting against `input` (the result has the "
        "broadcast shape and dtype float32). T_0 = 1, T_1 = x, T_{k+1} = 2x T_k - T_{k-1}; a negative degree "
        "gives 0, x = +-1 gives exactly 1 or (-1)^n, and for |x| < 1 with n > 6 evaluate cos(n arccos x) (the "
        "recurrence otherwise; |x| > 1 occurs and grows fast). Accuracy is judged against float64, so keep the "
        "phase n arccos(x) accurate; if `out` is given, write the result into it and return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
