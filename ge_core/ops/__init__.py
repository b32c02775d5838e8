"""Operators: one file per family, each listing its OpDefs in `OPS`; REGISTRY holds them all.

REGISTRY is also the shape checker of `graph.verify(REGISTRY)`.
"""

from ge_core.ops import (
    activation,
    attention,
    axis_ops,
    bitwise,
    cast,
    control,
    conv,
    deform,
    indexing,
    linalg,
    linear_attention,
    llm,
    logic,
    loss,
    makers,
    math,
    matmul,
    movement,
    norm,
    pad,
    pool,
    qlinear,
    quant,
    reduce,
    resize,
    rnn,
    sampling,
    scatter,
    selection,
    shape_ops,
    signal,
    transdata,
    unary,
    windows,
)
from ge_core.ops.fused import fused_opdef
from ge_core.ops.infer import infer_graph, shape_problems
from ge_core.ops.registry import Category, Cost, NpuLayout, OpDef, Operand, OpRegistry, Unit, VectorClass

FAMILIES = (activation, math, logic, conv, pool, norm, matmul, reduce, shape_ops, makers, movement, pad, indexing,
            resize, transdata, unary, axis_ops, loss, scatter, selection, linalg, windows, sampling, deform, rnn,
            cast, quant, qlinear, bitwise, signal, attention, llm, linear_attention)

REGISTRY = OpRegistry(body_op=fused_opdef, check_shapes=shape_problems)
for _family in FAMILIES:
    REGISTRY.register_all(_family.OPS)
REGISTRY.register_all(control.control_ops(REGISTRY))  # If, Loop, Scan: inferred and costed through their subgraphs

__all__ = ["REGISTRY", "Category", "Cost", "NpuLayout", "OpDef", "OpRegistry", "Operand", "Unit", "VectorClass",
           "infer_graph"]
