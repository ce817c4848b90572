import torch
import triton
import triton.language as tl

MAX_DIMS = 4


@triton.jit
def mul_flat_kernel(a_ptr, b_ptr, y_ptr, scalar, n, B_SCALAR: tl.constexpr, BLOCK: tl.constexpr):
    # both operands contiguous with the output's shape, or `other` a host scalar
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    if B_SCALAR:
        b = scalar
    else:
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offsets, (a * b).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def mul_broadcast_kernel(a_ptr, b_ptr, y_ptr, n_rows, s1, s2, s3,
                         sa0, sa1, sa2, sa3, sb0, sb1, sb2, sb3,
                         n_col_blocks, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # Output shape (s0, s1, s2, s3), contiguous; operand strides are 0 along broadcast dimensions.
    # A program handles BLOCK_R rows (flattened leading dimensions) x BLOCK_C of the last one.
    pid = tl.program_id(0).to(tl.int64)
    rb = pid // n_col_blocks
    cb = pid % n_col_blocks
    rows = rb * BLOCK_R + tl.arange(0, BLOCK_R).to(tl.int64)
    i2 = rows % s2
    r = rows // s2
    i1 = r % s1
    i0 = r // s1
    cols = cb * BLOCK_C + tl.arange(0, BLOCK_C).to(tl.int64)
    mask = (rows < n_rows)[:, None] & (cols < s3)[None, :]
    a_off = (i0 * sa0 + i1 * sa1 + i2 * sa2)[:, None] + (cols * sa3)[None, :]
    b_off = (i0 * sb0 + i1 * sb1 + i2 * sb2)[:, None] + (cols * sb3)[None, :]
    a = tl.load(a_ptr + a_off, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + b_off, mask=mask, other=0.0).to(tl.float32)
    y_off = (rows * s3)[:, None] + cols[None, :]
    tl.store(y_ptr + y_off, (a * b).to(y_ptr.dtype.element_ty), mask=mask)


def mul(input, other, out=None):
    out_dtype = torch.result_type(input, other)
    if not isinstance(other, torch.Tensor):
        x = input.contiguous()
        y = torch.empty(x.shape, dtype=out_dtype, device=x.device)
        n = x.numel()
        if n:
            mul_flat_kernel[(triton.cdiv(n, 1024),)](x, x, y, float(other), n, B_SCALAR=True, BLOCK=1024)
    else:
        shape = torch.broadcast_shapes(input.shape, other.shape)
        y = torch.empty(shape, dtype=out_dtype, device=input.device)
        n = y.numel()
        if n and tuple(input.shape) == tuple(shape) and tuple(other.shape) == tuple(shape) \
                and input.is_contiguous() and other.is_contiguous():
            mul_flat_kernel[(triton.cdiv(n, 1024),)](input, other, y, 0.0, n, B_SCALAR=False, BLOCK=1024)
        elif n:
            if len(shape) > MAX_DIMS:
                raise ValueError(f"mul supports at most {MAX_DIMS} dimensions")
            full = [1] * (MAX_DIMS - len(shape)) + list(shape)
            # leading size-1 dimensions, then expand: stride 0 along every broadcast dimension
            a = input.reshape([1] * (MAX_DIMS - input.dim()) + list(input.shape)).expand(full)
            b = other.reshape([1] * (MAX_DIMS - other.dim()) + list(other.shape)).expand(full)
            last = full[-1]
            block_c = max(16, min(1024, triton.next_power_of_2(last)))
            block_r = max(1, 4096 // block_c)
            n_rows = n // last
            n_col_blocks = triton.cdiv(last, block_c)
            grid = (triton.cdiv(n_rows, block_r) * n_col_blocks,)
            mul_broadcast_kernel[grid](a, b, y, n_rows, full[1], full[2], full[3], *a.stride(), *b.stride(),
                                       n_col_blocks, BLOCK_R=block_r, BLOCK_C=block_c)
    if out is not None:
        out.copy_(y)
        return out
    return y
