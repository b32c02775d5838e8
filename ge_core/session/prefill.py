"""Sizes to prefill for a model's symbolic dims, that its shapes take.

    spec = prefill_spec(graph)   # "x:1,3,32,224" for x: [batch, 3, 32, width] behind a 3x3 AveragePool

1 for every symbolic dim is refused by many real models (a pooling kernel or an STFT frame longer than the
input). So: a batch-like dim (axis 0) is 1; the others take a typical size first (224 for an image's height
and width, 128 for a sequence), then, if the model refuses that, the smallest of SIZES its shapes take
(shape inference only: nothing runs). The user edits the result; it is a start that imports.
"""

from __future__ import annotations

import re

from ge_core.frontend.input_shapes import InputShapes
from ge_core.ir.graph import Graph
from ge_core.session.shapes import takes_shapes

SIZES = (1, 8, 16, 32, 64, 128, 224, 256, 512, 640, 1024)  # tried in order, all varying dims at once
IMAGE_SIZE, SEQUENCE_SIZE = 224, 128
SEQUENCE_NAMES = re.compile(r"seq|len|token|sentence|word|step|time", re.IGNORECASE)


def prefill_spec(graph: Graph) -> str:
    """An ATC-style spec ("x:1,3,224,224") for the inputs with symbolic dims: sizes the model's shapes take
    when any do ("" when no input has a symbolic dim)."""
    symbolic = {n: p for n, p in graph.input_dim_params.items() if any(isinstance(d, str) for d in p)}
    if not symbolic:
        return ""
    typical = {d: _typical(d, axis, len(dims)) for dims in symbolic.values()
               for axis, d in enumerate(dims) if isinstance(d, str)}
    batch = {d for dims in symbolic.values() if dims and isinstance(dims[0], str) for d in dims[:1]}
    candidates = [typical, *({d: 1 if d in batch else size for d in typical} for size in SIZES)]
    for sizes in candidates:
        shapes = _shapes(symbolic, sizes)
        if takes_shapes(graph, shapes):
            return _spec(shapes)
    return _spec(_shapes(symbolic, typical))


def _typical(name: str, axis: int, rank: int) -> int:
    if axis == 0:
        return 1  # batch
    if rank == 4 and axis >= 2:
        return IMAGE_SIZE  # NCHW height and width
    return SEQUENCE_SIZE if SEQUENCE_NAMES.search(name) else 1


def _shapes(symbolic: dict[str, tuple[int | str, ...]], sizes: dict[str, int]) -> InputShapes:
    return {n: tuple(sizes[d] if isinstance(d, str) else int(d) for d in dims) for n, dims in symbolic.items()}


def _spec(shapes: InputShapes) -> str:
    return ";".join(f"{n}:{','.join(map(str, dims))}" for n, dims in shapes.items())
