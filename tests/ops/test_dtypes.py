"""Every ONNX data type end to end (ge_core/ir/dtypes.py): names, packed sizes, import -> run -> export,
an int4 model's memory plan and arena run, bfloat16/float16 models whose outputs keep their type, feeds.
Oracles: onnx (numpy_helper, onnx.reference) and ml_dtypes arithmetic, never ge_core itself."""

from __future__ import annotations

import io
import math

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import ge_core
from ge_core.errors import ModelError
from ge_core.frontend import to_onnx
from ge_core.frontend.onnx_schema import declared_output_problems
from ge_core.ir.dtypes import DTYPES, pack, unpack
from ge_core.ir.tensor import SHORT_DTYPE, TensorDesc, known_dtype
from ge_core.memory.validate import validate_plan
from ge_core.runtime import ArenaExecutor, Executor, random_feeds, relative_error
from ge_core.runtime.feeds import check_feeds
from ge_core.runtime.npz import npz_bytes
from tests.memory.test_report_reader import report_problems

OPSET = onnx.defs.onnx_opset_version()
NAMES = [d.name for d in DTYPES]
SUB_BYTE = ["int4", "uint4", "float4_e2m1fn", "int2", "uint2", "float6_e2m3fn", "float6_e3m2fn"]


def values(name: str, shape: tuple[int, ...] = (3, 3)) -> np.ndarray:
    """Values of `name` (nine: an odd count, so packed types end mid-byte)."""
    n = math.prod(shape)
    if name == "str":
        return np.array([f"s{i}" for i in range(n)], dtype=object).reshape(shape)
    if name == "bool":
        return (np.arange(n) % 3 == 0).reshape(shape)
    small = np.array([0, 1, -1, 2, -2, 1, 0, 3, -1] * (n // 9 + 1), np.float64)[:n]  # int2's range is -2..1
    if name in ("uint2", "uint4", "uint8", "uint16", "uint32", "uint64", "float8_e8m0fnu"):
        small = np.abs(small) if name != "float8_e8m0fnu" else 2.0 ** small
    if name == "int2":
        small = np.clip(small, -2, 1)
    if name.startswith("complex"):
        return (small + 1j * small[::-1]).astype(name).reshape(shape)
    return small.astype(name).reshape(shape)


def same(got: np.ndarray, want: np.ndarray) -> bool:
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype == object:
        return bool(got.tolist() == want.tolist())
    return got.tobytes() == want.tobytes() if want.dtype.itemsize > 1 or want.dtype == np.bool_ else \
        bool(np.array_equal(pack(got), pack(want)))  # one byte per element: compare the meaningful bits


# ---- names and sizes -----------------------------------------------------------------------------
def test_every_onnx_data_type_has_a_name_a_size_and_a_text_form() -> None:
    codes = [c for c in TensorProto.DataType.values() if c != TensorProto.UNDEFINED]
    assert sorted(d.onnx for d in DTYPES) == sorted(codes)
    for d in DTYPES:
        want = "str" if d.onnx == TensorProto.STRING else np.dtype(helper.tensor_dtype_to_np_dtype(d.onnx)).name
        assert d.name == want and known_dtype(d.name) and d.name in SHORT_DTYPE
        if d.name != "str":  # a tensor's bytes are what ONNX stores for it (packed for sub-byte types)
            raw = numpy_helper.from_array(values(d.name)).raw_data
            assert TensorDesc((3, 3), d.name).nbytes == len(raw), d.name


@pytest.mark.parametrize("name", SUB_BYTE)
@pytest.mark.parametrize("n", [0, 1, 3, 4, 9, 17])
def test_pack_is_onnx_packing(name: str, n: int) -> None:
    x = values(name, (n,)) if n else np.zeros((0,), name)
    packed = pack(x)
    assert packed.tobytes() == numpy_helper.from_array(x).raw_data
    assert same(unpack(packed, name, (n,)), x)


def test_sub_byte_payload_sizes_are_checked() -> None:
    good = helper.make_tensor("w", TensorProto.INT4, [5], vals=pack(values("int4", (5,))).tobytes(), raw=True)
    assert len(good.raw_data) == 3  # ceil(5 / 2)
    bad = TensorProto()
    bad.CopyFrom(good)
    bad.raw_data = b"\x00" * 5  # one byte per element, not packed
    for tensor, ok in ((good, True), (bad, False)):
        model = _identity_model("int4", tensor)
        if ok:
            ge_core.load_onnx(model)
        else:
            with pytest.raises(ModelError, match="raw data holds 5 bytes but dims \\[5\\] of int4 need 3"):
                ge_core.load_onnx(model)


# ---- import -> run -> export ---------------------------------------------------------------------
def _identity_model(name: str, constant: TensorProto | None = None) -> onnx.ModelProto:
    """y = Identity(x), z = Identity(c) for an input x and an initializer c of dtype `name`."""
    code = next(d.onnx for d in DTYPES if d.name == name)
    c = constant if constant is not None else numpy_helper.from_array(values(name), "c")
    c.name = "c"
    nodes = [helper.make_node("Identity", ["x"], ["y"]), helper.make_node("Identity", ["c"], ["z"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", code, [3, 3])],
                              [helper.make_tensor_value_info("y", code, [3, 3]),
                               helper.make_tensor_value_info("z", code, list(c.dims))], [c])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


@pytest.mark.parametrize("name", NAMES)
def test_every_dtype_round_trips_import_run_export(name: str) -> None:
    model = _identity_model(name)
    graph = ge_core.load_onnx(model.SerializeToString())
    assert graph.desc("x").dtype == graph.desc("y").dtype == graph.desc("z").dtype == name
    x = values(name)
    assert same(graph.constants["c"], x)  # decoded as its own dtype (no float32 stand-in)
    out = ge_core.execute(graph, {"x": x})
    assert same(out["y"], x) and same(out["z"], x)
    exported = to_onnx(graph)
    assert [v.type.tensor_type.elem_type for v in exported.graph.output] == [model.graph.output[0].type.tensor_type
                                                                            .elem_type] * 2
    (init,) = exported.graph.initializer
    assert same(numpy_helper.to_array(init), x)
    assert init.raw_data == model.graph.initializer[0].raw_data  # the same bytes (packed for sub-byte types)
    y, z = ReferenceEvaluator(exported).run(None, {"x": x})
    assert same(np.asarray(y, dtype=x.dtype), x) and same(np.asarray(z, dtype=x.dtype), x)


# ---- memory: an int4 model -----------------------------------------------------------------------
def int4_model(rows: int) -> onnx.ModelProto:
    """y = float(reshape(int4(x)^T)) + reshape(float(int4(x^T))): packed activations, a packed view, two
    packed tensors alive at once."""
    t = TensorProto
    n = [rows * 3]
    nodes = [helper.make_node("Cast", ["x"], ["q"], to=t.INT4),
             helper.make_node("Transpose", ["q"], ["qt"], perm=[1, 0]),
             helper.make_node("Reshape", ["qt", "flat"], ["qr"]),  # a view of qt's packed bytes
             helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0]),
             helper.make_node("Cast", ["xt"], ["q2"], to=t.INT4),
             helper.make_node("Cast", ["qr"], ["f"], to=t.FLOAT),
             helper.make_node("Cast", ["q2"], ["f2"], to=t.FLOAT),
             helper.make_node("Reshape", ["f2", "flat"], ["f2r"]),
             helper.make_node("Add", ["f", "f2r"], ["y"])]
    graph = helper.make_graph(nodes, "int4", [helper.make_tensor_value_info("x", t.FLOAT, [3, rows])],
                              [helper.make_tensor_value_info("y", t.FLOAT, n)],
                              [helper.make_tensor("flat", t.INT64, [1], n)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_an_int4_models_plan_counts_packed_bytes_and_the_arena_run_matches() -> None:
    rows = 1001  # 3003 int4 elements: 1502 packed bytes (3 blocks of 512), where one per byte needs 6
    model = int4_model(rows)
    x = (np.arange(3 * rows, dtype=np.float32).reshape(3, rows) % 19) - 9.0
    compiled = ge_core.compile(model.SerializeToString(), opt_level="O3")
    plan = compiled.memory
    assert plan is not None
    validate_plan(plan, compiled.graph)
    assert report_problems(compiled.report["memory"]) == []  # the independent reader agrees
    int4_allocs = [a for a in plan.allocations.values() if a.dtype == "int4"]
    assert int4_allocs and all(a.size == 3 * 512 for a in int4_allocs)
    arena = ArenaExecutor(compiled.graph, plan)
    assert not arena.off_arena and arena.packed
    got = arena.run({"x": x}).outputs["y"]
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(Executor(compiled.graph).run({"x": x}).outputs["y"], want)


# ---- bfloat16 and float16 models -----------------------------------------------------------------
def float_model(dtype: int) -> onnx.ModelProto:
    """Conv, pools, MatMul, Gemm, norms, Softmax and reductions on one float type."""
    h = helper
    nodes = [h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), h.make_node("Relu", ["c"], ["r"]),
             h.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             h.make_node("AveragePool", ["p"], ["a"], kernel_shape=[2, 2]),
             h.make_node("Flatten", ["a"], ["f"]), h.make_node("MatMul", ["f", "m"], ["mm"]),
             h.make_node("Gemm", ["mm", "g"], ["gm"], transB=1), h.make_node("Sigmoid", ["gm"], ["s"]),
             h.make_node("LayerNormalization", ["s", "ln"], ["l"], axis=-1),
             h.make_node("Softmax", ["l"], ["sm"]), h.make_node("ReduceMean", ["sm"], ["rm"], keepdims=1),
             h.make_node("Add", ["sm", "rm"], ["y"])]
    rng = np.random.default_rng(0)
    np_type = helper.tensor_dtype_to_np_dtype(dtype)

    def init(name: str, shape: tuple[int, ...]) -> TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.5).astype(np.float32).astype(np_type), name)

    inits = [init("w", (4, 2, 3, 3)), init("m", (36, 8)), init("g", (6, 8)), init("ln", (6,))]
    graph = h.make_graph(nodes, "floats", [h.make_tensor_value_info("x", dtype, [2, 2, 8, 8])],
                         [h.make_tensor_value_info("y", dtype, [2, 6])], inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 21)])


