"""LayerNormFusionPass: LayerNorm written in primitives -> one LayerNormalization op."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.passes.fusion.graph.driver import PatternFusionPass
from ge_core.passes.fusion.graph.pattern import FusedOp, Match, Pattern, PNode, constant, distinct, op, scalar

MEAN = op("mean", "ReduceMean", "$x", rest=True)  # rest: the axes input (opset 18)
CENTER = op("sub", "Sub", "$x", "mean")
SQUARES = (op("sq", "Pow", "sub", "#two"), op("sq", "Mul", "sub", "sub"))  # d^2 as Pow(d, 2) or d * d
VARIANCE = (op("var", "ReduceMean", "sq", rest=True), op("eps_add", "Add", "var", "#eps", commutative=True),
            op("std", "Sqrt", "eps_add"))
NORMALIZE = ((op("norm", "Div", "sub", "std"),),  # d / std, or d * (1 / std)
             (op("inv", "Reciprocal", "std"), op("norm", "Mul", "sub", "inv", commutative=True)))
AFFINE = ((op("scale", "Mul", "norm", "#gamma", commutative=True),
           op("shift", "Add", "scale", "#beta", commutative=True)),
          (op("scale", "Mul", "norm", "#gamma", commutative=True),),
          ())


def _reduced_axes(graph: Graph, node: Node) -> list[int] | None:
    """The axes a ReduceMean reduces (attribute, or input since opset 18); None: every axis."""
    axes = node.attr("axes")
    if axes is None and node.input(1):
        array = constant(graph, node.input(1))
        axes = None if array is None else array.reshape(-1).tolist()
    return None if axes is None else [int(a) for a in axes]


def _axes_ok(graph: Graph, match: Match) -> str | None:
    """Both means reduce the last axis only, keeping it (keepdims=1), so they broadcast back."""
    rank = graph.desc(match.tensor("x")).rank
    if rank == 0:
        return f"'{match.tensor('x')}' is a scalar: there is no axis to normalize"
    for pid in ("mean", "var"):
        node = match.node(pid)
        axes = _reduced_axes(graph, node)
        if node.input(1) and axes is None:
            return f"ReduceMean '{node.name}' axes '{node.input(1)}' are not a constant"
        if (axes is None and rank != 1) or (axes is not None and [a % rank for a in axes] != [rank - 1]):
            return f"ReduceMean '{node.name}' reduces axes {axes if axes is not None else 'all'}, not the last axis"
        if not int(node.attr("keepdims", 1)):
            return f"ReduceMean '{node.name}' has keepdims=0"
    return None


def _constants_ok(graph: Graph, match: Match) -> str | None:
    """Pow's exponent is 2; epsilon is one non-negative number."""
    if match.node("sq").op_type == "Pow":
        two = scalar(graph, match.tensor("two"))
        if two != 2.0:
            return f"Pow exponent {match.tensor('two') if two is None else f'{two:g}'} is not 2"
    eps = scalar(graph, match.tensor("eps"))
    if eps is None or eps < 0:
        return f"epsilon '{match.tensor('eps')}' is not a non-negative scalar constant"
    return None


def _affine_ok(graph: Graph, match: Match) -> str | None:
    """gamma and beta are vectors over the normalized (last) axis, as LayerNormalization takes them."""
    dim = graph.desc(match.tensor("x")).shape[-1]
    if dim < 0:
        return "the normalized (last) dim is unknown"
    for label, var in (("scale", "gamma"), ("bias", "beta")):
        array = constant(graph, match.values.get(var, ""))
        if array is not None and (array.ndim > 1 or array.size not in (1, dim)):
            return f"{label} shape {list(array.shape)} is not [{dim}]"
    return None


