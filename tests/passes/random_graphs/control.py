"""Control flow in the random graphs: an If or a Loop added to some graphs once they are grown.

Drawn from a stream of its own (after the outputs are chosen), so the graph every seed grew before is kept
as it was: control flow only adds nodes and outputs. The If's condition reads a graph input only (as
Where's does: a rewrite that moves an activation by 1e-6 must not flip a branch); its branches capture pool
tensors and constants of the main graph, and now and then the condition is a constant (constant folding
inlines the branch). The Loop runs a constant number of times with a carried state and a scan output.
"""

from __future__ import annotations

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.tensor import TensorDesc
from tests.passes.random_graphs.builder import Builder, Reject

CONTROL_RATE = 0.3  # share of the graphs that get a control-flow node


def add_control_flow(b: Builder, seed: int) -> None:
    """Maybe add an If or a Loop reading the grown graph; its outputs join the graph's."""
    rng = np.random.default_rng([seed, 2])
    if rng.random() >= CONTROL_RATE:
        return
    kept, b.rng = b.rng, rng  # draws from the control stream only
    try:
        x = b.choice(b.pool)
        outputs = _if(b, x) if b.chance(0.6) else _loop(b, x)
    except Reject:
        return
    finally:
        b.rng = kept
    b.graph.set_outputs(dict.fromkeys([*b.graph.outputs, *outputs]))


def _elementwise_branch(b: Builder, name: str, x: str, desc: TensorDesc, extra: str | None) -> Graph:
    """A few elementwise ops of x (and another captured tensor), a constant of the branch's own, a no-op."""
    g = Graph(name, b.graph.opset)
    g.add_capture(x, desc)
    t = x
    for op in [b.choice(("Relu", "Tanh", "Neg", "Sigmoid", "Abs")) for _ in range(int(b.rng.integers(1, 4)))]:
        t = _add(g, b, op, [t], desc)
    if extra is not None:
        g.add_capture(extra, desc)
        t = _add(g, b, "Add", [t, extra], desc)
    if b.chance(0.5):
        k = b.fresh("k")
        g.add_constant(k, b.scale(desc.shape))
        t = _add(g, b, "Mul", [t, k], desc)
    if b.chance(0.3):
        t = _add(g, b, "Identity", [t], desc)
    g.set_outputs([t])
    return g


def _add(g: Graph, b: Builder, op: str, inputs: list[str], desc: TensorDesc) -> str:
    out = b.fresh("s")
    g.add_node(op, inputs, [out], name=out, descs=[desc])
    return out


def _if(b: Builder, x: str) -> list[str]:
    desc = b.graph.desc(x)
    others = [t for t in b.pool if t != x and b.graph.desc(t).shape == desc.shape]
    extra = b.choice(others) if others and b.chance(0.5) else None
    if b.chance(0.25):
        cond = b.const(np.array(b.chance(0.5)), np.bool_)
    else:
        source = b.choice(b.graph.inputs)
        total = b.op("ReduceSum", [source], {"keepdims": 0})
        cond = b.op("Greater", [total, b.const(np.float32(0.0))])
    then = _elementwise_branch(b, b.fresh("then"), x, desc, extra)
    other = _elementwise_branch(b, b.fresh("else"), x, desc, None)
    captures = list(dict.fromkeys([*then.captures, *other.captures]))
    out = b.fresh("t")
    b.graph.add_node("If", [cond], [out], name=out, descs=[desc], captures=captures,
                     subgraphs={"then_branch": then, "else_branch": other})
    return [out]


def _loop(b: Builder, x: str) -> list[str]:
    """h = x; repeat trips times: h = Tanh(h * w + x) (w captured), every h also stacked."""
    desc = b.graph.desc(x)
    trips = int(b.rng.integers(1, 4))
    w = b.const(b.scale(desc.shape) * 0.5)
    body = Graph(b.fresh("body"), b.graph.opset)
    i, cond_in, h_in = b.fresh("i"), b.fresh("cond"), b.fresh("h")
    body.add_input(i, TensorDesc((), "int64"))
    body.add_input(cond_in, TensorDesc((), "bool"))
    body.add_input(h_in, desc)
    body.add_capture(w, desc)
    body.add_capture(x, desc)
    h = _add(body, b, "Tanh", [_add(body, b, "Add", [_add(body, b, "Mul", [h_in, w], desc), x], desc)], desc)
    cond_out = _add(body, b, "Identity", [cond_in], TensorDesc((), "bool"))
    scan = _add(body, b, "Identity", [h], desc) if b.chance(0.5) else h
    body.set_outputs([cond_out, h, scan])
    final, stacked = b.fresh("t"), b.fresh("t")
    b.graph.add_node("Loop", [b.const(np.int64(trips), np.int64), b.const(np.array(True), np.bool_), x],
                     [final, stacked], name=final,
                     descs=[desc, TensorDesc((trips, *desc.shape), desc.dtype)], captures=[w, x],
                     subgraphs={"body": body})
    return [final, stacked] if b.chance(0.6) else [stacked]
