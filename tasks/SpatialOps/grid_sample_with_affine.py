"""Affine warp of 4-D images: build the sampling grid from a 2x3 matrix, then grid-sample."""

import math

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(input, theta, size, mode="bilinear", padding_mode="zeros", align_corners=False):
    grid = torch.nn.functional.affine_grid(theta, list(size), align_corners=align_corners)
    return torch.nn.functional.grid_sample(input, grid, mode=mode, padding_mode=padding_mode,
                                           align_corners=align_corners)


# Per size, the cases seeds rotate through: input (N, C, H, W), output (H_out, W_out), mode, padding_mode,
# align_corners. Output sizes keep the base grid dyadic (a power of two, or one more than a power of
# two with align_corners=True), so with dyadic theta the pixel coordinates are exact in float32 in
# any order of operations, and torch's float64 grid is exact for the nearest-mode sizes: a coordinate
# on a rounding tie is a true tie, resolved to even by the reference and by a float32 kernel alike.
# (No output size is 1: torch's CPU affine_grid has no half-precision path for it.)
SMALL = (((2, 3, 10, 12), (8, 16), "bilinear", "zeros", False),
         ((2, 4, 9, 7), (9, 17), "nearest", "border", True))
EDGE = (((1, 1, 1, 5), (5, 3), "bilinear", "border", True),
        ((3, 2, 7, 1), (2, 4), "nearest", "zeros", False))
STANDARD = (((16, 60, 128, 128), (256, 256), "bilinear", "zeros", False),)   # 16M in, 63M out


def _theta(n, gen, dtype):
    angle = uniform((n,), gen, torch.float32, -0.6, 0.6)
    scale = uniform((n, 2), gen, torch.float32, 0.7, 1.3)
    shear = uniform((n,), gen, torch.float32, -0.2, 0.2)
    shift = uniform((n, 2), gen, torch.float32, -0.25, 0.25)
    cos, sin = torch.cos(angle), torch.sin(angle)
    theta = torch.stack([torch.stack([scale[:, 0] * cos, -scale[:, 1] * sin + shear, shift[:, 0]], -1),
                         torch.stack([scale[:, 0] * sin, scale[:, 1] * cos, shift[:, 1]], -1)], 1)
    step = 2.0 ** (-6 if dtype == torch.bfloat16 else -8)     # exact in the evaluated dtype
    return (torch.round(theta / step) * step).to(dtype)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, small=SMALL, standard=STANDARD, edge=EDGE)
    shape, (h_out, w_out), sample_mode, padding_mode, align_corners = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode)
    out_size = torch.Size((shape[0], shape[1], h_out, w_out))
    theta = _theta(shape[0], gen, dtype)
    return Inputs((x, theta, out_size),
                  {"mode": sample_mode, "padding_mode": padding_mode, "align_corners": align_corners})


def touched_pixels(shape, grid, mode="bilinear", padding_mode="zeros", align_corners=False):
    """How many input pixels (over the batch, per channel) some output reads with a nonzero weight:
    the fewest a kernel must load."""
    n, _, h, w = shape
    g = grid.double()
    coords = []
    for k, extent in ((0, w), (1, h)):
        c = (g[..., k] + 1) / 2 * (extent - 1) if align_corners else ((g[..., k] + 1) * extent - 1) / 2
        if padding_mode == "border":
            c = c.clamp(0, extent - 1)
        coords.append(c.clamp(-2, extent + 1))
    cx, cy = coords
    if mode == "nearest":
        corners = [(torch.round(cx), torch.round(cy), torch.ones_like(cx, dtype=torch.bool))]
    else:
        x0, y0 = torch.floor(cx), torch.floor(cy)
        fx, fy = cx - x0, cy - y0
        corners = [(x0 + dx, y0 + dy, wx & wy) for dx, wx in ((0, fx < 1), (1, fx > 0))
                   for dy, wy in ((0, fy < 1), (1, fy > 0))]
    hit = torch.zeros(n, h + 8, w + 8, dtype=torch.bool)
    batch = torch.arange(n).view(n, 1, 1).expand(cx.shape)
    for xs, ys, used in corners:
        hit[batch[used], ys[used].long() + 4, xs[used].long() + 4] = True
    return int(hit[:, 4:h + 4, 4:w + 4].sum())


def cost(inputs):
    x, theta, size = inputs.args
    out_numel = math.prod(size)
    bilinear = inputs.kwargs.get("mode", "bilinear") == "bilinear"
    align = inputs.kwargs.get("align_corners", False)
    grid = torch.nn.functional.affine_grid(theta.double(), list(size), align_corners=align)
    # the input pixels some output reads are loaded once at best; theta is read and the output written once
    read = touched_pixels(x.shape, grid, **inputs.kwargs) * x.shape[1] * x.element_size()
    return Cost(flops=(7 if bilinear else 0) * out_numel + 10 * out_numel // max(size[1], 1),
                bytes=read + element_bytes(theta) + out_numel * x.element_size())


TASK = Task(
    id="SpatialOps/grid_sample_with_affine",
    difficulty=3,
    entry="grid_sample_with_affine",
    signature=("grid_sample_with_affine(input: torch.Tensor, theta: torch.Tensor, size: torch.Size, "
               "mode: str = 'bilinear', padding_mode: str = 'zeros', align_corners: bool = False)"),
    description=(
        "Warp an (N, C, H, W) image by per-image 2x3 affine matrices `theta` (N, 2, 3), same dtype, returning "
        "(N, C, H_out, W_out) in the input's dtype, where `size` = (N, C, H_out, W_out) (a torch.Size or tuple). "
        "It equals torch.nn.functional.affine_grid(theta, size, align_corners) followed by grid_sample with the "
        "same mode, padding_mode and align_corners: output pixel (i, j) has base coordinates x_j, y_i that run "
        "from -1 to 1 over the width and height (x_j = -1 + 2j/(W_out-1) if align_corners, else (2j+1)/W_out - 1; "
        "0 when that size is 1; y likewise), and samples the image at (x, y) = theta[n] @ (x_j, y_i, 1). Sampling "
        "follows grid_sample for 4-D inputs: mode 'bilinear' or 'nearest' (round to nearest, ties to even), "
        "padding_mode 'zeros' or 'border' ('bicubic' and 'reflection' are not required). Compute in float32."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
