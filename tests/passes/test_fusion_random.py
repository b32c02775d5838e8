"""Seeded near misses for the graph-fusion passes. The shared random graphs (test_properties.py) seldom build
LayerNorm, GELU, HardSwish or attention, so here every pattern family's graphs are perturbed at random: an
intermediate value gets a reader outside the group, becomes a graph output, or a node is pinned by a control
edge. All six passes run in pipeline order with every contract check (verify, interface, numerics, honest
`changed`, decisions), then run again and must find nothing more to fuse.

Replay one case: `pytest tests/passes/test_fusion_random.py -k seed17`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from ge_core.ir import Graph
from ge_core.passes.infra.pipeline import default_pipeline
from tests.passes import test_fusion_attention as attention
from tests.passes import test_fusion_conv as conv
from tests.passes import test_fusion_gelu as gelu
from tests.passes import test_fusion_hard as hard
from tests.passes import test_fusion_layer_norm as layer_norm
from tests.passes.fusion_cases import build, node, rand, run_checked, scalar

FUSION = ("LayerNormFusionPass", "GeluFusionPass", "HardActivationFusionPass", "MatMulAddFusionPass",
          "ConvActivationFusionPass", "AttentionFusionPass")
PASSES = [s.pass_ for s in default_pipeline("O3") if s.name in FUSION]


def _linear_gelu_ln() -> Graph:
    """MatMul + bias, GELU, LayerNorm, residual: a transformer FFN tail touching four passes."""
    return build([node("MatMul", ["x", "w"], "mm"), node("Add", ["mm", "b"], "lin"),
                  node("Div", ["lin", "sqrt2"], "d"), node("Erf", ["d"], "e"), node("Add", ["e", "one"], "op"),
                  node("Mul", ["lin", "op"], "xm"), node("Mul", ["xm", "half"], "g"),
                  node("ReduceMean", ["g"], "mean", axes=[-1]), node("Sub", ["g", "mean"], "sub"),
                  node("Mul", ["sub", "sub"], "sq"), node("ReduceMean", ["sq"], "var", axes=[-1]),
                  node("Add", ["var", "eps"], "ae"), node("Sqrt", ["ae"], "std"), node("Div", ["sub", "std"], "n"),
                  node("Mul", ["n", "gamma"], "sc"), node("Add", ["sc", "beta"], "ln"), node("Add", ["ln", "x"], "y")],
                 {"x": [2, 3, 8]}, ["y"], {"w": rand(8, 8, scale=0.3), "b": rand(8), "sqrt2": scalar(2 ** 0.5),
                                           "one": scalar(1), "half": scalar(0.5), "eps": scalar(1e-5),
                                           "gamma": rand(8), "beta": rand(8)})


def _conv_block() -> Graph:
    """Conv + bias Add + HardSwish (spelled out), Conv + residual + Relu."""
    return build([node("Conv", ["x", "w1"], "c1", pads=[1, 1, 1, 1]), node("Add", ["c1", "b1"], "a1"),
                  node("Add", ["a1", "three"], "s"), node("Clip", ["s", "zero", "six"], "cl"),
                  node("Mul", ["a1", "cl"], "m"), node("Div", ["m", "six"], "h"),
                  node("Conv", ["h", "w2"], "c2"), node("Add", ["c2", "x"], "r"), node("Relu", ["r"], "y")],
                 {"x": [1, 4, 5, 5]}, ["y"], {"w1": rand(4, 4, 3, 3, scale=0.2), "b1": rand(4, 1, 1),
                                             "three": scalar(3), "zero": scalar(0), "six": scalar(6),
                                             "w2": rand(4, 4, 1, 1)})


MAKERS: list[Callable[[], Graph]] = [
    _linear_gelu_ln, _conv_block,
    lambda: layer_norm.layer_norm(normalize="Reciprocal", affine="scale"),
    lambda: gelu.gelu("tanh/x*x*x", "x*(0.5*f)"),
    lambda: attention.attention("(q/s)K"),
    lambda: attention.attention("scores/s", masked=False),
    lambda: hard.graph(hard.relu6_swish("Mul")),
    lambda: conv.conv_act("LeakyRelu", alpha=0.1),
]
SEEDS = list(range(120))


def perturb(graph: Graph, rng: np.random.Generator) -> str:
    """One random near miss (or none); returns what was done, for the failure message."""
    inner = [n for n in graph.nodes if not any(graph.is_output(t) for t in n.outputs)]
    kind = rng.choice(["none", "reader", "output", "pin"])
    if kind == "none" or not inner:
        return "none"
    victim = inner[int(rng.integers(len(inner)))]
    t = victim.outputs[0]
    if kind == "reader":
        graph.add_node("Neg", [t], ["side"], name="side", descs=[graph.desc(t)])
        graph.set_outputs([*graph.outputs, "side"])
    elif kind == "output":
        graph.set_outputs([*graph.outputs, t])
    else:
        first = graph.inputs[0]
        graph.add_node("Identity", [first], ["side"], name="side", descs=[graph.desc(first)],
                       control_inputs=[victim.name])
        graph.set_outputs([*graph.outputs, "side"])
    return f"{kind} {victim.name}"


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed{s}")
def test_fusion_passes_on_near_misses(seed: int) -> None:
    rng = np.random.default_rng(seed)
    graph = MAKERS[seed % len(MAKERS)]()
    what = perturb(graph, rng)
    for pass_ in PASSES:
        result = run_checked(pass_, graph)
        if what.startswith("pin"):
            pinned = what.split()[1]
            assert not any(d.accepted and pinned in d.nodes for d in result.decisions), what
    for pass_ in PASSES:
        again = run_checked(pass_, graph)
        assert not again.changed, f"{pass_.name} fused more on a second run ({what}): {again.decisions}"
