"""Structured mutations of real sample models, through the onnx API (and a few byte overwrites).

Each mutation takes a model, a seeded `random.Random` and the case's folder (where it may plant data files,
links and FIFOs) and returns the model to write, or raw bytes. `SECRET` sits outside every case folder:
no byte of it may ever reach an output.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from ge_core.samples import sample_bytes

BASES = ("conv_bn_relu", "residual_block", "mlp", "transformer_encoder", "dead_branches_consts",
         "ocr_rec_crnn_paddle")
STATIC_SHAPES = {"mlp": {"x": [2, 64]}, "transformer_encoder": {"hidden": [1, 12, 64], "mask": [1, 12]},
                 "ocr_rec_crnn_paddle": {"x": [1, 3, 32, 100]}}
HOSTILE_NAMES = ("../escape", "/etc/passwd", "a\nge_core inspect: OK, no problems found", "file", "allow_pickle",
                 "x" * 5000, "\x1b[31mred", "tab\tname", "", "中文", "a/b/../../c", "dump_dir/../../x")
ABSURD_INTS = (-1, 0, 1 << 40, -(1 << 62), (1 << 63) - 1, 7)
ABSURD_DIMS = (0, -1, 1 << 40, 3)


@dataclass(frozen=True)
class Mutant:
    name: str  # which mutation, for the report
    data: bytes  # what is written to model.onnx


Mutation = Callable[[onnx.ModelProto, random.Random, Path, Path], onnx.ModelProto | bytes]


def base_model(name: str) -> onnx.ModelProto:
    model = onnx.load_from_string(sample_bytes(name))
    for value in model.graph.input:  # fixed shapes, so the mutation (not a missing --input-shape) decides
        if value.name in STATIC_SHAPES.get(name, {}):
            dims = value.type.tensor_type.shape.dim
            for dim, size in zip(dims, STATIC_SHAPES[name][value.name], strict=True):
                dim.Clear()
                dim.dim_value = size
    return model


# -- graph structure -----------------------------------------------------------------------------------

def delete_node(model: onnx.ModelProto, rng: random.Random, folder: Path, secret: Path) -> onnx.ModelProto:
    if model.graph.node:
        del model.graph.node[rng.randrange(len(model.graph.node))]
    return model


def rewire_input(model: onnx.ModelProto, rng: random.Random, folder: Path, secret: Path) -> onnx.ModelProto:
    """An input wired to any tensor (a later one makes a cycle), or to a name nobody makes."""
    nodes = [n for n in model.graph.node if n.input]
    if nodes:
        node = rng.choice(nodes)
        tensors = [t for n in model.graph.node for t in n.output] + ["no_such_tensor", ""]
        node.input[rng.randrange(len(node.input))] = rng.choice(tensors)
    return model


def make_cycle(model: onnx.ModelProto, rng: random.Random, folder: Path, secret: Path) -> onnx.ModelProto:
    nodes = model.graph.node
    if len(nodes) >= 2:
        first, later = rng.sample(range(len(nodes)), 2)
        first, later = min(first, later), max(first, later)
        if nodes[first].input and nodes[later].output:
            nodes[first].input[0] = nodes[later].output[0]
    return model


def duplicate_outputs(model: onnx.ModelProto, rng: random.Random, folder: Path, secret: Path) -> onnx.ModelProto:
    nodes = model.graph.node
    if rng.random() < 0.5 and len(nodes) >= 2:
        a, b = rng.sample(list(nodes), 2)
        if a.output and b.output:
            b.output[0] = a.output[0]
    elif model.graph.output:
        model.graph.output.append(model.graph.output[0])
    return model


# -- attributes, dims, dtypes --------------------------------------------------------------------------

def attribute_wrong_type(model: onnx.ModelProto, rng: random.Random, folder: Path,
                         secret: Path) -> onnx.ModelProto:
    with_attrs = [n for n in model.graph.node if n.attribute]
    if with_attrs:
        node = rng.choice(with_attrs)
        attr = rng.choice(list(node.attribute))
        value = rng.choice([[1.5, 2.5], "text", 3.25, [1, 2, 3], -4,
                            numpy_helper.from_array(np.zeros(2, np.float32))])
        attr.CopyFrom(helper.make_attribute(attr.name, value))
    return model


def attribute_absurd(model: onnx.ModelProto, rng: random.Random, folder: Path, secret: Path) -> onnx.ModelProto:
    with_attrs = [n for n in model.graph.node if n.attribute]
    if with_attrs:
        attr = rng.choice(list(rng.choice(with_attrs).attribute))
        if attr.type == AttributeProto.INT:
            attr.i = rng.choice(ABSURD_INTS)
        elif attr.type == AttributeProto.INTS:
            attr.ints[:] = [rng.choice(ABSURD_INTS) for _ in range(rng.choice([0, 1, 3, 9]))]
        elif attr.type == AttributeProto.FLOAT:
            attr.f = rng.choice([float("nan"), float("inf"), -1e30, 0.0])
        elif attr.type == AttributeProto.TENSOR:
            attr.t.dims[:] = [rng.choice(ABSURD_DIMS) for _ in range(rng.randint(0, 3))]
    return model


def dims_absurd(model: onnx.ModelProto, rng: random.Random, folder: Path, secret: Path) -> onnx.ModelProto:
    if rng.random() < 0.5 and model.graph.input:
        for dim in rng.choice(list(model.graph.input)).type.tensor_type.shape.dim:
            dim.Clear()
            dim.dim_value = rng.choice(ABSURD_DIMS)
    else:
        with_dims = [i for i in model.graph.initializer if i.dims]
        if with_dims:
            init = rng.choice(with_dims)
            init.dims[rng.randrange(len(init.dims))] = rng.choice(ABSURD_DIMS)
    return model


def wrong_dtype(model: onnx.ModelProto, rng: random.Random, folder: Path, secret: Path) -> onnx.ModelProto:
    code = rng.choice([0, 99, TensorProto.BOOL, TensorProto.BFLOAT16, TensorProto.COMPLEX128, TensorProto.STRING,
                       TensorProto.INT4, TensorProto.FLOAT8E4M3FN, TensorProto.INT64, TensorProto.FLOAT16])
    target = rng.choice(["initializer", "input", "output"])
    if target == "initializer" and model.graph.initializer:
        rng.choice(list(model.graph.initializer)).data_type = code
    elif target == "input" and model.graph.input:
        rng.choice(list(model.graph.input)).type.tensor_type.elem_type = code
    elif model.graph.output:
        rng.choice(list(model.graph.output)).type.tensor_type.elem_type = code
    return model


def opset_change(model: onnx.ModelProto, rng: random.Random, folder: Path, secret: Path) -> onnx.ModelProto:
    choice = rng.choice(["1", "99", "missing", "domain"])
    if choice == "missing":
        del model.opset_import[:]
    elif choice == "domain" and model.graph.node:
        rng.choice(list(model.graph.node)).domain = rng.choice(["com.evil", "ai.onnx.ml", "ge"])
    else:
        for opset in model.opset_import:
            if opset.domain in ("", "ai.onnx"):
                opset.version = int(choice)
    return model


# -- names ---------------------------------------------------------------------------------------------

def hostile_name(model: onnx.ModelProto, rng: random.Random, folder: Path, secret: Path) -> onnx.ModelProto:
    """Nodes and tensors renamed (tensors consistently, so the model may still run) to hostile names."""
    for _ in range(rng.randint(1, 4)):
        name = rng.choice(HOSTILE_NAMES)
        if rng.random() < 0.5 and model.graph.node:
            rng.choice(list(model.graph.node)).name = name
            continue
        tensors = [t for n in model.graph.node for t in n.output if t]
        if tensors:
            _rename_tensor(model, rng.choice(tensors), name)
    return model


def _rename_tensor(model: onnx.ModelProto, old: str, new: str) -> None:
    for node in model.graph.node:
        node.input[:] = [new if t == old else t for t in node.input]
        node.output[:] = [new if t == old else t for t in node.output]
    for value in [*model.graph.output, *model.graph.value_info]:
        if value.name == old:
            value.name = new


def invalid_utf8_name(model: onnx.ModelProto, rng: random.Random, folder: Path, secret: Path) -> bytes:
    marker = "UTF8MARKER"
    _rename_tensor(model, rng.choice([t for n in model.graph.node for t in n.output if t] or ["y"]), marker)
    invalid = b"\xff\xfe\xc3(\x80\xc0\xaf\xed\xa0\x80"  # as long as the marker: the protobuf still decodes
    return model.SerializeToString().replace(marker.encode(), invalid)


# -- external data -------------------------------------------------------------------------------------

def external_data(model: onnx.ModelProto, rng: random.Random, folder: Path, secret: Path) -> onnx.ModelProto:
    """Some tensor marked external, pointing at the secret, a link, a FIFO, /proc, a NUL or a huge file."""
    tensor = _some_tensor(model, rng)
    kind = rng.choice(["absolute", "dotdot", "symlink", "fifo", "proc", "nul", "huge", "huge_no_length",
                       "inside", "dir_symlink", "string"])
    location = {"absolute": str(secret), "dotdot": f"../{secret.name}", "proc": "/proc/self/environ",
                "nul": "data\x00.bin", "fifo": "pipe.bin", "symlink": "link.bin", "dir_symlink": "up/"
                + secret.name}.get(kind, "data.bin")
    if kind == "symlink":
        os.symlink(secret, folder / "link.bin")
    elif kind == "dir_symlink":
        os.symlink(secret.parent, folder / "up")
    elif kind == "fifo":
        os.mkfifo(folder / "pipe.bin")
    elif kind in ("huge", "huge_no_length", "string"):
        with open(folder / "data.bin", "wb") as f:
            f.truncate(rng.choice([64 << 20, 12 << 30]))  # sparse: no disk, but reading it costs memory
    elif kind == "inside":  # a legitimate data file (of a fitting or wrong size)
        (folder / "data.bin").write_bytes(bytes(rng.choice([0, 4, 16])))
    if kind == "string":
        tensor.data_type = TensorProto.STRING
    extra = [] if kind in ("huge_no_length", "string") else [("length", str(rng.choice([16, 1 << 40, -1])))]
    _make_external(tensor, [("location", location), ("offset", str(rng.choice([0, 0, -5, 1 << 40]))), *extra])
    return model


def _some_tensor(model: onnx.ModelProto, rng: random.Random) -> TensorProto:
    """An initializer, or a tensor planted in another place a TensorProto can sit."""
    place = rng.choice(["initializer", "constant", "sparse_attr", "function"])
    if place == "initializer" and model.graph.initializer:
        return rng.choice(list(model.graph.initializer))
    tensor = numpy_helper.from_array(np.zeros(4, np.float32), "planted")
    if place == "sparse_attr" and model.graph.node:
        attr = rng.choice(list(model.graph.node)).attribute.add()
        attr.name, attr.type = "planted", AttributeProto.SPARSE_TENSORS
        sparse = attr.sparse_tensors.add()
        sparse.values.CopyFrom(tensor)
        sparse.indices.CopyFrom(numpy_helper.from_array(np.arange(4, dtype=np.int64), "idx"))
        sparse.dims[:] = [4]
        return sparse.values
    if place == "function":
        node = helper.make_node("Constant", [], ["c"], value=tensor)
        model.functions.append(helper.make_function("evil", "F", [], ["c"], [node], [helper.make_opsetid("", 17)]))
        return model.functions[-1].node[0].attribute[0].t
    node = helper.make_node("Constant", [], ["planted_c"], name="planted_const", value=tensor)
    model.graph.node.insert(0, node)
    return model.graph.node[0].attribute[0].t


def _make_external(tensor: TensorProto, entries: list[tuple[str, str]]) -> None:
    tensor.ClearField("raw_data")
    tensor.ClearField("float_data")
    tensor.data_location = TensorProto.EXTERNAL
    del tensor.external_data[:]
    for key, value in entries:
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value


# -- bytes ---------------------------------------------------------------------------------------------

def byte_overwrite(model: onnx.ModelProto, rng: random.Random, folder: Path, secret: Path) -> bytes:
    """Random bytes overwritten until the result still decodes as a ModelProto (up to a few tries)."""
    data = bytearray(model.SerializeToString())
    for _ in range(20):
        trial = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            trial[rng.randrange(len(trial))] = rng.randrange(256)
        try:
            onnx.ModelProto().ParseFromString(bytes(trial))
        except Exception:
            continue
        return bytes(trial)
    return bytes(data)


MUTATIONS: tuple[Mutation, ...] = (
    delete_node, rewire_input, make_cycle, duplicate_outputs, attribute_wrong_type, attribute_absurd, dims_absurd,
    wrong_dtype, opset_change, hostile_name, invalid_utf8_name, external_data, byte_overwrite,
)


def make_mutant(seed: int, folder: Path, secret: Path) -> Mutant:
    """Mutant number `seed`: a base model and one to three mutations, all chosen by the seed."""
    rng = random.Random(seed)
    model = base_model(rng.choice(BASES))
    names = []
    result: onnx.ModelProto | bytes = model
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        mutation = rng.choice(MUTATIONS)
        names.append(mutation.__name__)
        if isinstance(result, bytes):
            break
        result = mutation(result, rng, folder, secret)
    return Mutant("+".join(names), result if isinstance(result, bytes) else result.SerializeToString())
