"""Operators: one file per family, each listing its OpDefs in `OPS`; REGISTRY holds them all.

REGISTRY is also the shape checker of `graph.verify(REGISTRY)`.
"""

from ge_core.ops import (
    activation,
    conv,
    indexing,
    logic,
    makers,
    math,
    matmul,
    movement,
    norm,
    pad,
    pool,
    reduce,
    resize,
    shape_ops,
    transdata,
)
from ge_core.ops.infer import infer_graph
from ge_core.ops.registry import Category, Cost, NpuLayout, OpDef, Operand, OpRegistry, Unit, VectorClass

FAMILIES = (activation, math, logic, conv, pool, norm, matmul, reduce, shape_ops, makers, movement, pad, indexing,
            resize, transdata)

REGISTRY = OpRegistry()
for _family in FAMILIES:
    REGISTRY.register_all(_family.OPS)

__all__ = ["REGISTRY", "Category", "Cost", "NpuLayout", "OpDef", "OpRegistry", "Operand", "Unit", "VectorClass",
           "infer_graph"]
