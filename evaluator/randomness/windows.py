"""Where the independence tests look: windows of consecutive elements and their correlations, far lags, blocks."""

from __future__ import annotations

from typing import Sequence

import torch

from evaluator.randomness.limits import BLOCKS, PAIR_SAMPLE, WINDOW, WINDOW_SAMPLE
from evaluator.randomness.sampling import row_strides, spread_indices


def window_positions(n: int, device: torch.device) -> torch.Tensor:
    """Positions (windows, width) of windows of consecutive elements spread evenly over range(n)."""
    width = min(WINDOW, n)
    count = max(1, min(WINDOW_SAMPLE // width, n // width))
    starts = (torch.arange(count, dtype=torch.int64, device=device) * (n - width) // max(count - 1, 1))
    return starts[:, None] + torch.arange(width, dtype=torch.int64, device=device)


def padded_spectrum(a: torch.Tensor) -> torch.Tensor:
    """Real FFT of each row, zero-padded so that correlations below the row length do not wrap."""
    return torch.fft.rfft(a, n=1 << (2 * a.shape[-1] - 1).bit_length())


def cross(fa: torch.Tensor, fb: torch.Tensor) -> torch.Tensor:
    """From two `padded_spectrum`s of rows of length w: the sum over rows and i of a[i] * b[i + k], at index
    k for lags 0 <= k < w and at index -k (from the end) for negative lags."""
    return torch.fft.irfft(fa.conj() * fb, n=2 * (fa.shape[-1] - 1)).sum(0)


def correlate(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """`cross` of two sets of rows."""
    return cross(padded_spectrum(a), padded_spectrum(b))


def window_lags(width: int, both_signs: bool) -> list[int]:
    top = width // 2
    return list(range(-top, top + 1)) if both_signs else list(range(1, top + 1))


def far_lags(n: int, shape: Sequence[int], start: int = 1) -> list[int]:
    """Distances at which blocks, rows, planes or parts of the output may be tied to each other:
    powers of two from `start`, the strides of every dimension, and the half, third and quarter of
    the output (rounded down and up)."""
    lags = set()
    k = 1
    while k < n:
        if k >= start:
            lags.add(k)
        k *= 2
    lags.update(row_strides(shape))
    for parts in (2, 3, 4):
        lags.update((n // parts, -(-n // parts)))
    return sorted(k for k in lags if 0 < k < n and k >= start)


def pair_starts(n: int, lag: int, device: torch.device) -> torch.Tensor:
    """Up to PAIR_SAMPLE starts i of pairs (i, i + lag) that share no element: i in the even blocks
    of `lag` positions."""
    full = n // (2 * lag)
    count = full * lag + max(0, min(lag, n - 2 * lag * full - lag))
    j = spread_indices(PAIR_SAMPLE, count, device)
    return (j // lag) * (2 * lag) + j % lag


def block_sizes(n: int, shape: Sequence[int], min_blocks: int) -> list[int]:
    """The block lengths of BLOCKS and the row length (when at least 16) that cut `n` elements into
    at least `min_blocks` blocks."""
    sizes = set(BLOCKS)
    if len(shape) > 1 and shape[-1] >= 16:
        sizes.add(int(shape[-1]))
    return sorted(b for b in sizes if n // b >= min_blocks)


def block_sums(x: torch.Tensor, size: int) -> torch.Tensor:
    count = x.numel() // size
    return x[:count * size].reshape(count, size).sum(1)
