"""Tiling a cube op: which cores take which blocks of C, and how each core walks them through L1 and L0.

1. Multi-core split (block dim): C's fractal blocks (batch x ceil(M/16) x ceil(N/16)) are cut into
   bb x bm x bn parts, bb*bm*bn <= cores, choosing the cut whose busiest core finishes first (the larger
   of its cube cycles and its operand loads). K is never split across cores (no cross-core reduction).
2. L0 tile (m0, k0, n0), multiples of 16: A's m0 x k0 block in L0A, B's k0 x n0 in L0B and the fp32
   accumulator m0 x n0 in L0C, each double-buffered (2 x the block must fit, aligned). Among the tiles
   that fit, the one moving the fewest bytes L1 -> L0 (A is re-sent for every n0 column, B for every m0 row).
3. L1 tile (m1, K, n1): panels of A and B held in L1 (double-buffered). When a core's whole A and B fit,
   each is loaded from global memory once; otherwise A is re-loaded once per B panel and B once per A
   panel, and the split minimising those loads wins. K is streamed in k1 chunks when a panel of full K
   does not fit.

Everything here is integer arithmetic on a few candidates per op: the simulator tiles every op of a
model in well under a millisecond.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ge_core.hardware.gemm import FRACTAL, Gemm
from ge_core.hardware.profile import HardwareProfile

_SIDES = (16, 32, 64, 128, 256, 512)
ACC_BYTES = 4  # L0C accumulates in fp32


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def round_up(a: int, b: int) -> int:
    return ceil_div(a, b) * b


@dataclass(frozen=True)
class CubeTiling:
    block_dim: int
    split: tuple[int, int, int]  # cores along (batch, M, N)
    core: tuple[int, int, int, int]  # the busiest core's (batch, M, K, N)
    l0: tuple[int, int, int]  # (m0, k0, n0)
    l1: tuple[int, int, int]  # (m1, k1, n1)
    fractals: int  # 16x16x16 steps on the busiest core
    tiles_per_core: int  # L0 blocks of C (m0 x n0) per core, each a pipeline step
    mte2_bytes: int  # A and B loaded from global memory by the busiest core (re-loads included)
    mte1_a_bytes: int  # L1 -> L0A on the busiest core (a conv's im2col expansion included)
    mte1_b_bytes: int  # L1 -> L0B
    out_bytes: int  # C written by the busiest core (FixPipe out of L0C)
    buffer_bytes: dict[str, int]  # per core, double-buffered, aligned


@functools.lru_cache(maxsize=4096)  # models repeat shapes (layers, blocks): tile each shape once
def tile_cube(g: Gemm, p: HardwareProfile, in_bytes: int, out_bytes: int) -> CubeTiling:
    """The tiling of one GEMM on profile `p`, operands of `in_bytes` per element, C of `out_bytes`."""
    mb, nb = ceil_div(g.m, FRACTAL), ceil_div(g.n, FRACTAL)
    bb, bm, bn = _split(g, p, mb, nb, in_bytes)
    batch_c = ceil_div(g.batch, bb)
    m_c, n_c = min(g.m, ceil_div(mb, bm) * FRACTAL), min(g.n, ceil_div(nb, bn) * FRACTAL)
    m0, k0, n0 = _l0_tile(m_c, g.k, n_c, p, in_bytes)
    a_batch, b_batch = g.per_batch()
    a_core = a_batch * m_c // max(g.m, 1)  # the A rows of one batch this core reads, as stored
    b_core = b_batch * n_c // max(g.n, 1)
    m1, k1, n1, loads = _l1_tile(a_core, b_core, m_c, g.k, n_c, (m0, n0), p, in_bytes)
    mp, kp, np_ = round_up(m_c, FRACTAL), round_up(g.k, FRACTAL), round_up(n_c, FRACTAL)
    tiles = ceil_div(m_c, m0) * ceil_div(n_c, n0) * ceil_div(g.k, k0)
    al = p.alignment
    buffers = {"l0a": 2 * round_up(m0 * k0 * in_bytes, al.l0a), "l0b": 2 * round_up(k0 * n0 * in_bytes, al.l0b),
               "l0c": 2 * round_up(m0 * n0 * ACC_BYTES, al.l0c),
               "l1": 2 * (round_up(a_core * m1 // max(m_c, 1) * k1 // max(g.k, 1), al.l1)
                          + round_up(b_core * n1 // max(n_c, 1) * k1 // max(g.k, 1), al.l1))}
    return CubeTiling(
        block_dim=bb * bm * bn, split=(bb, bm, bn), core=(batch_c, m_c, g.k, n_c), l0=(m0, k0, n0), l1=(m1, k1, n1),
        fractals=batch_c * (mp // FRACTAL) * (kp // FRACTAL) * (np_ // FRACTAL), tiles_per_core=batch_c * tiles,
        mte2_bytes=batch_c * loads, mte1_a_bytes=batch_c * ceil_div(n_c, n0) * mp * kp * in_bytes,
        mte1_b_bytes=batch_c * ceil_div(m_c, m0) * kp * np_ * in_bytes, out_bytes=batch_c * m_c * n_c * out_bytes,
        buffer_bytes=buffers)


def _steps(limit: int) -> list[int]:
    """1, 2, 4, ... up to limit, and limit itself: the core counts worth trying along one axis."""
    out, v = [], 1
    while v < limit:
        out.append(v)
        v *= 2
    return [*out, limit]


def _split(g: Gemm, p: HardwareProfile, mb: int, nb: int, in_bytes: int) -> tuple[int, int, int]:
    """Cores along (batch, M blocks, N blocks): the cut whose busiest core has the least work."""
    cores = p.ai_cores
    best: tuple[float, int, int, int] | None = None
    kb = ceil_div(g.k, FRACTAL)
    for bb in _steps(min(g.batch, cores)):
        for bm in _steps(min(mb, cores // bb)):
            bn = min(nb, cores // (bb * bm))
            cube = ceil_div(g.batch, bb) * ceil_div(mb, bm) * ceil_div(nb, bn) * kb
            loads = ceil_div(g.batch, bb) * (ceil_div(mb, bm) * FRACTAL * g.k + ceil_div(nb, bn) * FRACTAL * g.k)
            cost = max(cube, loads * in_bytes / p.bandwidth.l2_read)
            if best is None or cost < best[0]:
                best = (cost, bb, bm, bn)
    assert best is not None
    return best[1], best[2], best[3]


def _l0_tile(m: int, k: int, n: int, p: HardwareProfile, in_bytes: int) -> tuple[int, int, int]:
    """(m0, k0, n0): double-buffered blocks fitting L0A/L0B/L0C, moving the fewest bytes L1 -> L0."""
    b, al = p.buffers, p.alignment
    mp, kp, np_ = round_up(m, FRACTAL), round_up(k, FRACTAL), round_up(n, FRACTAL)
    best: tuple[float, int, int, int, int] | None = None
    for m0 in [s for s in _SIDES if s < mp] + [min(mp, _SIDES[-1])]:
        for n0 in [s for s in _SIDES if s < np_] + [min(np_, _SIDES[-1])]:
            if 2 * round_up(m0 * n0 * ACC_BYTES, al.l0c) > b.l0c:
                continue
            k0 = min(kp, _fit_k(b.l0a, m0, in_bytes, al.l0a), _fit_k(b.l0b, n0, in_bytes, al.l0b))
            if k0 < FRACTAL:
                continue
            moved = (ceil_div(n, n0) * mp * kp / p.bandwidth.l1_to_l0a
                     + ceil_div(m, m0) * kp * np_ / p.bandwidth.l1_to_l0b)
            key = (moved, -m0 * n0, m0, k0, n0)
            if best is None or key < best:
                best = key
    assert best is not None, "the profile check guarantees one 16x16x16 block fits"
    return best[2], best[3], best[4]


def _fit_k(buffer: int, side: int, in_bytes: int, align: int) -> int:
    """The largest k0 (a multiple of 16) with 2 x side x k0 elements fitting `buffer`."""
    k = (buffer // 2 // max(side * in_bytes, 1)) // FRACTAL * FRACTAL
    while k >= FRACTAL and 2 * round_up(side * k * in_bytes, align) > buffer:
        k -= FRACTAL
    return k


def _l1_tile(a: int, b: int, m: int, k: int, n: int, l0: tuple[int, int], p: HardwareProfile,
             in_bytes: int) -> tuple[int, int, int, int]:
    """(m1, k1, n1, bytes loaded from global memory per batch) for a core's A (a bytes) and B (b bytes)."""
    half = p.buffers.l1 // 2  # double-buffered
    if a + b <= half:
        return m, k, n, a + b
    m0, n0 = l0
    best: tuple[int, int, int, int] | None = None
    for m1 in sorted({min(m, m0 * f) for f in (1, 2, 4, 8, 16, 32, 64)}):
        a_panel = a * m1 // max(m, 1)
        room = half - a_panel
        if room <= 0:
            break
        n1 = min(n, max(n0, (room * n // max(b, 1)) // n0 * n0))
        loads = a * ceil_div(n, n1) + b * ceil_div(m, m1)
        if best is None or loads < best[0]:
            best = (loads, m1, n1, 0)
    if best is None:  # not even one row panel of full K fits: stream K in chunks, smallest panels
        best = (a * ceil_div(n, n0) + b * ceil_div(m, m0), m0, n0, 0)
    loads, m1, n1, _ = best
    panel = (a * m1 // max(m, 1) + b * n1 // max(n, 1)) or 1
    k1 = k if panel <= half else max(FRACTAL, round_up(k * half // panel, FRACTAL) - FRACTAL)
    return m1, min(k1, k), n1, loads
