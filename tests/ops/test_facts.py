"""The op facts in the registry agree with each other, with ONNX's schemas, with the kernels and with the
hardware profiles; and no code outside ge_core/ops keeps its own set of op names instead of asking."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import onnx
import pytest

from ge_core.hardware import load_profile, profile_names
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY, Category, NpuLayout, OpDef, Unit, VectorClass
from ge_core.ops.common import zero_flop_cost

OPS = list(REGISTRY)
ONNX_OPS = [op for op in OPS if not op.domain]
RNG = np.random.default_rng(0)


def _ids(ops: list[OpDef]) -> list[str]:
    return [op.op_type for op in ops]


def _schema(op: OpDef) -> onnx.defs.OpSchema:
    return onnx.defs.get_schema(op.op_type, 21, "")


def _where(fact: str, ops: list[OpDef] = OPS) -> list[OpDef]:
    return [op for op in ops if getattr(op, fact)]


def test_every_fact_is_resolved() -> None:
    """unit and vector_class default to what the category says; after construction neither is None."""
    for op in OPS:
        assert isinstance(op.unit, Unit) and isinstance(op.vector_class, VectorClass), op.op_type


@pytest.mark.parametrize("op", _where("commutative"), ids=_ids(_where("commutative")))
def test_commutative_ops_are_binary_and_really_commute(op: OpDef) -> None:
    schema = _schema(op)
    assert schema.min_input == schema.max_input == 2, f"{op.op_type} is not a binary op"
    assert op.category in (Category.ELEMENTWISE, Category.BROADCAST)
    node = Node("n", op.op_type, ("a", "b"), ("y",))
    allowed = set(schema.type_constraints[0].allowed_type_strs)  # the dtypes the op takes (bool, ints, floats)
    dtypes = [d for d, onnx_name in (("bool", "bool"), ("float32", "float"), ("int32", "int32"))
              if f"tensor({onnx_name})" in allowed]
    assert dtypes, f"{op.op_type} takes none of bool, float32, int32"
    for dtype in dtypes:
        a = (RNG.standard_normal((3, 4)) * 3).astype(dtype)
        b = (RNG.standard_normal((4,)) * 3).astype(dtype)
        ab, ba = op.kernel(node, [a, b])[0], op.kernel(node, [b, a])[0]
        np.testing.assert_array_equal(ab, ba)


def test_a_nondeterministic_op_is_never_foldable() -> None:
    for op in OPS:
        assert op.deterministic or not op.foldable, op.op_type
    relu = REGISTRY.get("Relu")
    assert relu is not None
    with pytest.raises(ValueError, match="nondeterministic"):
        dataclasses.replace(relu, deterministic=False)  # a random op left foldable is refused


@pytest.mark.parametrize("op", _where("training_input"), ids=_ids(_where("training_input")))
def test_training_input_is_the_schemas_training_mode(op: OpDef) -> None:
    assert op.training_input is not None
    assert _schema(op).inputs[op.training_input].name == "training_mode"


def test_units_agree_with_view_and_category() -> None:
    for op in OPS:
        assert (op.unit == Unit.NONE) == op.view, op.op_type
        assert (op.unit == Unit.CUBE) == (op.category == Category.CUBE), op.op_type


NO_ARITHMETIC = [op for op in OPS if op.unit in (Unit.MTE, Unit.SCALAR) and op.run_subgraphs is None]


@pytest.mark.parametrize("op", NO_ARITHMETIC, ids=_ids(NO_ARITHMETIC))
def test_dma_only_and_scalar_ops_do_no_arithmetic(op: OpDef) -> None:
    """DMA copies bytes as they are and shape arithmetic reads no data: neither costs a FLOP. (Control
    flow is scheduled by the scalar unit but costs what its subgraphs cost: tests/sim covers it.)"""
    assert op.cost is zero_flop_cost, op.op_type
    if op.unit == Unit.MTE:  # data movement: each output element comes from one input element
        assert op.category == Category.INJECTIVE, op.op_type
    else:
        assert op.category == Category.OPAQUE, op.op_type  # never fused into a vector kernel


def test_vector_classes_agree_with_categories() -> None:
    for op in OPS:
        assert (op.vector_class == VectorClass.REDUCE) == (op.category == Category.REDUCE), op.op_type
        if op.vector_class == VectorClass.DATA_MOVE:
            assert op.category in (Category.INJECTIVE, Category.OPAQUE), op.op_type
        if op.vector_class == VectorClass.TRANSCENDENTAL:
            assert op.unit == Unit.VECTOR and op.category != Category.INJECTIVE, op.op_type


@pytest.mark.parametrize("name", profile_names())
def test_every_profile_prices_every_vector_class(name: str) -> None:
    assert set(VectorClass) <= set(load_profile(name).vector_class_cycles), name


@pytest.mark.parametrize("op", _where("activation"), ids=_ids(_where("activation")))
def test_activations_are_one_output_elementwise_ops(op: OpDef) -> None:
    """What a cube kernel can apply on its way out: standard, elementwise, one output of input 0's shape."""
    assert not op.domain and op.category in (Category.ELEMENTWISE, Category.BROADCAST)
    assert op.unit == Unit.VECTOR and _schema(op).max_output == 1
    x = RNG.standard_normal((2, 3, 4, 4)).astype(np.float32)
    extra = [np.full((1,), 0.25, np.float32)] if _schema(op).min_input == 2 else []  # PRelu's slope
    y = op.kernel(Node("n", op.op_type, ("x", *("s" * len(extra))), ("y",)), [x, *extra])
    assert len(y) == 1 and y[0].shape == x.shape