def _as_float32(model: onnx.ModelProto) -> onnx.ModelProto:
    """The same model computed in float32 (the oracle runs it, then rounds once to the model's type)."""
    wide = onnx.ModelProto()
    wide.CopyFrom(model)
    for init in wide.graph.initializer:
        init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float32), init.name))
    for value in [*wide.graph.input, *wide.graph.output]:
        value.type.tensor_type.elem_type = TensorProto.FLOAT
    return wide


@pytest.mark.parametrize("dtype", [TensorProto.BFLOAT16, TensorProto.FLOAT16])
def test_a_half_precision_models_outputs_keep_its_type(dtype: int) -> None:
    model = float_model(dtype)
    np_type = helper.tensor_dtype_to_np_dtype(dtype)
    x = np.random.default_rng(1).standard_normal((2, 2, 8, 8)).astype(np.float32).astype(np_type)
    (want,) = ReferenceEvaluator(_as_float32(model)).run(None, {"x": x.astype(np.float32)})
    graph = ge_core.load_onnx(model.SerializeToString())
    got = ge_core.execute(graph, {"x": x})["y"]
    assert got.dtype == np_type and graph.desc("y").dtype == np.dtype(np_type).name
    ulps = 2.0**-7 if dtype == TensorProto.BFLOAT16 else 2.0**-10  # one ulp of the type, a few kept
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=8 * ulps, atol=8 * ulps)
    compiled = ge_core.compile(model.SerializeToString(), opt_level="O3")
    assert compiled.memory is not None
    arena = ArenaExecutor(compiled.graph, compiled.memory)
    assert not arena.off_arena  # bfloat16 activations live in the arena too
    in_arena = arena.run({"x": x}).outputs["y"]
    assert in_arena.dtype == np_type
    assert relative_error(in_arena, got) < 4 * ulps


