"""Operators: one file per family, each listing its OpDefs in `OPS`; REGISTRY holds them all."""

from ge_core.ir.verify import register_shape_checker
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
from ge_core.ops.infer import infer_graph, shape_problems
from ge_core.ops.registry import Category, Cost, OpDef, Operand, OpRegistry

FAMILIES = (activation, math, logic, conv, pool, norm, matmul, reduce, shape_ops, makers, movement, pad, indexing,
            resize, transdata)

REGISTRY = OpRegistry()
for _family in FAMILIES:
    REGISTRY.register_all(_family.OPS)

register_shape_checker(lambda graph: shape_problems(graph, REGISTRY))

__all__ = ["REGISTRY", "Category", "Cost", "OpDef", "OpRegistry", "Operand", "infer_graph"]
