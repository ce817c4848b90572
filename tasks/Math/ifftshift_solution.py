import torch
import triton
import triton.language as tl

MAX_DIMS = 6


@triton.jit
def ifftshift_kernel(x_ptr, y_ptr, n_rows,
                     s0, s1, s2, s3, s4, s5,
                     h0, h1, h2, h3, h4, h5,
                     n_col_blocks, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # The input is contiguous with shape (s0, ..., s5); h_d is the roll of dimension d (0 or s_d // 2).
    # One program handles a BLOCK_R x BLOCK_C tile: rows are the flattened leading five dimensions,
    # columns the last one.
    pid = tl.program_id(0).to(tl.int64)
    rb = pid // n_col_blocks
    cb = pid % n_col_blocks
    rows = rb * BLOCK_R + tl.arange(0, BLOCK_R).to(tl.int64)
    i4 = rows % s4
    r = rows // s4
    i3 = r % s3
    r = r // s3
    i2 = r % s2
    r = r // s2
    i1 = r % s1
    i0 = r // s1
    j0 = (i0 + h0) % s0
    j1 = (i1 + h1) % s1
    j2 = (i2 + h2) % s2
    j3 = (i3 + h3) % s3
    j4 = (i4 + h4) % s4
    src_rows = ((((j0 * s1 + j1) * s2 + j2) * s3 + j3) * s4 + j4) * s5
    cols = cb * BLOCK_C + tl.arange(0, BLOCK_C)
    src_cols = cols + h5
    src_cols = tl.where(src_cols >= s5, src_cols - s5, src_cols)
    mask = (rows < n_rows)[:, None] & (cols < s5)[None, :]
    values = tl.load(x_ptr + src_rows[:, None] + src_cols[None, :], mask=mask)
    tl.store(y_ptr + (rows * s5)[:, None] + cols[None, :], values, mask=mask)


def ifftshift(input, dim=None):
    x = input.contiguous()
    nd = x.dim()
    if nd == 0:
        x = x.reshape(1)
        nd = 1
    if nd > MAX_DIMS:
        raise ValueError(f"ifftshift supports at most {MAX_DIMS} dimensions, got {nd}")
    if dim is None:
        dims = set(range(nd))
    elif isinstance(dim, int):
        dims = {dim % nd}
    else:
        dims = {d % nd for d in dim}
    shape = list(x.shape)
    shifts = [shape[d] // 2 if d in dims else 0 for d in range(nd)]
    pad = MAX_DIMS - nd
    shape = [1] * pad + shape
    shifts = [0] * pad + shifts
    y = torch.empty_like(input)
    if y.numel() == 0:
        return y
    last = shape[-1]
    block_c = max(16, min(1024, triton.next_power_of_2(last)))
    block_r = max(1, 4096 // block_c)
    n_rows = x.numel() // last
    n_col_blocks = triton.cdiv(last, block_c)
    grid = (triton.cdiv(n_rows, block_r) * n_col_blocks,)
    ifftshift_kernel[grid](x, y, n_rows, *shape, *shifts, n_col_blocks, BLOCK_R=block_r, BLOCK_C=block_c)
    return y
