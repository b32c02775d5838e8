"""The sample registry: the models the CLI and the web app offer by name.

Six kinds of sample:
- `sample`:   small models built by sample_models/build_samples.py, committed with seeded inputs and
              ONNX Runtime's outputs (`<name>.inputs.npz`, `<name>.outputs.npz`);
- `broken`:   models built by the same script that the workbench must refuse, for debugging demos;
- `light`:    the real architectures onnx ships as test data (`onnx/backend/test/data/light`). Their
              weights are ConstantOfShape nodes that fill every weight with one constant, so every class
              comes out equally likely whatever a backend computes; they are served with seeded random
              weights instead (`randomize_weights`) and BatchNorm statistics calibrated on a seeded
              input (`ge_core.samples.calibrate`), so a numeric comparison means something;
- `exported`: models exported from real frameworks into sample_models/exported/, when present;
- `synthetic`: models built in memory, seeded, by bench/synthetic.py (the compile-scaling benchmark's
              generator), when that script is present: `synthetic_10k`, the scale test of every view;
- `torch`:    PyTorch modules built in code with seeded random weights (torch_models.py), converted by
              ge_core.from_torch and served as ONNX bytes (torch_samples.py), when PyTorch is installed;
- `ge_dump`:  GE graph dumps (ge_proto text) of our own compiles, made on demand (ge_dumps.py): `inspect`
              and the pages read them as they read a dump GE wrote.
"""

from __future__ import annotations

import functools
import importlib.util
import math
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Literal

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ge_core.errors import ModelError, UsageError
from ge_core.ops import REGISTRY
from ge_core.samples.calibrate import calibrate_batch_norms
from ge_core.samples.ge_dumps import GE_DUMPS, ge_dump_bytes
from ge_core.samples.torch_samples import available_torch_samples, torch_sample_bytes

SampleKind = Literal["sample", "broken", "light", "exported", "synthetic", "torch", "ge_dump"]

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "sample_models"
EXPORTED_DIR = SAMPLE_DIR / "exported"
LIGHT_DIR = Path(onnx.__file__).resolve().parent / "backend" / "test" / "data" / "light"
DEFAULT_SAMPLE = "conv_bn_relu"
LIGHT_SEED = 0
SYNTHETIC_SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "synthetic.py"
SYNTHETIC_SEED = 0
TORCH_MODELS = Path(__file__).resolve().parent / "torch_models.py"


@dataclass(frozen=True)
class Sample:
    """One named model. `input_shapes` is an ATC-style spec for its symbolic dims ("" if static)."""

    name: str
    title: str
    description: str
    kind: SampleKind
    path: Path  # the model file; for a synthetic or torch sample, the script that builds it
    input_shapes: str = ""
    nodes: int = 0  # synthetic samples: how many nodes to build

    @property
    def random_weights(self) -> bool:
        """Light models are served with seeded random weights instead of their constant ones."""
        return self.kind == "light"

    @property
    def inputs_path(self) -> Path | None:
        """Committed seeded inputs (built samples only)."""
        path = self.path.with_suffix(".inputs.npz")
        return path if self.kind == "sample" and path.exists() else None

    @property
    def outputs_path(self) -> Path | None:
        """Committed ONNX Runtime outputs for `inputs_path` (built samples only)."""
        path = self.path.with_suffix(".outputs.npz")
        return path if self.kind == "sample" and path.exists() else None

    def read_bytes(self) -> bytes:
        """The serialized model; light models come with seeded random weights and calibrated BatchNorm
        statistics (cached per process)."""
        if not self.path.exists():
            raise ModelError(f"sample '{self.name}': file {self.path} is missing.",
                             hint="Rebuild the samples with: python sample_models/build_samples.py")
        if self.random_weights:
            return _randomized_bytes(self.path, LIGHT_SEED)
        if self.kind == "synthetic":
            return _synthetic_bytes(self.path, self.nodes, SYNTHETIC_SEED)
        if self.kind == "torch":
            return torch_sample_bytes(self.name)
        if self.kind == "ge_dump":
            return ge_dump_bytes(self.name, get_sample(GE_DUMPS[self.name][2]).read_bytes())
        data = self.path.read_bytes()
        if self.kind == "exported" and _uses_external_data(onnx.load_from_string(data)):
            # The bytes path never reads external data, so inline it here from the model's own folder.
            return onnx.load(str(self.path), load_external_data=True).SerializeToString()
        return data

    def load(self) -> onnx.ModelProto:
        return onnx.load_from_string(self.read_bytes())


