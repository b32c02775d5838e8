"""Dynamic shapes: a graph with unknown input dims is run as a copy fixed to the fed shapes.

The copy's descs are re-inferred (sizes checked), so every kernel's output is checked against concrete
shapes, as it is in a static graph. A few recent shapes are kept, like a small gear set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Generic, TypeVar

import numpy as np

from ge_core.errors import ModelError
from ge_core.ir.graph import Graph
from ge_core.ops import infer_graph
from ge_core.ops.registry import OpRegistry

T = TypeVar("T")
ShapeKey = tuple[tuple[int, ...], ...]


def is_dynamic(graph: Graph) -> bool:
    """Some input has an unknown dim: the graph runs specialised to the fed shapes."""
    return any(not graph.desc(t).is_static for t in graph.inputs)


def specialise(graph: Graph, feeds: Mapping[str, np.ndarray], registry: OpRegistry) -> Graph:
    """A copy of `graph` with its inputs fixed to the fed shapes and every desc inferred again."""
    fixed = graph.copy()
    for t in fixed.inputs:
        fixed.set_desc(t, fixed.desc(t).with_shape(feeds[t].shape))
    result = infer_graph(fixed, registry)
    if result.problems:
        shapes = ", ".join(f"{t}:{list(feeds[t].shape)}" for t in fixed.inputs)
        raise ModelError(f"graph '{fixed.name}' cannot run with input shapes {shapes}:",
                         problems=result.problems, hint="Feed shapes the model accepts.")
    return fixed


class Specialisations(Generic[T]):
    """What was built for one graph's recent input shapes (an interpreter, a plan), oldest dropped first.

    It holds no reference to the graph (callers pass it), so a cache keyed weakly by the graph can hold it."""

    def __init__(self, registry: OpRegistry, limit: int = 8) -> None:
        self.registry = registry
        self.limit = limit
        self._built: dict[ShapeKey, T] = {}

    def get(self, graph: Graph, feeds: Mapping[str, np.ndarray], build: Callable[[Graph], T]) -> T:
        """What `build` made of `graph` specialised to the shapes of `feeds` (made now if not kept)."""
        key = tuple(feeds[t].shape for t in graph.inputs)
        if key not in self._built:
            made = build(specialise(graph, feeds, self.registry))
            if len(self._built) >= self.limit:
                self._built.pop(next(iter(self._built)))
            self._built[key] = made
        return self._built[key]
