import torch
import triton
import triton.language as tl

QUARTER = 1024  # each program writes 4 * QUARTER elements
# Half-precision outputs: uniform on a grid of 2**-bits steps (as torch does), so rounding never reaches 1.
GRID_BITS = {torch.float16: 11, torch.bfloat16: 8}


@triton.jit
def _store_uniform(out_ptr, idx, u, n, GRID: tl.constexpr):
    if GRID > 0:
        u = tl.floor(u * GRID) * (1.0 / GRID)
    tl.store(out_ptr + idx, u.to(out_ptr.dtype.element_ty), mask=idx < n)


@triton.jit
def rand_kernel(out_ptr, n, seed, GRID: tl.constexpr, QUARTER: tl.constexpr):
    # Philox keyed by the call's seed; counter = a global index, unique per (program, lane). One
    # Philox evaluation yields four independent numbers, written to four coalesced quarters.
    pid = tl.program_id(0).to(tl.int64)
    lane = tl.arange(0, QUARTER)
    counter = pid * QUARTER + lane
    u0, u1, u2, u3 = tl.rand4x(seed, counter)
    base = pid * (4 * QUARTER) + lane
    _store_uniform(out_ptr, base, u0, n, GRID)
    _store_uniform(out_ptr, base + QUARTER, u1, n, GRID)
    _store_uniform(out_ptr, base + 2 * QUARTER, u2, n, GRID)
    _store_uniform(out_ptr, base + 3 * QUARTER, u3, n, GRID)


def rand(*size, generator=None, out=None, dtype=None, layout=torch.strided, device=None,
         requires_grad=False, pin_memory=False):
    if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)):
        size = tuple(size[0])
    dtype = dtype or torch.float32
    result = torch.empty(size, dtype=dtype, device=device) if out is None else out
    n = result.numel()
    # A fresh seed per call (from torch's generator, so torch.manual_seed makes runs reproducible).
    seed = torch.randint(0, 2**31 - 1, (1,), generator=generator).item()
    grid_bits = GRID_BITS.get(dtype, 0)
    target = result if result.is_contiguous() else torch.empty(size, dtype=dtype, device=result.device)
    rand_kernel[(max(1, triton.cdiv(n, 4 * QUARTER)),)](
        target, n, seed, GRID=2**grid_bits if grid_bits else 0, QUARTER=QUARTER, num_warps=4)
    if target is not result:
        result.copy_(target)
    return result
