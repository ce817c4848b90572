# task: Index/index_select
# style: autotuned (several configs, key), tl.program_id(axis=1), triton.cdiv grid lambda, masks with other=, asserts with messages
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_J": 1, "BLOCK_I": 1024}, num_warps=4),
        triton.Config({"BLOCK_J": 4, "BLOCK_I": 256}, num_warps=4),
        triton.Config({"BLOCK_J": 16, "BLOCK_I": 64}, num_warps=4),
        triton.Config({"BLOCK_J": 128, "BLOCK_I": 8}, num_warps=4),
        triton.Config({"BLOCK_J": 512, "BLOCK_I": 1}, num_warps=4),
    ],
    key=["n_idx", "inner"],
)
@triton.jit
def gather_slices_kernel(src_ptr, idx_ptr, dst_ptr, n_idx, dim_size, inner,
                         BLOCK_J: tl.constexpr, BLOCK_I: tl.constexpr):
    # src viewed as (outer, dim_size, inner), dst as (outer, n_idx, inner)
    pid0 = tl.program_id(axis=0)
    pid_i = tl.program_id(axis=1)
    j_blocks = tl.cdiv(n_idx, BLOCK_J)
    outer = pid0 // j_blocks
    jb = pid0 % j_blocks

    j = jb * BLOCK_J + tl.arange(0, BLOCK_J)
    i = pid_i * BLOCK_I + tl.arange(0, BLOCK_I)
    j_ok = j < n_idx
    i_ok = i < inner
    rows = tl.load(idx_ptr + j, mask=j_ok, other=0)

    outer64 = outer.to(tl.int64)
    src = src_ptr + (outer64 * dim_size + rows[:, None]) * inner + i[None, :]
    dst = dst_ptr + (outer64 * n_idx + j[:, None]) * inner + i[None, :]
    both = j_ok[:, None] & i_ok[None, :]
    tl.store(dst, tl.load(src, mask=both, other=0), mask=both)


def index_select(input, dim, index):
    assert index.dim() <= 1, "index must be a 1-D tensor"
    assert not index.is_floating_point(), "index must hold integers"
    nd = input.dim()
    dim = dim + nd if dim < 0 else dim
    assert 0 <= dim < max(nd, 1), f"dim {dim} out of range for a {nd}-D input"

    src = input.contiguous()
    idx = index.reshape(-1)
    n_idx = idx.numel()
    dim_size = src.shape[dim] if nd else 1
    outer = 1
    for s in src.shape[:dim]:
        outer *= s
    inner = 1
    for s in src.shape[dim + 1:]:
        inner *= s

    out_shape = list(src.shape)
    if nd:
        out_shape[dim] = n_idx
    out = torch.empty(out_shape, device=input.device, dtype=input.dtype)
    if out.numel() == 0:
        return out

    grid = lambda meta: (outer * triton.cdiv(n_idx, meta["BLOCK_J"]), triton.cdiv(inner, meta["BLOCK_I"]))
    gather_slices_kernel[grid](src, idx, out, n_idx, dim_size, inner)
    return out