def _explicit_affine(graph: Graph, match: Match) -> tuple[str, str, tuple[Node, ...]]:
    """gamma and beta; a LayerNorm written without them gets them spelled out (Mul by ones, Add of zeros)
    after its last node, so LayerNormalization has its Scale and B and the body still computes the same."""
    if "beta" in match.values:
        return match.tensor("gamma"), match.tensor("beta"), ()
    tail = match.node("scale") if match.has("scale") else match.node("norm")
    out = tail.outputs[0]
    desc = graph.desc(out)
    steps = [("Add", "bias", 0.0)] if match.has("scale") else [("Mul", "scale", 1.0), ("Add", "bias", 0.0)]
    raw = graph.unique_tensor_name(f"{out}.raw")
    graph.rename_tensor(out, raw)  # the new last node takes `out` (the graph's interface keeps its names)
    src, after, made, consts = raw, tail, [], []
    for i, (op_type, label, value) in enumerate(steps):
        const = graph.unique_tensor_name(f"{out}.{label}")
        graph.add_constant(const, np.full(desc.shape[-1:], value, np.dtype(desc.dtype)))
        dst = out if i == len(steps) - 1 else graph.unique_tensor_name(f"{out}.scaled")
        name = graph.unique_node_name(dst if dst != out else f"{out}.shifted")
        after = graph.insert_after(after, op_type, [src, const], [dst], name=name, descs=[desc])
        made.append(after)
        consts.append(const)
        src = dst
    for user in graph.users(raw):
        if user is not made[0]:
            for index, t in enumerate(user.inputs):
                if t == raw:
                    graph.set_input(user, index, out)
    if graph.is_output(raw):
        graph.set_outputs([out if t == raw else t for t in graph.outputs])
    gamma = match.tensor("gamma") if match.has("scale") else consts[0]
    return gamma, consts[-1], tuple(made)


def _layer_norm(graph: Graph, match: Match) -> FusedOp:
    eps = scalar(graph, match.tensor("eps"))
    assert eps is not None
    made = "" if "beta" in match.values else " (bias 0 made explicit)" if match.has("scale") else \
        " (scale 1 and bias 0 made explicit)"
    gamma, beta, extra = _explicit_affine(graph, match)
    return FusedOp("LayerNormalization", f"LayerNorm primitives into LayerNormalization{made}", domain="",
                   attrs={"axis": -1, "epsilon": eps}, inputs=(match.tensor("x"), gamma, beta), extra=extra)


def _patterns() -> tuple[Pattern, ...]:
    patterns = []
    for affine, normalize, square in itertools.product(AFFINE, NORMALIZE, SQUARES):
        nodes: tuple[PNode, ...] = (MEAN, CENTER, square, *VARIANCE, *normalize, *affine)
        tags = [square.ops[0], normalize[-1].ops[0], ("affine", "scale only", "no affine")[AFFINE.index(affine)]]
        patterns.append(Pattern(f"LayerNorm({', '.join(tags)})", nodes, _layer_norm,
                                (_axes_ok, _constants_ok, _affine_ok, distinct("gamma", "beta"))))
    return tuple(patterns)


# mean, center, square, mean, + eps, sqrt, divide (x 2 spellings each), then gamma/beta, gamma only, or none
PATTERNS = _patterns()


@dataclass(frozen=True)
class LayerNormFusionPass(PatternFusionPass):
    """Recognise LayerNorm written in primitives and replace it by one LayerNormalization op.

    TorchScript and Paddle exports (and ONNX before opset 17) spell LayerNorm out: ReduceMean, Sub,
    Pow 2 (or d*d), ReduceMean, Add epsilon, Sqrt, Div (or Reciprocal and Mul), Mul gamma, Add beta: nine
    kernels, each reading and writing the whole activation. One LayerNormalization kernel reads it once,
    keeps the row statistics on chip and writes once. The reductions must be over the last axis with
    keepdims, epsilon and gamma/beta constants; a LayerNorm without gamma/beta gets scale 1 and bias 0.
    The fused node is a real LayerNormalization (axis=-1, epsilon from the constant) with operands X,
    Scale, B; its body keeps the primitives for inspection. ONNX has LayerNormalization since opset 17;
    in an older graph the node still runs the workbench's kernel (its ONNX dump is then not written).
    """

    name: ClassVar[str] = "LayerNormFusionPass"
    rounds: ClassVar[tuple[tuple[Pattern, ...], ...]] = (PATTERNS,)
