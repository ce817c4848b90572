"""N-dimensional discrete Fourier transform over chosen dimensions, with padding or trimming."""

import math

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# (shape, complex input, s, dim, norm) per (size, seed): every dimension by default, the last ones
# with padding (17 -> 20) and trimming (5 -> 4), dimensions in a given order, complex and real
# inputs, each normalization, odd and size-1 lengths. Transform lengths stay small enough for a DFT
# by matrix products (or any FFT) in Triton. The standard size has one configuration, so the seeds
# that rotate during timing share it: a batch of 64 x 64 transforms of real data.
CASES = {
    "small": [((8, 12, 10), False, None, None, None), ((6, 20, 16), True, (24, -1), (1, 2), "ortho")],
    "edge": [((3, 17, 5), False, (-1, 20, 4), None, "forward"), ((5, 1, 31), True, None, (2, 0), "backward")],
    "standard": [((8192, 64, 64), False, None, (-2, -1), "ortho")],
}


def reference(input, s=None, dim=None, norm=None, out=None):
    return torch.fft.fftn(input, s=s, dim=dim, norm=norm, out=out)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, is_complex, s, dim, norm = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode)
    if is_complex:
        x = torch.complex(x, randn(shape, gen, dtype, mode))
    kwargs = {}
    if s is not None:
        kwargs["s"] = s
    if dim is not None:
        kwargs["dim"] = dim
    if norm is not None:
        kwargs["norm"] = norm
    return Inputs((x,), kwargs)


def _plan(x, s, dim):
    """The transformed dimensions and their output lengths."""
    if dim is None:
        dims = list(range(x.dim())) if s is None else list(range(x.dim() - len(s), x.dim()))
    else:
        dims = [d % x.dim() for d in dim]
    lengths = [x.shape[d] if s is None or s[i] == -1 else s[i] for i, d in enumerate(dims)]
    return dims, lengths


def cost(inputs):
    (x,) = inputs.args
    dims, lengths = _plan(x, inputs.kwargs.get("s"), inputs.kwargs.get("dim"))
    out_shape = list(x.shape)
    for d, n in zip(dims, lengths):
        out_shape[d] = n
    out_numel = math.prod(out_shape)
    transform = math.prod(lengths)
    # the customary 5 N log2 N of a complex FFT of N points, over all transforms in the batch
    flops = 5 * out_numel * math.log2(max(transform, 2))
    return Cost(flops=flops, bytes=element_bytes(x) + out_numel * 8)


TASK = Task(
    id="Math/fftn",
    difficulty=5,
    entry="fftn",
    signature="fftn(input, s=None, dim=None, norm=None, out=None)",
    kernelbenchx_signature="fftn(input, s=None, dim=None, norm=None, *, out=None)",
    description=(
        "Return the N-dimensional discrete Fourier transform X[k] = sum_j x[j] exp(-2 pi i sum_d j_d k_d / n_d) "
        "of `input` (float32 or complex64) over the dimensions `dim` (a tuple, negative allowed; default: all, "
        "or the last len(s) when only `s` is given), as a complex64 tensor. `s` gives each transformed length "
        "n_d: the input is zero-padded or trimmed to it along that dimension, and -1 keeps the input's length. "
        "norm=None or 'backward' applies no scaling, 'forward' divides by prod(n_d), 'ortho' by its square "
        "root. Triton has no complex type: compute real and imaginary parts into a (..., 2) float32 tensor and "
        "return torch.view_as_complex of it; results are judged in full float32 accuracy (TF32 is too coarse)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
