"""Tiling a vector kernel: its elements split over the cores, then walked in UB-sized tiles.

Every tensor the kernel touches needs a UB buffer of one tile (a tensor smaller than a tile, such as a
per-channel bias, only its own size), 32-byte aligned and doubled for double buffering; the tile T is the
largest that fits the UB. A reduce needs whole reduction slabs on chip, so its tile is a multiple of the
slab and the cores split the work by slabs. UB-fused groups use UB fusion's own working-set model
(ge_core/passes/ub_working_set.py), sized for the profile's UB.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from ge_core.hardware.cube_tiling import ceil_div, round_up
from ge_core.hardware.profile import HardwareProfile
from ge_core.hardware.ub_working_set import WorkingSet, working_set
from ge_core.ir.graph import Graph


@dataclass(frozen=True)
class VectorTiling:
    block_dim: int
    elements: int  # elements the kernel walks (its largest tensor)
    elements_per_core: int  # on the busiest core
    tile: int  # elements per UB tile
    tiles_per_core: int
    ub_bytes: int  # the working set at that tile, double-buffered
    slab: int  # the smallest unit of work: one reduction slab, or one 32-byte block


def tile_vector(elements: int, per_element: float, fixed: int, buffers: int, slab: int, cores: int,
                p: HardwareProfile) -> VectorTiling:
    """Tile `elements` whose full-size buffers cost `per_element` bytes per element and whose small
    buffers cost `fixed` bytes in total (`buffers` buffers in all, each aligned)."""
    align = p.alignment.ub
    room = p.buffers.ub // 2 - fixed - buffers * align
    tile = max(int(room // max(per_element, 1e-9)), 1)
    tile = max(slab, tile // slab * slab)  # whole slabs, at least one (a slab too big for UB still runs)
    units = max(ceil_div(elements, slab), 1)
    block_dim = min(cores, units)
    per_core = min(elements, ceil_div(units, block_dim) * slab)
    tile = min(tile, max(per_core, 1))
    used = 2 * (round_up(int(tile * per_element), align) + fixed + buffers * align)
    return VectorTiling(block_dim, elements, per_core, tile, ceil_div(per_core, tile), min(used, p.buffers.ub), slab)


# Per fused body: its working-set model, and the best tile per UB size (bodies never change once built).
_GROUP_MODELS: weakref.WeakKeyDictionary[Graph, tuple[object, dict[int, int]]] = weakref.WeakKeyDictionary()


def forget_groups() -> None:
    """Forget the working-set models and tiles of fused bodies (see tiling.forget_tilings)."""
    _GROUP_MODELS.clear()


def tile_group(body: Graph, elements: int, cores: int, p: HardwareProfile) -> VectorTiling | None:
    """The tiling of a UB-fused group (its body), from UB fusion's working-set model; None if unknown."""
    cached = _GROUP_MODELS.get(body)
    if cached is None:
        cached = _GROUP_MODELS[body] = (working_set(body, list(body.nodes)), {})
    model, tiles = cached
    if not isinstance(model, WorkingSet):
        return None
    if p.buffers.ub not in tiles:  # does not fit this UB: the minimum tile (it spills)
        tiles[p.buffers.ub] = model.best_tile(p.buffers.ub) or model.min_tile
    tile = tiles[p.buffers.ub]
    slab = max(model.min_tile, 1)
    units = max(ceil_div(elements, slab), 1)
    block_dim = min(cores, units)
    per_core = min(elements, ceil_div(units, block_dim) * slab)
    tile = max(1, min(tile, per_core))
    return VectorTiling(block_dim, elements, per_core, tile, ceil_div(per_core, tile), model.bytes_at(tile), slab)
