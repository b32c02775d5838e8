"""Which ops can work in NC1HWC0, and what format each of their inputs then needs.

Three kinds of op (GE's FE decides the same per op from its kernel's supported formats; here each op's
OpDef.npu_layout says which, so this file keeps no op names):
- anchors run in NC1HWC0 on the NPU whatever their neighbours do: the cube ops (Conv, ConvTranspose, their
  weights in FRACTAL_Z), pooling and per-channel normalisation;
- format-agnostic ops compute the same in any layout (elementwise ops, Concat, Resize...): they follow
  their inputs, so a chain of them stays in NC1HWC0 between two anchors;
- every other op (Reshape, Flatten, MatMul, Softmax, Transpose...) needs its origin layout (NCHW/ND).

A fused node (FusedConv, a UB group) can work in NC1HWC0 when every op of its body can; it is an anchor if
one of them is. `classify` returns a Rule, or a Refusal saying in plain words why the op stays in NCHW.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ge_core.ir.formats import C0, FRACTAL_Z, NC1HWC0, as_4d
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY, Category, NpuLayout
from ge_core.passes.npu.edits import FLOATS


class Kind(StrEnum):
    ANCHOR = "anchor"  # works in NC1HWC0 whatever its neighbours do
    AGNOSTIC = "agnostic"  # follows the format of its inputs


class Role(StrEnum):
    ACTIVATION = "activation"  # a 4-D feature map: NC1HWC0
    WEIGHT = "weight"  # a cube op's weight: FRACTAL_Z
    PARAM = "param"  # bias, scale vectors, sizes, scalars: left as they are


WANTED: dict[Role, str | None] = {Role.ACTIVATION: NC1HWC0, Role.WEIGHT: FRACTAL_Z, Role.PARAM: None}


@dataclass(frozen=True)
class Rule:
    kind: Kind
    roles: tuple[Role, ...]  # per input index (missing trailing entries: PARAM)
    why: str

    def wanted(self, index: int) -> str | None:
        """The format input `index` needs when the op works in NC1HWC0 (None: any)."""
        return WANTED[self.roles[index]] if index < len(self.roles) else None


@dataclass(frozen=True)
class Refusal:
    why: str


Verdict = Rule | Refusal

A, W, P = Role.ACTIVATION, Role.WEIGHT, Role.PARAM
# The anchors' input roles (after them: PARAM, e.g. BatchNormalization's scale, bias, mean, var) and why.
ANCHOR_KINDS: dict[NpuLayout, tuple[tuple[Role, ...], str]] = {
    NpuLayout.CUBE: ((A, W), "cube op: feature map in NC1HWC0, weight in FRACTAL_Z"),  # image, weight (, bias)
    NpuLayout.POOL: ((A,), "pooling runs on NC1HWC0 tiles"),
    # LRN sums across channels: C1 x C0 blocks, padding lanes are zero
    NpuLayout.CHANNEL_NORM: ((A,), "per-channel normalisation runs on NC1HWC0 tiles"),
}


def classify(graph: Graph, node: Node) -> Verdict:
    """Can `node` work in NC1HWC0, and how?"""
    if node.body is not None and REGISTRY.get(node.op_type, node.domain) is None:
        return _classify_body(graph, node)
    if node.domain not in ("", "ai.onnx"):
        return Refusal(f"{node.domain}::{node.op_type} has no NC1HWC0 kernel")
    op = REGISTRY.get(node.op_type)
    layout = op.npu_layout if op is not None else None
    if layout in ANCHOR_KINDS:
        return _anchor(graph, node, *ANCHOR_KINDS[layout])
    if layout == NpuLayout.CONCAT:
        return _concat(graph, node)
    if layout == NpuLayout.RESIZE:
        return _resize(graph, node)
    if layout == NpuLayout.PASS_THROUGH:
        return _pass_through(graph, node)
    if op is not None and op.category in (Category.ELEMENTWISE, Category.BROADCAST):
        return _elementwise(graph, node)
    return Refusal(f"{node.op_type} needs its origin layout (NCHW/ND)")


def feature_map_problem(desc: TensorDesc) -> str | None:
    """Why a tensor cannot be an NC1HWC0 feature map (4-D, float, known C), or None."""
    if desc.rank != 4:
        return f"is {desc.rank}-D (NC1HWC0 holds 4-D feature maps)"
    if desc.dtype not in FLOATS:
        return f"is {desc.dtype} (NC1HWC0 here holds float feature maps)"
    if desc.shape[1] < 0:
        return "has an unknown channel count"
    return None


def _anchor(graph: Graph, node: Node, lead: tuple[Role, ...], why: str) -> Verdict:
    roles = lead + (P,) * (len(node.inputs) - len(lead))
    problem = feature_map_problem(graph.desc(node.input(0))) or feature_map_problem(graph.desc(node.outputs[0]))
    if problem:
        return Refusal(f"its feature map {problem}")
    if W in roles and node.has_input(1) and graph.desc(node.input(1)).rank != 4:
        return Refusal("its weight is not 4-D (FRACTAL_Z holds 2-D convolution weights)")
    busy = [t for t in node.outputs[1:] if graph.num_uses(t)]
    if busy:
        return Refusal(f"its extra output '{busy[0]}' is read (only the main output has an NC1HWC0 kernel)")
    return Rule(Kind.ANCHOR, roles[: len(node.inputs)], why)


def _elementwise(graph: Graph, node: Node) -> Verdict:
    out = graph.desc(node.outputs[0])
    problem = feature_map_problem(out)
    if problem:
        return Refusal(f"its output {problem}")
    roles: list[Role] = []
    for t in node.inputs:
        desc = graph.desc(t) if t else None
        if desc is None or desc.numel == 1:
            roles.append(P)  # absent, or a scalar: broadcast the same way in any layout
        elif desc.dtype not in FLOATS:
            return Refusal(f"input '{t}' is {desc.dtype}")
        elif desc.rank <= 4 and as_4d(desc.shape)[1] == out.shape[1]:
            roles.append(A)  # same channels, lanes line up (a per-channel [C,1,1] too: it converts to [1,C1,1,1,C0])
        else:
            return Refusal(f"input '{t}' {desc.text()} broadcasts along C, across NC1HWC0's C0 lanes")
    return Rule(Kind.AGNOSTIC, tuple(roles), "elementwise: the same in any layout, follows its inputs")


def _concat(graph: Graph, node: Node) -> Verdict:
    descs = [graph.desc(t) for t in node.inputs if t]
    problem = next((p for d in descs if (p := feature_map_problem(d))), None)
    if problem:
        return Refusal(f"an input {problem}")
    why = "joins feature maps: follows its inputs"
    if int(node.attr("axis", 0)) % 4 == 1 and any(d.shape[1] % C0 for d in descs[:-1]):
        why += f" (channels {[d.shape[1] for d in descs]} are not whole C0={C0} blocks: the copy re-packs lanes)"
    return Rule(Kind.AGNOSTIC, (A,) * len(node.inputs), why)


def _resize(graph: Graph, node: Node) -> Verdict:
    x, out = graph.desc(node.input(0)), graph.desc(node.outputs[0])
    problem = feature_map_problem(x) or feature_map_problem(out)
    if problem:
        return Refusal(f"its feature map {problem}")
    if x.shape[:2] != out.shape[:2]:
        return Refusal("it scales N or C, not only H and W")
    return Rule(Kind.AGNOSTIC, (A,) + (P,) * (len(node.inputs) - 1), "spatial resize: follows its input")


def _pass_through(graph: Graph, node: Node) -> Verdict:
    problem = feature_map_problem(graph.desc(node.input(0)))
    if problem:
        return Refusal(f"its input {problem}")
    if any(graph.num_uses(t) for t in node.outputs[1:]):
        return Refusal("its mask output is read")
    return Rule(Kind.AGNOSTIC, (A,) + (P,) * (len(node.inputs) - 1), "passes values through: follows its input")


def _classify_body(graph: Graph, node: Node) -> Verdict:
    """A fused node works in NC1HWC0 when every op of its body can; its inputs' roles come from the body."""
    body = node.body
    assert body is not None
    seen: dict[str, set[Role]] = {}
    kind = Kind.AGNOSTIC
    for inner in body.nodes:
        verdict = classify(body, inner)
        if isinstance(verdict, Refusal):
            return Refusal(f"its body's {inner.op_type} '{inner.name}': {verdict.why}")
        kind = Kind.ANCHOR if verdict.kind == Kind.ANCHOR else kind
        for i, t in enumerate(inner.inputs):
            if t in body.inputs:
                seen.setdefault(t, set()).add(verdict.roles[i] if i < len(verdict.roles) else P)
    roles = _node_roles(node, body.inputs, seen)
    if isinstance(roles, Refusal):
        return roles
    why = "fused kernel whose ops all work in NC1HWC0"
    return Rule(kind, roles, why + (" (it holds a cube/pooling op)" if kind == Kind.ANCHOR else ""))


def _node_roles(node: Node, body_inputs: list[str], seen: dict[str, set[Role]]) -> tuple[Role, ...] | Refusal:
    """The fused node's input roles from how its body reads each body input (unread: PARAM)."""
    by_body_input: list[Role] = []
    for b in body_inputs:
        roles = seen.get(b, {P})
        if len(roles) > 1:
            return Refusal(f"its body reads input '{b}' both as {' and '.join(sorted(roles))}")
        by_body_input.append(next(iter(roles)))
    present = iter(by_body_input)  # body inputs are the node's present inputs, in order
    return tuple(next(present) if t else P for t in node.inputs)
