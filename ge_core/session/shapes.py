"""Input shapes with unknown and ranged dims, as GE's ge.inputShape / ATC's --input_shape write them.

    "input_ids:1,-1;mask:1,-1"        -1: an unknown dim (set by a gear, or any size when running)
    "input_ids:1,1~512;mask:1,1~512"  lo~hi: a dim range (lo~-1: no upper bound)

`reshape_inputs` gives a copy of a graph whose inputs have other sizes for their symbolic or unknown dims,
with every tensor's desc inferred again; the model's fixed dims can never change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ge_core.errors import ModelError, UsageError, quote
from ge_core.frontend.input_shapes import InputShapes, format_input_shapes
from ge_core.ir.graph import Graph
from ge_core.ops import REGISTRY, infer_graph


@dataclass(frozen=True)
class DimRange:
    """A dim of any size from `low` to `high` (None: no upper bound). -1 is DimRange(1, None)."""

    low: int = 1
    high: int | None = None

    def __contains__(self, size: object) -> bool:
        return isinstance(size, int) and size >= self.low and (self.high is None or size <= self.high)

    def __str__(self) -> str:
        if self.low == 1 and self.high is None:
            return "-1"
        return f"{self.low}~{-1 if self.high is None else self.high}"


Dim = int | DimRange
ShapeSpec = dict[str, tuple[Dim, ...]]  # input name -> dims, in the order the spec wrote them


def parse_shape_spec(spec: str, option: str = "ge.inputShape") -> ShapeSpec:
    """`name:d0,d1;name2:d0` where each dim is an int, -1 or lo~hi. Errors name `option` and the dim."""
    shapes: ShapeSpec = {}
    for part in (p.strip() for p in str(spec).split(";")):
        if not part:
            continue
        name, sep, dims = part.rpartition(":")
        if not sep or not name:
            raise UsageError(f"{option}: {quote(part)} is not NAME:D0,D1,...",
                             hint='Example: "input_ids:1,-1;mask:1,-1", or a range "input_ids:1,1~512".')
        if name in shapes:
            raise UsageError(f"{option}: input {quote(name)} is given twice.")
        shapes[name] = tuple(_dim(name, d.strip(), option) for d in dims.split(",")) if dims.strip() else ()
    return shapes


def _dim(name: str, text: str, option: str) -> Dim:
    low_text, tilde, high_text = text.partition("~")
    try:
        low = int(low_text)
        high = int(high_text) if tilde else None
    except ValueError:
        raise UsageError(f"{option}: input {quote(name)} has dim {quote(text)}, which is not an integer, -1 "
                         "or a range LOW~HIGH.") from None
    if not tilde:
        if low == -1:
            return DimRange()
        if low < 0:
            raise UsageError(f"{option}: input {quote(name)} has dim {low}; dims are >= 0, or -1 for unknown.")
        return low
    if low < 1 or (high is not None and high != -1 and high < low):
        raise UsageError(f"{option}: input {quote(name)} has range {quote(text)}; write LOW~HIGH with "
                         "1 <= LOW <= HIGH (HIGH -1: no upper bound).")
    return DimRange(low, None if high == -1 else high)


def format_shape_spec(spec: Mapping[str, Sequence[Dim]]) -> str:
    return ";".join(f"{name}:{','.join(str(d) for d in dims)}" for name, dims in spec.items())


def is_static(spec: ShapeSpec) -> bool:
    return all(isinstance(d, int) for dims in spec.values() for d in dims)


def unknown_dims(spec: ShapeSpec) -> list[tuple[str, int]]:
    """(input, axis) of every dim that is not fixed, in the spec's order (the order gears fill them)."""
    return [(name, axis) for name, dims in spec.items() for axis, d in enumerate(dims) if isinstance(d, DimRange)]


def fill(spec: ShapeSpec, values: Sequence[int]) -> InputShapes:
    """The spec's unknown dims set to `values`, in unknown_dims order (one gear)."""
    sizes = iter(values)
    return {name: tuple(d if isinstance(d, int) else next(sizes) for d in dims) for name, dims in spec.items()}


def outside(spec: ShapeSpec, shapes: Mapping[str, tuple[int, ...]]) -> str | None:
    """Why `shapes` (a run's feeds) do not fit `spec`, or None when they do."""
    for name, dims in spec.items():
        got = shapes.get(name)
        if got is None:
            return f"input {quote(name)} is not fed"
        if len(got) != len(dims):
            return f"input {quote(name)} has rank {len(got)} ({list(got)}), the spec {format_shape_spec({name: dims})}"
        for axis, (want, size) in enumerate(zip(dims, got, strict=True)):
            if size != want if isinstance(want, int) else size not in want:
                return f"input {quote(name)} has {size} at axis {axis}, outside {want} ({list(got)})"
    return None


def feed_shapes(feeds: Mapping[str, object]) -> InputShapes:
    return {name: tuple(int(d) for d in np.asarray(value).shape) for name, value in feeds.items()}


def shapes_text(shapes: Mapping[str, Sequence[int]]) -> str:
    return format_input_shapes(shapes)


def reshape_inputs(graph: Graph, shapes: Mapping[str, Sequence[Dim]]) -> Graph:
    """A copy of `graph` whose inputs have `shapes` (inputs left out keep theirs), every desc inferred again;
    a DimRange dim becomes -1 with its range in the desc (a graph compiled once for the range). Only the
    model's symbolic or unknown dims may change: a fixed dim that differs is refused."""
    unknown = sorted(set(shapes) - set(graph.inputs))
    if unknown:
        raise UsageError(f"shapes name {', '.join(quote(u) for u in unknown)}, which are not inputs of the graph.",
                         hint=f"The graph's inputs are: {', '.join(graph.inputs) or '(none)'}.")
    reshaped = graph.copy()
    for name, dims in shapes.items():
        desc = reshaped.desc(name)
        params = graph.input_dim_params.get(name) or desc.shape
        if len(params) != len(dims):
            raise UsageError(f"input {quote(name)} has rank {len(params)} {list(params)}, "
                             f"not {len(dims)} {[str(d) for d in dims]}.")
        for axis, (param, size) in enumerate(zip(params, dims, strict=True)):
            if isinstance(param, int) and param >= 0 and param != size:  # a DimRange never equals an int
                raise UsageError(f"input {quote(name)} has a fixed dim {param} at axis {axis}, not {size}.",
                                 hint="Only symbolic or unknown (-1) dims can take other sizes.")
        sizes = tuple(-1 if isinstance(d, DimRange) else int(d) for d in dims)
        ranges = tuple((d.low, -1 if d.high is None else d.high) if isinstance(d, DimRange) else (d, d) for d in dims)
        dynamic = any(isinstance(d, DimRange) for d in dims)  # GE keeps a range per dim of a dynamic input
        reshaped.set_desc(name, replace(desc, shape=sizes, origin_shape=sizes, shape_range=ranges if dynamic else None))
    inferred = infer_graph(reshaped, REGISTRY)
    if inferred.problems:
        raise ModelError(f"graph {quote(graph.name)} does not take inputs {format_shape_spec(dict(shapes))}:",
                         problems=inferred.problems, hint="Use sizes the model supports.")
    return reshaped