# name -> (title, description, input_shapes)
_BUILT: dict[str, tuple[str, str, str]] = {
    "conv_bn_relu": (
        "Small CNN: Conv-BN-Relu x2 + classifier",
        "A small image classifier: two Conv-BatchNorm-Relu stages, global pooling and a Gemm+Softmax "
        "head. The textbook case for folding BatchNorm into Conv and fusing Conv with Relu.", ""),
    "residual_block": (
        "Two ResNet basic blocks",
        "Two ResNet blocks, one with an identity skip and one with a strided 1x1 projection skip. "
        "Shows how a skip connection keeps a tensor alive longer, which shapes memory reuse.", ""),
    "mlp": (
        "MLP with a symbolic batch",
        "A three-layer perceptron (MatMul+Add, Relu, Tanh) whose batch dim is symbolic. Shows MatMul+Add "
        "fusion and how a dynamic dim is fixed with --input-shape.", "x:2,64"),
    "transformer_encoder": (
        "BERT-style encoder layer",
        "One transformer encoder layer as exporters write it: reshape targets built at run time by "
        "Shape-Gather-Concat, LayerNorm and GELU spelled out in primitives. Shows shape inference "
        "through dynamic shapes and pattern fusion.", "hidden:1,12,64;mask:1,12"),
    "dead_branches_consts": (
        "Work for the optimiser",
        "A tiny model full of removable work: a dead branch, constant chains, Identity/Dropout, a "
        "Transpose pair that cancels, a Reshape chain, a no-op Cast, duplicate subexpressions and a "
        "Mul/Add that folds into a Conv. Watch each pass remove something.", ""),
    "unsupported_op": (
        "Broken: unsupported operators",
        "Broken on purpose: uses SplitToSequence and ConcatFromSequence (sequences), TfIdfVectorizer and a "
        "custom com.example::FancyOp. The workbench should refuse it and list every unsupported op at once.", ""),
    "shape_mismatch": (
        "Broken: two shape errors",
        "Broken on purpose: a MatMul of [1,3,4] by a [5,6] weight, and an Add of [1,8] and [1,3]. "
        "Shows how shape errors name the node, its op and the shapes involved.", ""),
    "fails_in_a_pass": (
        "Broken: fails inside a pass",
        "Broken on purpose: a Reshape whose target is sliced from a 70,000-element constant, too big for "
        "import's shape inference to evaluate, so the model imports. ConstantFoldingPass computes the target, "
        "[4, 4], and the graph after it fails verification: 6 elements do not reshape into 16. Shows the Debug "
        "page's failing pass: its name, its stage, and the graph before it.", ""),
}
_BROKEN = {"unsupported_op", "shape_mismatch", "fails_in_a_pass"}

# light file stem -> (title, description)
_LIGHT: dict[str, tuple[str, str]] = {
    "resnet50": ("ResNet-50", "53 Conv+BatchNorm pairs with Relu and residual Sums; the classic "
                 "Conv+BN folding and memory-reuse workload."),
    "densenet121": ("DenseNet-121", "Dense blocks that Concat every earlier feature map, with BatchNorm "
                    "followed by a separate Mul/Add scale: a stress test for memory planning."),
    "inception_v1": ("Inception v1 (GoogLeNet)", "Parallel 1x1/3x3/5x5/pool branches joined by Concat, "
                     "with LRN: many small kernels side by side."),
    "inception_v2": ("Inception v2", "Inception branches with BatchNorm (and a separate Mul/Add scale) "
                     "after every Conv: lots of fusion candidates."),
    "squeezenet": ("SqueezeNet", "Fire modules: a 1x1 squeeze Conv, then 1x1 and 3x3 expand Convs joined "
                   "by Concat. Small and quick: a good first real model."),
    "shufflenet": ("ShuffleNet", "Grouped 1x1 Convs, depthwise Convs and channel shuffle written as "
                   "Reshape-Transpose-Reshape."),
    "vgg19": ("VGG-19", "16 plain 3x3 Convs and three large fully connected layers (the first is "
              "25088x4096, ~400 MB in float32): heavy on compute and memory."),
    "bvlc_alexnet": ("AlexNet (BVLC)", "Large-kernel Convs with LRN and MaxPool, then three fully "
                     "connected layers with Dropout."),
    "zfnet512": ("ZFNet-512", "An AlexNet-like network with a 7x7 first Conv, LRN and three fully "
                 "connected layers."),
}
_LIGHT_NOTE = (" From onnx's light test models (224x224 input, 1000 classes); loaded with seeded random "
               "weights because the shipped file fills every weight with one constant.")

