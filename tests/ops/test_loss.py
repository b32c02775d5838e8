"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: reductions, class weights, ignore_index (also
negative and out of the class range), N-D inputs and the log_prob output against onnx.reference and ONNX
Runtime; shape errors; facts; ONNX's conformance cases (the SCE _expanded ones run NLL)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ge_core.errors import ExecutionError
from ge_core.ops import REGISTRY, Category
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import check, infer, infer_error, run_ge

RNG = np.random.default_rng(5)
N, C = 3, 5


def _case(extra: tuple[int, ...], ignore: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    x = RNG.standard_normal((N, C, *extra)).astype(np.float32)
    target = RNG.integers(0, C, (N, *extra)).astype(np.int64)
    if ignore is not None:
        target.reshape(-1)[::3] = ignore
    return x, target


WEIGHT = RNG.random(C).astype(np.float32) + 0.2
CASES = [(extra, reduction, weighted, ignore) for extra in [(), (4,), (2, 3)] for reduction in ("none", "sum", "mean")
         for weighted in (False, True) for ignore in (None, 1)]


def _id(case: tuple[Any, ...]) -> str:
    extra, reduction, weighted, ignore = case
    suffix = ("-w" if weighted else "") + (f"-ii{ignore}" if ignore is not None else "")
    return f"{len(extra) + 2}d-{reduction}" + suffix


@pytest.mark.parametrize("case", CASES, ids=_id)
@pytest.mark.parametrize("op", ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"])
def test_matches_oracles(op: str, case: tuple[Any, ...]) -> None:
    extra, reduction, weighted, ignore = case
    x, target = _case(extra, ignore)
    if op == "NegativeLogLikelihoodLoss":
        x = x - np.log(np.exp(x).sum(axis=1, keepdims=True))  # log-probabilities, as NLL expects
    attrs: dict[str, Any] = {"reduction": reduction}
    if ignore is not None:
        attrs["ignore_index"] = ignore
    ins = [x, target, WEIGHT] if weighted else [x, target]
    n_out = 2 if op == "SoftmaxCrossEntropyLoss" else 1
    check(op, ins, attrs, opset=13, rtol=1e-5, atol=1e-6, n_outputs=n_out)


@pytest.mark.parametrize("ignore", [-1, 10])
def test_ignore_index_outside_the_classes(ignore: int) -> None:
    x, target = _case((4,), ignore)
    check("SoftmaxCrossEntropyLoss", [x, target, WEIGHT], {"ignore_index": ignore}, opset=13, rtol=1e-5,
          atol=1e-6, n_outputs=2)


def test_double_and_int32_targets() -> None:
    x, target = _case((2,))
    check("SoftmaxCrossEntropyLoss", [x.astype(np.float64), target.astype(np.int32)], {"reduction": "sum"},
          opset=13, oracle="reference", rtol=1e-12, n_outputs=2)


def test_a_target_outside_the_classes_is_an_execution_error() -> None:
    x, target = _case(())
    target[0] = C
    with pytest.raises(ExecutionError, match=r"target 5 is not a class index in \[0, 5\)"):
        run_ge("NegativeLogLikelihoodLoss", [x, target])


def test_infer_shapes_and_errors() -> None:
    f32, i64 = "float32", "int64"
    assert infer("NegativeLogLikelihoodLoss", [((N, C, 4), f32), ((N, 4), i64)], {"reduction": "none"})[0].shape \
        == (N, 4)
    loss, log_prob = infer("SoftmaxCrossEntropyLoss", [((-1, C, 2), f32), ((-1, 2), i64)], n_outputs=2)
    assert loss.shape == () and log_prob.shape == (-1, C, 2)
    infer_error("NegativeLogLikelihoodLoss", [((N, C, 4), f32), ((N, 5), i64)],
                match=r"target must have shape \[3, 4\]")
    infer_error("NegativeLogLikelihoodLoss", [((N, C), f32), ((N,), "float32")], match="int32 or int64")
    infer_error("NegativeLogLikelihoodLoss", [((N,), f32), ((N,), i64)], match="rank >= 2")
    infer_error("SoftmaxCrossEntropyLoss", [((N, C), f32), ((N,), i64), ((C + 1,), f32)],
                match="weight must be a 1-D float32 tensor of C=5 values")
    infer_error("SoftmaxCrossEntropyLoss", [((N, C), f32), ((N,), i64)], {"reduction": "max"},
                match="reduction 'max'")
    infer_error("SoftmaxCrossEntropyLoss", [((N, C), "int32"), ((N,), i64)], match="input must be one of")


def test_facts() -> None:
    for op in ("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"):
        opdef = REGISTRY.get(op)
        assert opdef is not None and opdef.category == Category.OPAQUE and opdef.deterministic


LOSS_OPS = {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"}


@pytest.mark.parametrize("case", [c for c in cases_for(LOSS_OPS | {
    "LogSoftmax", "Identity", "Gather", "Unsqueeze", "Squeeze", "Mul", "Div", "ReduceSum", "ReduceMean", "Neg",
    "Equal", "Where", "Not", "Cast", "Shape", "Slice", "Reshape", "Concat", "ConstantOfShape", "Sub", "Add",
    "GatherElements", "Expand", "Greater", "Less", "And", "Or"}) if {n.op_type for n in c.model.graph.node} & LOSS_OPS],
    ids=lambda c: c.name)
def test_conformance(case: Any) -> None:
    run_case(case)
