"""torch.export.Dim -> GE symbolic dims: a -1 in the desc, the Dim's name as the dim param, its range.

torch.export names its symbols `s0`, `s77`; the user named them (`Dim("batch", min=1, max=64)`), so the
name is read back from `dynamic_shapes` at the same input and axis. The range comes from the program's
range constraints; an unbounded maximum is -1, as GE writes an unbounded shape range.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch.utils._sympy.numbers import int_oo

from ge_core.frontend.torch.emit import DynamicShapes
from ge_core.ir.tensor import TensorDesc, default_format


def input_desc(n: Any, position: int, program: torch.export.ExportedProgram,
               dynamic_shapes: DynamicShapes) -> tuple[TensorDesc, list[int | str]]:
    """The GE desc and dim params of user input placeholder `n` (the `position`-th user input)."""
    value = n.meta["val"]
    spec = _spec_of(dynamic_shapes, n.name, position)
    shape: list[int] = []
    params: list[int | str] = []
    ranges: list[tuple[int, int]] = []
    for axis, dim in enumerate(value.shape):
        if isinstance(dim, int):
            shape.append(dim)
            params.append(dim)
            ranges.append((dim, dim))
            continue
        shape.append(-1)
        params.append(_dim_name(spec, axis) or str(dim))
        ranges.append(_range(program, dim))
    dtype = str(value.dtype).removeprefix("torch.")
    fmt = default_format(len(shape))
    desc = TensorDesc(tuple(shape), dtype, fmt, origin_shape=tuple(shape), origin_format=fmt,
                      shape_range=tuple(ranges) if -1 in shape else None)
    return desc, params


def _spec_of(dynamic_shapes: DynamicShapes, name: str, position: int) -> Any:
    if dynamic_shapes is None:
        return None
    if isinstance(dynamic_shapes, Mapping):
        return dynamic_shapes.get(name)
    return dynamic_shapes[position] if position < len(dynamic_shapes) else None


def _dim_name(spec: Any, axis: int) -> str | None:
    if isinstance(spec, Mapping):
        dim = spec.get(axis)
    elif isinstance(spec, list | tuple) and axis < len(spec):
        dim = spec[axis]
    else:
        return None
    name = getattr(dim, "__name__", None)
    return str(name) if name else None


def _range(program: torch.export.ExportedProgram, dim: Any) -> tuple[int, int]:
    expr = dim.node.expr
    bounds = program.range_constraints.get(expr)
    if bounds is None:
        return (0, -1)
    low, high = bounds.lower, bounds.upper
    return (int(low), -1 if high == int_oo else int(high))
