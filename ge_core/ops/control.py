"""Control flow: If, Loop and Scan, whose work is their subgraphs (GE's functional ops If, While, For).

Each node holds its subgraphs (Node.subgraphs: then_branch/else_branch, body) and captures the outer
tensors they read (its trailing inputs). Inference infers the subgraphs through a callback of the inference
driver (ops/infer.py), which supplies the captured tensors:

- If: both branches give the same number of outputs of the same dtypes and ranks; dims that differ become
  unknown. A condition known at compile time takes its branch as it is (the other may not even fit).
- Loop: loop-carried values keep their descs, widened (dims made unknown) until the body agrees with
  itself; scan outputs gain a leading dim, the trip count when it is a known constant, else unknown.
- Scan (opset 9+): the body sees one slice of every scan input along its scan_input_axes; scan outputs
  stack the body's along scan_output_axes, the sequence length when it is known.

They run through the interpreter (control_kernels.py), never fuse (category OPAQUE), are never folded as
kernels, and cost what their subgraphs cost: an If its dearer branch, a Loop its body times its trip count
when that is known (else one iteration), a Scan its body times the sequence length.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ge_core.errors import GEError
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import optional, shape_error
from ge_core.ops.control_kernels import run_if, run_loop, run_scan, scan_axes
from ge_core.ops.infer import infer_subgraphs_of
from ge_core.ops.registry import (
    Category,
    ControlInferFn,
    Cost,
    CostFn,
    InferFn,
    InferSubgraph,
    OpDef,
    Operand,
    OpRegistry,
    Unit,
)

BOOL, INDEX = TensorDesc((), "bool"), TensorDesc((), "int64")


# ---- inference -------------------------------------------------------------------------------------
def _merge(node: Node, operands: Sequence[Operand | None], what: str, a: TensorDesc, b: TensorDesc) -> TensorDesc:
    """One desc covering both: same dtype and rank, dims that differ unknown."""
    if a.dtype != b.dtype:
        raise shape_error(node, operands, f"{what} is {a.text()} one way and {b.text()} the other: the dtypes "
                                          "must agree")
    if a.rank != b.rank:
        raise shape_error(node, operands, f"{what} is {a.text()} one way and {b.text()} the other: GE Workbench "
                                          "needs the same rank (a desc has no unknown rank)")
    if a.shape == b.shape:
        return a
    return TensorDesc(tuple(x if x == y else -1 for x, y in zip(a.shape, b.shape, strict=True)), a.dtype, a.format)


def _infer_if(node: Node, operands: list[Operand | None], infer: InferSubgraph) -> list[Operand]:
    cond = _cond(node, operands, 0)
    if cond is None:
        raise shape_error(node, operands, "its condition input is missing")
    if cond.value is not None:  # known now: the branch taken is the result (GE folds such an If)
        return infer("then_branch" if bool(cond.value.reshape(-1)[0]) else "else_branch", [])
    then, other = infer("then_branch", []), infer("else_branch", [])
    if len(then) != len(other):
        raise shape_error(node, operands, f"then_branch returns {len(then)} outputs but else_branch {len(other)}")
    return [Operand(_merge(node, operands, f"output {i}", a.desc, b.desc))
            for i, (a, b) in enumerate(zip(then, other, strict=True))]


def _if_branch(node: Node, operands: list[Operand | None]) -> str | None:
    """The branch an If takes when its condition is known before running."""
    cond = optional(operands, 0)
    if cond is None or cond.value is None or cond.value.size != 1:
        return None
    return "then_branch" if bool(cond.value.reshape(-1)[0]) else "else_branch"


def _cond(node: Node, operands: Sequence[Operand | None], index: int) -> Operand | None:
    cond = optional(operands, index)
    if cond is not None and (cond.desc.dtype != "bool" or cond.desc.numel not in (1, None)):
        raise shape_error(node, operands, f"its condition must be one bool, not {cond.desc.text()}")
    return cond


def _carried(node: Node, operands: Sequence[Operand | None], infer: InferSubgraph, attr: str,
             first: list[TensorDesc], state: list[TensorDesc], rest: list[TensorDesc]) -> tuple[list[TensorDesc],
                                                                                              list[Operand]]:
    """Loop-carried descs the body agrees with (widened until a fixed point), and the body's last outputs.
    `first` and `rest` are the body's other formal inputs (before and after the carried ones)."""
    n = len(state)
    for _ in range(2 + sum(d.rank for d in state)):  # each round makes at least one dim unknown
        outs = infer(attr, [Operand(d) for d in (*first, *state, *rest)])
        skip = 1 if first else 0  # Loop's body returns its condition first
        if len(outs) < skip + n:
            raise shape_error(node, operands, f"its {attr} returns {len(outs)} outputs, fewer than its "
                                              f"{skip + n} carried values")
        wider = [_merge(node, operands, f"loop-carried value {i}", s, o.desc)
                 for i, (s, o) in enumerate(zip(state, outs[skip: skip + n], strict=True))]
        if wider == state:
            return state, outs
        state = wider
    raise shape_error(node, operands, f"its {attr}'s carried values never settle")


