"""Sample 4-D images at normalized grid locations (bilinear or nearest; zeros or border padding)."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform, with_outliers


def reference(input, grid, mode="bilinear", padding_mode="zeros", align_corners=False):
    return torch.nn.functional.grid_sample(input, grid, mode=mode, padding_mode=padding_mode,
                                           align_corners=align_corners)


# Per size, the cases seeds rotate through: input (N, C, H, W), grid (H_out, W_out), mode, padding_mode,
# align_corners. The standard size has one configuration, so the timing seeds share it.
SMALL = (((2, 3, 10, 12), (9, 11), "bilinear", "zeros", False),
         ((2, 4, 9, 7), (8, 13), "nearest", "border", True))
EDGE = (((1, 1, 1, 5), (3, 1), "bilinear", "border", True),
        ((3, 2, 7, 1), (1, 5), "nearest", "zeros", False))
STANDARD = (((16, 96, 128, 128), (192, 192), "bilinear", "zeros", False),)   # 25M in, 57M out


def make_grid(n, h_out, w_out, gen, dtype, mode):
    """A smooth warp of the identity grid reaching a little past [-1, 1], with jitter, rounded to a
    multiple of 2**-10 (2**-7 for bfloat16) so every format holds it exactly and the pixel coordinates
    it implies are exact in float32 whatever the order of operations."""
    ys = torch.linspace(-1.15, 1.15, h_out).view(1, h_out, 1).expand(n, h_out, w_out)
    xs = torch.linspace(-1.15, 1.15, w_out).view(1, 1, w_out).expand(n, h_out, w_out)
    zoom = uniform((n, 1, 1, 2), gen, torch.float32, 0.8, 1.2)
    shift = uniform((n, 1, 1, 2), gen, torch.float32, -0.1, 0.1)
    jitter = uniform((n, h_out, w_out, 2), gen, torch.float32, -0.08, 0.08)
    grid = torch.stack([xs, ys], dim=-1) * zoom + shift + jitter
    if mode == "outlier":
        grid = with_outliers(grid, gen)
    step = 2.0 ** (-7 if dtype == torch.bfloat16 else -10)
    return (torch.round(grid / step) * step).clamp(-1.9, 1.9).to(dtype)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, small=SMALL, standard=STANDARD, edge=EDGE)
    shape, (h_out, w_out), sample_mode, padding_mode, align_corners = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode)
    grid = make_grid(shape[0], h_out, w_out, gen, dtype, mode)
    return Inputs((x, grid), {"mode": sample_mode, "padding_mode": padding_mode, "align_corners": align_corners})


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
    x, grid = inputs.args
    n, c = x.shape[:2]
    out_numel = n * c * grid.shape[1] * grid.shape[2]
    bilinear = inputs.kwargs.get("mode", "bilinear") == "bilinear"
    # the input pixels some output reads are loaded once at best; the grid is read and the output written once
    read = touched_pixels(x.shape, grid, **inputs.kwargs) * c * x.element_size()
    return Cost(flops=(7 if bilinear else 0) * out_numel,
                bytes=read + element_bytes(grid) + out_numel * x.element_size())


TASK = Task(
    id="SpatialOps/grid_sample",
    difficulty=4,
    entry="grid_sample",
    signature="grid_sample(input, grid, mode='bilinear', padding_mode='zeros', align_corners=False)",
    description=(
        "Sample an (N, C, H, W) image at the locations of an (N, H_out, W_out, 2) `grid` (same dtype) as "
        "torch.nn.functional.grid_sample does for 4-D inputs, returning (N, C, H_out, W_out) in the input's dtype. "
        "grid[n, i, j] holds (x, y) normalized to [-1, 1]: pixel column ix = ((x + 1) / 2) * (W - 1) when "
        "align_corners is True, else ((x + 1) * W - 1) / 2 (y and H likewise); padding_mode='border' first clamps "
        "ix to [0, W - 1] and iy to [0, H - 1]. mode='bilinear' blends the four surrounding pixels by the "
        "fractional parts, and mode='nearest' takes the pixel at ix, iy rounded to the nearest integer, ties to "
        "even; with padding_mode='zeros' any pixel outside the image reads as 0. Compute coordinates and weights in "
        "float32 (modes 'bicubic' and 'reflection' are not required)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
