# task: Index/index_fill_
# style: KernelBench-X calling convention (dimension first, in place), KernelBench-X test harness after its separator line
import torch
import triton
import triton.language as tl


@triton.jit
def index_fill_kernel(x_ptr, index_ptr, n_index, outer, size_dim, inner, value, BLOCK: tl.constexpr):
    # one program per (outer row, named index): fills that slice's inner run
    pid_outer = tl.program_id(0)
    pid_index = tl.program_id(1)
    i = tl.load(index_ptr + pid_index)
    base = (pid_outer.to(tl.int64) * size_dim + i) * inner
    for start in range(0, inner, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < inner
        fill = tl.full((BLOCK,), value, dtype=x_ptr.dtype.element_ty)
        tl.store(x_ptr + base + offs, fill, mask=mask)


def index_fill_(dim, x, index, value):
    dim = dim % x.dim()
    work = x if x.is_contiguous() else x.contiguous()
    outer = 1
    for s in x.shape[:dim]:
        outer *= s
    inner = 1
    for s in x.shape[dim + 1:]:
        inner *= s
    n_index = index.numel()
    if outer > 0 and inner > 0 and n_index > 0:
        grid = (outer, n_index)
        index_fill_kernel[grid](work, index, n_index, outer, x.shape[dim], inner, value, BLOCK=256)
    if work is not x:
        x.copy_(work)
    return x

##################################################################################################################################################


import torch


def test_index_fill_():
    results = {}
    x1 = torch.zeros((3, 3), device='cuda')
    results["test_case_1"] = index_fill_(0, x1, torch.tensor([0, 2], device='cuda'), 5).cpu()
    return results


test_results = test_index_fill_()
