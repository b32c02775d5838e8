"""A fast path for squeeze-and-excitation tails: their gate's plan and one multiply, map x gate(pooled).

MobileNetV3 blocks (the OCR detector and recognizer) end in x * HardSigmoid(Conv(pool(x))): UB fusion groups
the gate's FusedConv (a 1x1 Conv on a 1x1 map, its activation) with the Mul that scales the map, a fused node
inside a fused body. Interpreted, the two body levels and their per-op work cost more than the arithmetic
(the DB detector: 30-66 us a block, the gate's GEMM a few us). Here the gate runs as its own body's plan
(body_epilogue.py: the Conv and its epilogue) and the map is multiplied by it once, numpy's multiply as the
Mul kernel calls it, so the result is bit for bit the loop's. Taken under the same conditions as the
epilogue plans (registered kernels, known dims); anything else runs the loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.kernels.body_epilogue import EpiloguePlan, plan_body_epilogue
from ge_core.kernels.registry import BodyPath
from ge_core.ops.registry import OpRegistry


@dataclass(frozen=True)
class GatePlan:
    """A body [gate, Mul(map, gate output)]: the gate a fused node whose body has an epilogue plan."""

    gate: Node
    gate_plan: EpiloguePlan
    scaled: str  # the map the gate multiplies (a body input)

    def run(self, body: Graph, args: Sequence[np.ndarray | None]) -> list[np.ndarray] | None:
        """The body's one output, or None when the gate's plan cannot run on these values."""
        feeds = dict(zip(body.inputs, args, strict=True))

        def value(t: str) -> np.ndarray | None:
            known = feeds.get(t)
            return body.constants.get(t) if known is None else known

        assert self.gate.body is not None
        gated = self.gate_plan.run(self.gate.body, [value(t) if t else None for t in self.gate.inputs])
        x = value(self.scaled)
        if gated is None or x is None or gated[0].dtype != x.dtype:
            return None
        with np.errstate(all="ignore"):  # as the Mul kernel: overflow to inf is an IEEE result
            return [np.multiply(x, gated[0])]


def plan_body_gate(body: Graph, registry: OpRegistry) -> GatePlan | None:
    """The plan when `body` is a planned fused gate and a Mul of one body input (N, C, ...) by the gate's
    output (N, C, 1, ...), giving the input's shape; None for any other body."""
    if len(body.nodes) != 2 or len(body.outputs) != 1:
        return None
    gate, mul = body.nodes
    if gate.body is None or len(gate.outputs) != 1 or mul.op_type != "Mul" or mul.domain \
            or mul.outputs[0] != body.outputs[0] or body.num_uses(gate.outputs[0]) != 1:
        return None
    others = [t for t in mul.inputs if t != gate.outputs[0]]
    if len(mul.inputs) != 2 or len(others) != 1 or others[0] not in body.inputs:
        return None
    gate_shape, map_shape = body.desc(gate.outputs[0]).shape, body.desc(others[0]).shape
    out_shape = body.desc(mul.outputs[0]).shape
    if len(map_shape) < 3 or out_shape != map_shape or len(gate_shape) != len(map_shape) \
            or tuple(gate_shape[:2]) != tuple(map_shape[:2]) or any(d != 1 for d in gate_shape[2:]):
        return None
    gate_plan = plan_body_epilogue(gate.body, registry)
    return None if gate_plan is None else GatePlan(gate, gate_plan, others[0])


PATHS = [BodyPath("FusedBody.gate", plan_body_gate,
                  "a squeeze-and-excitation tail as its gate's epilogue plan and one multiply")]