# exported file stem -> (title, description, input_shapes)
_BERT_SHAPES = "input_ids:1,16;attention_mask:1,16;token_type_ids:1,16"
_EXPORTED: dict[str, tuple[str, str, str]] = {
    "ocr_det_db_paddle": (
        "OCR text detector (DB, Paddle export)",
        "A DB text detector exported by paddle2onnx: a small backbone with HardSigmoid squeeze-excite, an "
        "FPN with Resize and ConvTranspose up to a text probability map. Batch, height and width are "
        "dynamic.", "x:1,3,64,96"),
    "ocr_rec_crnn_paddle": (
        "OCR text recognizer (CRNN, Paddle export)",
        "A text recognizer exported by paddle2onnx: Conv features of a 32-pixel-high text line, then a "
        "small attention sequence head with LayerNorm spelled out. Batch and width are dynamic.",
        "x:1,3,32,100"),
    "bert_encoder_torch": (
        "BERT encoder (PyTorch export)",
        "A small BERT exported by torch.onnx (TorchScript): the Shape-Gather-Concat chains, mask "
        "arithmetic and decomposed LayerNorm that exporter really emits. Batch and sequence are dynamic.",
        _BERT_SHAPES),
    "bert_encoder_torch_dynamo": (
        "BERT encoder (PyTorch dynamo export)",
        "The same small BERT exported by torch.onnx's dynamo exporter (opset 18): far fewer nodes and "
        "LayerNormalization ops. Compare it with bert_encoder_torch.", _BERT_SHAPES),
}


# synthetic sample name -> (title, description, nodes)
_SYNTHETIC: dict[str, tuple[str, str, int]] = {
    "synthetic_10k": (
        "10,000 nodes of residual blocks (bench/synthetic.py)",
        "A seeded chain of 178 residual blocks over a small [1,8,4,4] tensor (bench/synthetic.py), each "
        "giving every O3 pass work: BatchNorm and scale folding, no-ops, transpose and reshape chains, "
        "constant gates, duplicates, dead branches, LayerNorm, attention, GELU and HardSwish. The scale "
        "test: big enough that every view must cope, cheap enough to run.", 10_000),
}


def list_samples() -> list[Sample]:
    """Every sample available here: built ones, light models, exported models that exist, synthetic ones
    (when bench/synthetic.py is here), then PyTorch ones (when torch is installed)."""
    samples = [Sample(name, title, desc, "broken" if name in _BROKEN else "sample",
                      SAMPLE_DIR / f"{name}.onnx", shapes)
               for name, (title, desc, shapes) in _BUILT.items()]
    for stem, (title, desc) in _LIGHT.items():
        path = LIGHT_DIR / f"light_{stem}.onnx"
        if path.exists():
            samples.append(Sample(stem, f"{title} (random weights)", desc + _LIGHT_NOTE, "light", path))
    if EXPORTED_DIR.is_dir():
        for path in sorted(EXPORTED_DIR.glob("*.onnx")):
            title, desc, shapes = _EXPORTED.get(
                path.stem, (path.stem, "A model exported from a framework into sample_models/exported.", ""))
            if path.stem not in {s.name for s in samples}:
                samples.append(Sample(path.stem, title, desc, "exported", path, shapes))
    if SYNTHETIC_SCRIPT.is_file():
        samples += [Sample(name, title, desc, "synthetic", SYNTHETIC_SCRIPT, nodes=n)
                    for name, (title, desc, n) in _SYNTHETIC.items()]
    samples += [Sample(name, title, desc, "torch", TORCH_MODELS) for name, (title, desc) in
                available_torch_samples().items()]
    return samples


def ge_dump_samples() -> list[Sample]:
    """GE graph dump samples (kind ge_dump): not models, so kept out of list_samples (the model picker, sweeps and
    `compile` take models); `inspect` and get_sample know them."""
    return [Sample(name, title, desc, "ge_dump", LIGHT_DIR / f"light_{model}.onnx")
            for name, (title, desc, model, _) in GE_DUMPS.items() if (LIGHT_DIR / f"light_{model}.onnx").exists()]


def get_sample(name: str) -> Sample:
    """The sample called `name` (a light model may also be named `light_<name>`)."""
    samples = {s.name: s for s in [*list_samples(), *ge_dump_samples()]}
    key = name.removeprefix("light_") if name not in samples else name
    if key not in samples:
        raise UsageError(f"unknown sample '{name}'.", hint=f"Known samples: {', '.join(samples)}.")
    return samples[key]


