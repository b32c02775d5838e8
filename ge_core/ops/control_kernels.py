"""What If, Loop and Scan compute, given a runner of their subgraphs (ONNX's semantics, opset 9+ for Scan).

The interpreter calls these with `run(attr, formal inputs, where)`, which interprets one subgraph with the
same interpreter kind (so a precision mode's kernel calls apply inside) and the captured values visible;
`where` ("iteration 3") goes into any error raised inside, with the node and the subgraph.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ge_core.errors import GEError
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.registry import RunSubgraph


def _flag(node: Node, value: np.ndarray, what: str) -> bool:
    value = np.asarray(value)
    if value.size != 1:
        raise GEError(f"node '{node.name}' ({node.op_type}): {what} must hold one value, it holds "
                      f"{list(value.shape)}.")
    return bool(value.reshape(-1)[0])


def run_if(node: Node, args: list[np.ndarray | None], run: RunSubgraph,
           descs: Sequence[TensorDesc | None]) -> list[np.ndarray]:
    cond = args[0] if args else None
    if cond is None:
        raise GEError(f"node '{node.name}' (If) has no condition input.")
    return run("then_branch" if _flag(node, cond, "its condition") else "else_branch", [], "")


def run_loop(node: Node, args: list[np.ndarray | None], run: RunSubgraph,
             descs: Sequence[TensorDesc | None]) -> list[np.ndarray]:
    """for (i = 0; (M absent or i < M) and (cond absent or cond); ++i) cond, v..., scans... = body(i, cond, v...)"""
    count = args[0] if args else None
    cond = args[1] if len(args) > 1 else None
    carried = [a for a in args[2:] if a is not None]
    if count is None and cond is None:
        raise GEError(f"node '{node.name}' (Loop) has neither a trip count nor a condition: it would never end.",
                      hint="Give the Loop a trip count M or a condition input.")
    trips = None if count is None else int(np.asarray(count).reshape(-1)[0])
    going = True if cond is None else _flag(node, cond, "its condition")
    scans: list[list[np.ndarray]] = [[] for _ in range(len(node.outputs) - len(carried))]
    i = 0
    while going and (trips is None or i < trips):
        outs = run("body", [np.array(i, np.int64), np.array(going), *carried], f"iteration {i}")
        if len(outs) != 1 + len(carried) + len(scans):
            raise GEError(f"node '{node.name}' (Loop): its body returned {len(outs)} outputs in iteration {i}, "
                          f"expected {1 + len(carried) + len(scans)}.")
        if cond is not None:
            going = _flag(node, outs[0], f"its body's condition (iteration {i})")
        carried = outs[1: 1 + len(carried)]
        for values, value in zip(scans, outs[1 + len(carried):], strict=True):
            values.append(value)
        i += 1
    stacked = [_stack(v, 0, descs[len(carried) + k]) for k, v in enumerate(scans)]
    return [*carried, *stacked]


def scan_axes(node: Node, ranks: Sequence[int], outputs: int) -> tuple[list[int], list[int]]:
    """Scan's scan_input_axes normalised by the inputs' ranks, and its scan_output_axes as written (their
    ranks are known only once the body's outputs are)."""
    given = list(node.attr("scan_input_axes", [0] * len(ranks)))
    if len(given) != len(ranks):
        raise GEError(f"node '{node.name}' (Scan): scan_input_axes has {len(given)} entries for {len(ranks)} "
                      "scan inputs.")
    axes = [a + r if a < 0 else a for a, r in zip(given, ranks, strict=True)]
    bad = [a for a, r in zip(axes, ranks, strict=True) if not 0 <= a < r]
    if bad:
        raise GEError(f"node '{node.name}' (Scan): scan_input_axes {given} is out of range for ranks {list(ranks)}.")
    out = list(node.attr("scan_output_axes", [0] * outputs))
    if len(out) != outputs:
        raise GEError(f"node '{node.name}' (Scan): scan_output_axes has {len(out)} entries for {outputs} scan "
                      "outputs.")
    return axes, out


def run_scan(node: Node, args: list[np.ndarray | None], run: RunSubgraph,
             descs: Sequence[TensorDesc | None]) -> list[np.ndarray]:
    values = [a for a in args if a is not None]
    n = len(values) - int(node.attr("num_scan_inputs", 0))
    states, inputs = values[:n], values[n:]
    axes, out_axes = scan_axes(node, [x.ndim for x in inputs], len(node.outputs) - n)
    backward = list(node.attr("scan_input_directions", [0] * len(inputs)))
    lengths = {x.shape[a] for x, a in zip(inputs, axes, strict=True)}
    if len(lengths) != 1:
        raise GEError(f"node '{node.name}' (Scan): its scan inputs have different lengths {sorted(lengths)}.")
    length = lengths.pop()
    scans: list[list[np.ndarray]] = [[] for _ in out_axes]
    for t in range(length):
        slices = [np.take(x, length - 1 - t if back else t, axis=a)
                  for x, a, back in zip(inputs, axes, backward, strict=True)]
        outs = run("body", [*states, *slices], f"iteration {t}")
        if len(outs) != n + len(scans):
            raise GEError(f"node '{node.name}' (Scan): its body returned {len(outs)} outputs in iteration {t}, "
                          f"expected {n + len(scans)}.")
        states = outs[:n]
        for collected, value in zip(scans, outs[n:], strict=True):
            collected.append(value)
    prepend = list(node.attr("scan_output_directions", [0] * len(scans)))
    stacked = []
    for k, (collected, axis) in enumerate(zip(scans, out_axes, strict=True)):
        ordered = collected[::-1] if prepend[k] else collected
        stacked.append(_stack(ordered, axis, descs[n + k]))
    return [*states, *stacked]


def _stack(values: list[np.ndarray], axis: int, desc: TensorDesc | None) -> np.ndarray:
    """The per-iteration values stacked along `axis` (negative: from the back of the stacked rank); no
    iteration at all gives an empty array shaped by the output's desc."""
    if values:
        return np.stack(values, axis=axis if axis >= 0 else axis + values[0].ndim + 1)
    if desc is None or desc.dtype in ("str", "undefined", "bfloat16"):
        return np.zeros((0,), np.float32)
    shape = [max(d, 0) for d in desc.shape]
    if shape:
        shape[axis if axis >= 0 else axis + len(shape)] = 0
    return np.zeros(shape, np.dtype(desc.dtype))