def _infer_loop(node: Node, operands: list[Operand | None], infer: InferSubgraph) -> list[Operand]:
    count, cond = optional(operands, 0), _cond(node, operands, 1)
    if count is not None and (count.desc.dtype != "int64" or count.desc.numel not in (1, None)):
        raise shape_error(node, operands, f"its trip count M must be one int64, not {count.desc.text()}")
    initial = operands[2:]
    if any(o is None for o in initial):
        raise shape_error(node, operands, "a loop-carried initial value is missing")
    state = [o.desc for o in initial if o is not None]
    state, outs = _carried(node, operands, infer, "body", [INDEX, BOOL], state, [])
    if outs[0].desc.dtype != "bool" or outs[0].desc.numel not in (1, None):
        raise shape_error(node, operands, f"its body's condition output is {outs[0].desc.text()}, not one bool")
    trips = loop_trips(node, count.value if count is not None else None, cond)
    scans = [TensorDesc((-1 if trips is None else trips, *o.desc.shape), o.desc.dtype) for o in outs[1 + len(state):]]
    return [Operand(d) for d in (*state, *scans)]


def loop_trips(node: Node, count: np.ndarray | None, cond: Operand | None) -> int | None:
    """How many times a Loop runs, when that is known before running: M is known and the condition is
    absent, or known true and passed through the body unchanged (a known false runs it zero times)."""
    if cond is not None and cond.value is not None and not bool(cond.value.reshape(-1)[0]):
        return 0
    if count is None or (cond is not None and (cond.value is None or not _keeps_condition(node))):
        return None
    return max(int(np.asarray(count).reshape(-1)[0]), 0)


def _keeps_condition(node: Node) -> bool:
    """The body returns its condition input as it came (directly, or through an Identity)."""
    body = node.subgraphs.get("body")
    if body is None or len(body.inputs) < 2 or not body.outputs:
        return False
    out, cond_in = body.outputs[0], body.inputs[1]
    producer = body.producer(out)
    return out == cond_in or (producer is not None and producer.op_type == "Identity" and
                              producer.inputs[:1] == (cond_in,))


def _infer_scan(node: Node, operands: list[Operand | None], infer: InferSubgraph) -> list[Operand]:
    count = int(node.attr("num_scan_inputs", 0))
    n = len(operands) - count
    if count < 1 or n < 0 or any(o is None for o in operands):
        raise shape_error(node, operands, f"needs num_scan_inputs >= 1 of its {len(operands)} inputs, all given")
    descs = [o.desc for o in operands if o is not None]
    ranks = [d.rank for d in descs[n:]]
    in_axes, out_axes = scan_axes(node, ranks, len(node.outputs) - n)
    lengths = {d.shape[a] for d, a in zip(descs[n:], in_axes, strict=True) if d.shape[a] >= 0}
    if len(lengths) > 1:
        raise shape_error(node, operands, f"its scan inputs have different lengths {sorted(lengths)}")
    slices = [TensorDesc(d.shape[:a] + d.shape[a + 1:], d.dtype) for d, a in zip(descs[n:], in_axes, strict=True)]
    state, outs = _carried(node, operands, infer, "body", [], descs[:n], slices)
    if len(outs) != len(node.outputs):
        raise shape_error(node, operands, f"its body returns {len(outs)} outputs, the node declares "
                                          f"{len(node.outputs)}")
    length = lengths.pop() if lengths else -1
    scans = []
    for o, written in zip(outs[n:], out_axes, strict=True):
        shape = list(o.desc.shape)
        axis = written + len(shape) + 1 if written < 0 else written
        if not 0 <= axis <= len(shape):
            raise shape_error(node, operands, f"scan_output_axes {written} is out of range for {o.desc.text()}")
        scans.append(TensorDesc((*shape[:axis], length, *shape[axis:]), o.desc.dtype))
    return [Operand(d) for d in (*state, *scans)]


