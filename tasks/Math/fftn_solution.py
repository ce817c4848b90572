import math

import torch
import triton
import triton.language as tl


@triton.jit
def twiddle_kernel(wr_ptr, wi_ptr, J, S, two_pi_over_s, BLOCK: tl.constexpr):
    # W[j, k] = exp(-2 pi i j k / S), stored as two J x S planes; the angle is reduced exactly through
    # the integer (j k) mod S, taken in (-S/2, S/2]
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < J * S
    j = offs // S
    k = offs % S
    idx = (j * k) % S
    idx = tl.where(2 * idx > S, idx - S, idx)
    angle = idx.to(tl.float32) * two_pi_over_s
    tl.store(wr_ptr + offs, tl.cos(angle), mask=mask)
    tl.store(wi_ptr + offs, -tl.sin(angle), mask=mask)


@triton.jit
def dft_pass_kernel(x_ptr, wr_ptr, wi_ptr, out_ptr, M, C, S, J, sxb, sxj, sxc, scale,
                    REAL_IN: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
                    BLOCK_J: tl.constexpr):
    # One dimension of the transform as a complex matrix product: the input viewed as (B, L, C) with
    # rows m = (b, c), out[b, k, c] = scale * sum_{j < J} x[b, j, c] W[j, k]. x is real (REAL_IN) or
    # interleaved complex; strides are in float elements. The output is contiguous interleaved complex.
    pid_m = tl.program_id(0)
    pid_k = tl.program_id(1)
    m = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    m_ok = m < M
    k_ok = k < S
    b = m // C
    c = m % C
    row = b * sxb + c * sxc
    jj = tl.arange(0, BLOCK_J)
    acc_r = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    acc_i = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    for j0 in range(0, J, BLOCK_J):
        j = j0 + jj
        j_ok = j < J
        x_off = row[:, None] + (j * sxj)[None, :]
        x_mask = m_ok[:, None] & j_ok[None, :]
        w_off = (j * S)[:, None] + k[None, :]
        w_mask = j_ok[:, None] & k_ok[None, :]
        wr = tl.load(wr_ptr + w_off, mask=w_mask, other=0.0)
        wi = tl.load(wi_ptr + w_off, mask=w_mask, other=0.0)
        xr = tl.load(x_ptr + x_off, mask=x_mask, other=0.0)
        acc_r = tl.dot(xr, wr, acc_r, input_precision="ieee")
        acc_i = tl.dot(xr, wi, acc_i, input_precision="ieee")
        if not REAL_IN:
            xi = tl.load(x_ptr + x_off + 1, mask=x_mask, other=0.0)
            acc_r = tl.dot(-xi, wi, acc_r, input_precision="ieee")
            acc_i = tl.dot(xi, wr, acc_i, input_precision="ieee")
    out_off = 2 * ((b * S)[:, None] * C + k.to(tl.int64)[None, :] * C + c[:, None])
    mask = m_ok[:, None] & k_ok[None, :]
    tl.store(out_ptr + out_off, acc_r * scale, mask=mask)
    tl.store(out_ptr + out_off + 1, acc_i * scale, mask=mask)


def _dims_and_lengths(x, s, dim):
    if dim is None:
        dims = list(range(x.dim())) if s is None else list(range(x.dim() - len(s), x.dim()))
    else:
        dims = [d % x.dim() for d in dim]
    if s is None:
        lengths = [x.shape[d] for d in dims]
    else:
        lengths = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    return dims, lengths


def fftn(input, s=None, dim=None, norm=None, out=None):
    dims, lengths = _dims_and_lengths(input, s, dim)
    if not dims:
        raise ValueError("fftn needs at least one dimension to transform")
    total = math.prod(lengths)
    if norm is None or norm == "backward":
        scale = 1.0
    elif norm == "forward":
        scale = 1.0 / total
    elif norm == "ortho":
        scale = 1.0 / math.sqrt(total)
    else:
        raise ValueError(f"norm must be None, 'backward', 'forward' or 'ortho', got {norm!r}")
    real = not input.is_complex()
    x = input.contiguous()
    if not real:
        x = torch.view_as_real(x)  # (..., 2) float32 view of the complex data
    shape = list(input.shape)
    device = input.device
    current = x
    for index, (d, n) in enumerate(zip(dims, lengths)):
        length = shape[d]
        used = min(length, n)  # padding adds zeros (fewer terms), trimming drops the tail
        outer = math.prod(shape[:d])
        inner = math.prod(shape[d + 1:])
        wr = torch.empty((max(used, 1), n), device=device, dtype=torch.float32)
        wi = torch.empty_like(wr)
        block = 1024
        twiddle_kernel[(max(1, triton.cdiv(used * n, block)),)](wr, wi, used, n, 2.0 * math.pi / n, BLOCK=block)
        new_shape = shape[:d] + [n] + shape[d + 1:]
        result = torch.empty(new_shape + [2], device=device, dtype=torch.float32)
        # strides of the (B, L, C) view of the current contiguous tensor, in float elements
        width = 1 if real else 2
        sxc = width
        sxj = inner * width
        sxb = length * inner * width
        rows = outer * inner
        block_m = 64
        block_k = min(64, max(16, triton.next_power_of_2(n)))
        block_j = min(32, max(16, triton.next_power_of_2(used)))
        last = index == len(dims) - 1
        grid = (triton.cdiv(rows, block_m), triton.cdiv(n, block_k))
        dft_pass_kernel[grid](current, wr, wi, result, rows, inner, n, used, sxb, sxj, sxc,
                              scale if last else 1.0, REAL_IN=real, BLOCK_M=block_m, BLOCK_K=block_k,
                              BLOCK_J=block_j, num_warps=4)
        current = result
        shape = new_shape
        real = False
    spectrum = torch.view_as_complex(current)
    if out is not None:
        out.copy_(spectrum)
        return out
    return spectrum