def sample_bytes(name: str) -> bytes:
    """The serialized model of a sample; light models come with seeded random weights and calibrated
    BatchNorm statistics (cached)."""
    return get_sample(name).read_bytes()


@functools.lru_cache(maxsize=4)  # vgg19 alone is ~570 MB once randomized: keep only a few
def _randomized_bytes(path: Path, seed: int) -> bytes:
    return light_model(onnx.load(str(path)), seed).SerializeToString()


@functools.lru_cache(maxsize=2)
def _synthetic_bytes(script: Path, nodes: int, seed: int) -> bytes:
    """The model bench/synthetic.py builds (seeded: the same bytes every time), cached per process."""
    data: bytes = _synthetic_module(script).synthetic_model(nodes, seed).SerializeToString()
    return data


def _synthetic_module(script: Path) -> ModuleType:
    """bench/synthetic.py, loaded from its file: `bench` is the repository's folder, not a package
    ge_core may import (it is not installed with ge_core, nor on sys.path when the app runs)."""
    spec = importlib.util.spec_from_file_location("ge_core_samples_synthetic", script)
    if spec is None or spec.loader is None:
        raise ModelError(f"cannot load the synthetic model builder {script}.")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def light_model(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """A light model as served: seeded random weights, then BatchNorm statistics calibrated on a seeded
    input so BN really normalises (without it resnet50's logits reach ~1e5 and its softmax is one-hot)."""
    return calibrate_batch_norms(randomize_weights(model, seed), seed, in_place=True)


def _uses_external_data(model: onnx.ModelProto) -> bool:
    return any(t.data_location == TensorProto.EXTERNAL for t in model.graph.initializer)


# --- randomize_weights -----------------------------------------------------------------------------

_Use = tuple[onnx.NodeProto, int]


def randomize_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """A copy of `model` whose float ConstantOfShape weights become seeded random initializers.

    Every ConstantOfShape whose shape input is an initializer is replaced by an initializer of that
    shape, scaled by the role its consumer gives it (He init for Conv/Gemm/MatMul weights, U(0.5,1.5)
    for BatchNorm scale/var and Mul scales, small normals for biases and means). Shape initializers
    left unused are dropped. In IR version < 4 every initializer is also a graph input, so each new
    weight takes the graph-input slot of the shape tensor it came from.
    """
    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    shapes = {t.name: t for t in graph.initializer}
    uses = _uses(graph)
    rng = np.random.default_rng(seed)
    replaced: list[int] = []
    new: list[tuple[onnx.ValueInfoProto, str]] = []  # (the new weight, the shape tensor it replaces)
    for i, node in enumerate(graph.node):
        dtype = _fill_dtype(node)
        if dtype is None or node.input[0] not in shapes:
            continue
        shape = tuple(int(d) for d in numpy_helper.to_array(shapes[node.input[0]]))
        values = _random_values(rng, shape, _role(node.output[0], uses)).astype(dtype, copy=False)
        new.append((_add_initializer(graph, node.output[0], values), node.input[0]))
        replaced.append(i)
    for i in reversed(replaced):
        del graph.node[i]
    still_used = {name for node in graph.node for name in _all_inputs(node)} | {o.name for o in graph.output}
    dropped = {shape_name for _, shape_name in new if shape_name not in still_used}
    for i in reversed([i for i, t in enumerate(graph.initializer) if t.name in dropped]):
        del graph.initializer[i]
    _swap_inputs(graph, new, dropped)
    return out


def _fill_dtype(node: onnx.NodeProto) -> np.dtype | None:
    """The dtype a ConstantOfShape fills with (float32 by default); None unless floating point."""
    if node.op_type != "ConstantOfShape":
        return None
    dtype = np.dtype(np.float32)
    for attr in node.attribute:
        if attr.name == "value":
            dtype = helper.tensor_dtype_to_np_dtype(attr.t.data_type)
    return dtype if np.issubdtype(dtype, np.floating) else None


def _uses(graph: onnx.GraphProto) -> dict[str, list[_Use]]:
    uses: dict[str, list[_Use]] = {}
    for node in graph.node:
        for i, name in enumerate(node.input):
            uses.setdefault(name, []).append((node, i))
    return uses


def _all_inputs(node: onnx.NodeProto) -> list[str]:
    """Input names of a node, including outer-scope names its subgraphs read."""
    names = list(node.input)
    for attr in node.attribute:
        for sub in [attr.g] if attr.HasField("g") else list(attr.graphs):
            names += [name for n in sub.node for name in _all_inputs(n)]
    return names


def _role(name: str, uses: dict[str, list[_Use]], depth: int = 0) -> _Use | None:
    """The first real consumer of `name` (op and input index), looking through pass-through ops."""
    for node, index in uses.get(name, []):
        if _passes_through(node) and index == 0 and depth < 4:
            beyond = _role(node.output[0], uses, depth + 1)
            if beyond is not None:
                return beyond
        return node, index
    return None


def _passes_through(node: onnx.NodeProto) -> bool:
    """A view (OpDef.view: Reshape, Squeeze, Identity...) or a Cast hands its input on unchanged in value;
    a weight's role is decided by what lies beyond. (Cast is this heuristic's own addition: a weight cast
    to another dtype keeps its role.)"""
    op = REGISTRY.get(node.op_type, node.domain)
    return op is not None and (op.view or op.op_type == "Cast")


def _random_values(rng: np.random.Generator, shape: tuple[int, ...], use: _Use | None) -> np.ndarray:
    # The init heuristic's own cases (which input of which op is a weight): names of ONNX protos, kept here.
    op, index = (use[0].op_type, use[1]) if use is not None else ("", -1)
    if op in ("Conv", "Gemm", "MatMul") and index == 1 and len(shape) >= 2:
        return _normal(rng, shape, math.sqrt(2.0 / max(_fan_in(use, shape), 1)))
    if (op == "BatchNormalization" and index in (1, 4)) or op == "Mul":
        # BN scale and variance, or a per-channel scale: U(0.5, 1.5).
        values = rng.random(shape, dtype=np.float32)
        values += np.float32(0.5)
        return values
    if op == "BatchNormalization":  # bias and mean
        return _normal(rng, shape, 0.1)
    return _normal(rng, shape, 0.05)  # Conv/Gemm biases, Add operands, anything else


def _fan_in(use: _Use | None, shape: tuple[int, ...]) -> int:
    """Inputs summed per output: Conv [out, in/g, kh, kw] -> prod(shape[1:]); Gemm [N, K] (transB) ->
    prod(shape[1:]), [K, N] -> prod(shape[:-1]); MatMul [..., K, N] -> K. A Gemm weight may be stored
    with extra leading 1s and reshaped on the way (inception_v1: [1, 1, 1000, 1024]); they are skipped."""
    op = use[0].op_type if use is not None else ""
    if op == "Conv":
        return math.prod(shape[1:])
    if op == "MatMul":
        return shape[-2]
    while len(shape) > 2 and shape[0] == 1:
        shape = shape[1:]
    trans_b = use is not None and any(a.name == "transB" and a.i for a in use[0].attribute)
    return math.prod(shape[1:]) if trans_b else math.prod(shape[:-1])


def _normal(rng: np.random.Generator, shape: tuple[int, ...], std: float) -> np.ndarray:
    values = rng.standard_normal(shape, dtype=np.float32)
    values *= np.float32(std)
    return values


def _add_initializer(graph: onnx.GraphProto, name: str, values: np.ndarray) -> onnx.ValueInfoProto:
    """Append `values` as an initializer, written straight into the graph (big FC weights are copied
    once, and only one random array is alive at a time). Returns its value info."""
    elem_type = helper.np_dtype_to_tensor_dtype(values.dtype)
    tensor = graph.initializer.add()
    tensor.name = name
    tensor.data_type = elem_type
    tensor.dims.extend(values.shape)
    tensor.raw_data = values.tobytes()
    return helper.make_tensor_value_info(name, elem_type, values.shape)


def _swap_inputs(graph: onnx.GraphProto, new: list[tuple[onnx.ValueInfoProto, str]], dropped: set[str]) -> None:
    """Each new weight takes the graph-input slot of its shape tensor, if that was a graph input
    (IR < 4 lists every initializer as a graph input; later IRs need not)."""
    by_shape: dict[str, list[onnx.ValueInfoProto]] = {}
    for info, shape_name in new:
        by_shape.setdefault(shape_name, []).append(info)
    inputs: list[onnx.ValueInfoProto] = []
    for vi in graph.input:
        inputs += by_shape.pop(vi.name, [])
        if vi.name not in dropped:
            copy = onnx.ValueInfoProto()
            copy.CopyFrom(vi)
            inputs.append(copy)
    del graph.input[:]
    graph.input.extend(inputs)