# ---- costs ------------------------------------------------------------------------------------------
def subgraph_cost(registry: OpRegistry, graph: Graph) -> Cost:
    """What one run of a subgraph costs: the sum of its nodes' costs (ops it cannot price count nothing)."""
    flops = read = written = 0
    for inner in graph.nodes:
        op = registry.for_node(inner)
        if op is not None:
            c = op.cost(inner, graph.input_descs(inner), graph.output_descs(inner))
            flops, read, written = flops + c.flops, read + c.bytes_read, written + c.bytes_written
    return Cost(flops, read, written)


def iterations(node: Node, in_descs: Sequence[TensorDesc | None], out_descs: Sequence[TensorDesc]) -> int | None:
    """How many times a Loop or Scan runs its body, when the descs say (a scan output's or input's length)."""
    n = len(node.explicit_inputs)
    if node.op_type == "Loop":
        scans = out_descs[max(n - 2, 0):]
        return scans[0].shape[0] if scans and scans[0].shape[0] >= 0 else None
    count = int(node.attr("num_scan_inputs", 0))
    explicit = [d for d in in_descs[:n] if d is not None]
    if count < 1 or len(explicit) < count:
        return None
    first = explicit[len(explicit) - count]
    axis = int(node.attr("scan_input_axes", [0])[0])
    axis = axis + first.rank if axis < 0 else axis
    length = first.shape[axis] if 0 <= axis < first.rank else -1
    return length if length >= 0 else None


def _cost(registry: OpRegistry) -> CostFn:
    def cost(node: Node, in_descs: list[TensorDesc | None], out_descs: list[TensorDesc]) -> Cost:
        runs = [subgraph_cost(registry, g) for _, g in sorted(node.subgraphs.items())]
        if not runs:
            return Cost(0, 0, 0)
        if node.op_type == "If":  # the dearer branch
            return max(runs, key=lambda c: (c.flops, c.bytes_read + c.bytes_written))
        trips = iterations(node, in_descs, out_descs)
        times = 1 if trips is None else trips  # unknown: one iteration (the simulator says so)
        return Cost(runs[0].flops * times, runs[0].bytes_read * times, runs[0].bytes_written * times)
    return cost


# ---- the ops ----------------------------------------------------------------------------------------
def _pure(registry: OpRegistry, fn: ControlInferFn) -> InferFn:
    """The op's plain `infer`: the same inference, its subgraphs inferred without applying their descs."""
    def infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
        explicit = operands[: len(operands) - node.num_captures]
        return [o.desc for o in fn(node, explicit, infer_subgraphs_of(node, operands, registry))]
    return infer


def _no_kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    raise GEError(f"node '{node.name}' ({node.op_type}) runs its subgraphs through the interpreter, not as a "
                  "kernel.", hint="Run the graph with ge_core.runtime (Executor, Interpreter, execute).")


def control_ops(registry: OpRegistry) -> list[OpDef]:
    """If, Loop and Scan, costed and inferred through `registry` (the one they are registered in)."""
    table = ((_infer_if, run_if, "runs one of two subgraphs on a runtime condition"),
             (_infer_loop, run_loop, "runs its body while a trip count and a condition allow"),
             (_infer_scan, run_scan, "runs its body over slices of its scan inputs"))
    return [OpDef(op, Category.OPAQUE, _pure(registry, infer), _no_kernel, _cost(registry), foldable=False,
                  unit=Unit.SCALAR, doc=doc, infer_subgraphs=infer, run_subgraphs=kernel,
                  inline_branch=_if_branch if op == "If" else None)
            for op, (infer, kernel, doc) in zip(("If", "Loop", "Scan"), table, strict=True)]