@pytest.mark.parametrize("op", [op for op in OPS if op.npu_layout is not None],
                         ids=_ids([op for op in OPS if op.npu_layout is not None]))
def test_npu_layouts_fit_the_ops(op: OpDef) -> None:
    assert not op.domain, "NC1HWC0 kernels are standard ops here"
    inputs = _schema(op).inputs
    if op.npu_layout == NpuLayout.CUBE:  # FRACTAL_Z holds the weight at input 1
        assert op.category == Category.CUBE and inputs[1].name == "W"
    else:
        assert op.category != Category.CUBE, op.op_type
    if op.npu_layout == NpuLayout.CONCAT:
        assert inputs[0].option == onnx.defs.OpSchema.FormalParameterOption.Variadic
    if op.npu_layout == NpuLayout.PASS_THROUGH:  # follows its input because it hands the values on as they are
        x = RNG.standard_normal((1, 16, 2, 2)).astype(np.float32)
        np.testing.assert_array_equal(op.kernel(Node("n", op.op_type, ("x",), ("y",)), [x])[0], x)


@pytest.mark.parametrize("op", _where("reduce_span"), ids=_ids(_where("reduce_span")))
def test_reduce_spans_are_whole_reductions(op: OpDef) -> None:
    """Only reduces whose output keeps the input shape have a span, and it divides the input's elements."""
    assert op.category == Category.REDUCE and op.reduce_span is not None
    shape = (2, 4, 3, 5)
    node = Node("n", op.op_type, ("x",), ("y",), {"num_groups": 2, "axis": 2})
    span = op.reduce_span(node, shape)
    assert 1 < span < int(np.prod(shape)) and int(np.prod(shape)) % span == 0


@pytest.mark.parametrize("op", _where("device_bytes"), ids=_ids(_where("device_bytes")))
def test_device_byte_costs_count_the_padding(op: OpDef) -> None:
    """An op flagged device_bytes prices NC1HWC0's padded bytes itself (the simulator adds none)."""
    desc = TensorDesc((1, 3, 4, 4), "float32", "NC1HWC0", origin_shape=(1, 3, 4, 4), origin_format="NCHW")
    assert desc.device_nbytes is not None and desc.nbytes is not None and desc.device_nbytes > desc.nbytes
    cost = op.cost(Node("n", op.op_type, ("x",), ("y",), domain=op.domain), [desc], [desc])
    assert cost.bytes_read == desc.device_nbytes


# ---- no op-name sets outside ge_core/ops --------------------------------------------------------------
ROOT = Path(__file__).resolve().parents[2] / "ge_core"
# Literal collections of op names that are one rewrite's or one model's own cases (each says why in a
# comment where it stands). Anything else is a fact of the ops and belongs in their OpDefs.
ALLOWED = {
    ("passes/cleanup/fold_scale.py", ("Conv", "ConvTranspose")),  # each op's own weight layout
    ("passes/cleanup/fold_batchnorm.py", ("Conv", "ConvTranspose", "Gemm")),  # fold_scale's cases with a bias
    ("passes/cleanup/reshape_chain.py", ("Squeeze", "Unsqueeze")),  # re-pointed by their axes
    ("samples/registry.py", ("Conv", "Gemm", "MatMul")),  # the weight-init heuristic's cases
    ("passes/fusion/graph/conv_activation.py", ("Add", "Sum")),  # a pattern node's accepted ops
}


def _op_name_collections(path: Path) -> list[tuple[str, ...]]:
    """Tuples, lists and sets of two or more string literals that are all registered op names."""
    known = {op.op_type for op in OPS}
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) >= 2:
            names = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(names) == len(node.elts) and all(n in known for n in names):
                found.append(tuple(names))
    return found


def test_no_op_name_sets_outside_ops() -> None:
    stray = [(str(p.relative_to(ROOT)), names) for p in sorted(ROOT.rglob("*.py"))
             if p.relative_to(ROOT).parts[0] != "ops" for names in _op_name_collections(p)]
    unexpected = [s for s in stray if s not in ALLOWED]
    assert not unexpected, f"op-name sets outside ge_core/ops (make them OpDef facts): {unexpected}"