# ---- feeds, files, the legality check -------------------------------------------------------------
@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("str", "complex64", "complex128")])
def test_random_feeds_and_npz_files_keep_every_numeric_type(name: str) -> None:
    graph = ge_core.load_onnx(_identity_model(name).SerializeToString())
    feeds = random_feeds(graph, seed=0)
    assert feeds["x"].dtype.name == name and feeds["x"].shape == (3, 3)
    with np.load(io.BytesIO(npz_bytes(feeds)), allow_pickle=False) as data:
        read = {k: data[k] for k in data.files}  # ml_dtypes arrays come back as raw bytes (void)...
    checked = check_feeds(graph, read)  # ...which the input's declared type reads again
    assert same(checked["x"], feeds["x"])


def test_relative_error_compares_ml_dtypes_values() -> None:
    a = np.array([1.0, 2.0, 4.0], ml_dtypes.bfloat16)
    b = np.array([1.0, 2.0, 4.03125], ml_dtypes.bfloat16)
    assert relative_error(a, a) == 0.0 and 0 < relative_error(b, a) < 0.01


def test_the_legality_check_compares_declared_and_computed_types_by_name() -> None:
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E4M3FN)
    for declared, problems in ((TensorProto.FLOAT8E4M3FN, 0), (TensorProto.FLOAT8E5M2, 1)):
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                                  [helper.make_tensor_value_info("y", declared, [2])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
        result = ge_core.import_onnx(model)
        found = declared_output_problems(model, result.graph)
        assert len(found) == problems
        if problems:
            assert "declared FLOAT8E5M2, but the graph computes float8_e4m3fn" in found[0]
