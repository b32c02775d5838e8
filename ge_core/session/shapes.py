"""Input shapes with unknown and ranged dims, as GE's ge.inputShape / ATC's --input_shape write them
("input_ids:1,-1;mask:1,1~512"; the one parser of that text is ge_core.frontend.input_shapes).

`reshape_inputs` gives a copy of a graph whose inputs have other sizes for their symbolic or unknown dims,
with every tensor's desc inferred again; the model's fixed dims can never change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from ge_core.errors import GEError, ModelError, UsageError, quote
from ge_core.frontend.input_shapes import Dim, DimRange, InputShapes, ShapeSpec, format_input_shapes, parse_shape_spec
from ge_core.ir.graph import Graph
from ge_core.ops import REGISTRY, infer_graph


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
            spec_text = format_input_shapes({name: dims})
            return f"input {quote(name)} has rank {len(got)} ({list(got)}), the spec {spec_text}"
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
        raise ModelError(f"graph {quote(graph.name)} does not take inputs {format_input_shapes(dict(shapes))}:",
                         problems=inferred.problems, hint="Use sizes the model supports.")
    return reshaped


# The spec's types and parser live with the one parser of its text (ge_core.frontend.input_shapes).
__all__ = ["Dim", "DimRange", "ShapeSpec", "feed_shapes", "fill", "is_static", "outside", "parse_shape_spec",
           "reshape_inputs", "shapes_text", "unknown_dims"]


def takes_shapes(graph: Graph, shapes: InputShapes) -> bool:
    """Whether shape inference accepts `shapes` for the graph's inputs (a refusal is an answer, not an error)."""
    try:
        reshape_inputs(graph, shapes)
    except GEError:
        return False
    return True
