"""Build GE Workbench's sample ONNX models, with seeded inputs and ONNX Runtime's outputs for each.

    python sample_models/build_samples.py            # writes next to this script
    python sample_models/build_samples.py --out DIR  # writes into DIR (the determinism test uses this)

Every model is made with onnx.helper + numpy from fixed seeds, so each run writes the same bytes.
For every valid model we also write `<name>.inputs.npz` (seeded random inputs; symbolic dims become
batch 2 / seq 12) and `<name>.outputs.npz` (ONNX Runtime, keys = graph output names). The `broken`
models are for debugging demos: they are saved without running them (each says why below).
"""

from __future__ import annotations

import argparse
import io
import math
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8
F32 = TensorProto.FLOAT
I64 = TensorProto.INT64
HERE = Path(__file__).resolve().parent
Feeds = dict[str, np.ndarray]


class Builder:
    """Collects the nodes and initializers of one graph; names are readable and deterministic."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._count = 0

    def init(self, name: str, array: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def randn(self, name: str, shape: tuple[int, ...], std: float) -> str:
        return self.init(name, (self.rng.standard_normal(shape) * std).astype(np.float32))

    def uniform(self, name: str, shape: tuple[int, ...], low: float, high: float) -> str:
        return self.init(name, self.rng.uniform(low, high, shape).astype(np.float32))

    def op(self, op_type: str, inputs: list[str], name: str = "", domain: str = "", **attrs: object) -> str:
        """Add a one-output node; its output tensor is named like the node."""
        if not name:
            name = f"{op_type.lower()}_{self._count}"
            self._count += 1
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=name, domain=domain, **attrs))
        return name

    def const(self, name: str, array: np.ndarray) -> str:
        """A Constant node (what exporters emit for small literals)."""
        return self.op("Constant", [], name, value=numpy_helper.from_array(array, name))

    def conv(self, x: str, name: str, cin: int, cout: int, k: int, stride: int = 1, bias: bool = True) -> str:
        w = self.randn(f"{name}.weight", (cout, cin, k, k), math.sqrt(2.0 / (cin * k * k)))
        ins = [x, w, self.randn(f"{name}.bias", (cout,), 0.1)] if bias else [x, w]
        pad = k // 2
        return self.op("Conv", ins, name, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4)

    def bn(self, x: str, name: str, c: int) -> str:
        ins = [x, self.uniform(f"{name}.weight", (c,), 0.5, 1.5), self.randn(f"{name}.bias", (c,), 0.1),
               self.randn(f"{name}.running_mean", (c,), 0.1),
               self.uniform(f"{name}.running_var", (c,), 0.5, 1.5)]
        return self.op("BatchNormalization", ins, name, epsilon=1e-5)

    def linear(self, x: str, name: str, k: int, n: int) -> str:
        """MatMul by a [k, n] weight then Add a bias, as exporters write nn.Linear."""
        w = self.randn(f"{name}.weight", (k, n), 1.0 / math.sqrt(k))
        mm = self.op("MatMul", [x, w], f"{name}.matmul")
        return self.op("Add", [mm, self.randn(f"{name}.bias", (n,), 0.1)], name)

    def model(self, name: str, inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
              doc: str, opsets: tuple[tuple[str, int], ...] = (("", OPSET),)) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, inputs, outputs, initializer=self.inits, doc_string=doc)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                                  producer_name="ge-workbench build_samples.py", producer_version="1")
        model.ir_version = IR_VERSION
        return model


def tensor(name: str, shape: list[int | str | None], dtype: int = F32) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def i64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def f32(value: float) -> np.ndarray:
    return np.array(value, dtype=np.float32)


# --- valid samples -------------------------------------------------------------------------------


def conv_bn_relu() -> onnx.ModelProto:
    b = Builder(seed=1)
    x = b.op("Relu", [b.bn(b.conv("image", "conv1", 3, 16, 3), "bn1", 16)], "relu1")
    x = b.op("Relu", [b.bn(b.conv(x, "conv2", 16, 32, 3, stride=2), "bn2", 32)], "relu2")
    x = b.op("Flatten", [b.op("GlobalAveragePool", [x], "pool")], "flatten", axis=1)
    w = b.randn("fc.weight", (10, 32), 1.0 / math.sqrt(32))
    x = b.op("Gemm", [x, w, b.randn("fc.bias", (10,), 0.1)], "fc", transB=1)
    b.op("Softmax", [x], "probs", axis=-1)
    return b.model("conv_bn_relu", [tensor("image", [1, 3, 32, 32])], [tensor("probs", [1, 10])],
                   "Conv-BN-ReLU x2, global pool and a classifier: the classic Conv+BN fusion target.")


def residual_block() -> onnx.ModelProto:
    b = Builder(seed=2)
    # Block 1: identity shortcut.
    y = b.bn(b.conv("x", "block1.conv1", 16, 16, 3, bias=False), "block1.bn1", 16)
    y = b.op("Relu", [y], "block1.relu1")
    y = b.bn(b.conv(y, "block1.conv2", 16, 16, 3, bias=False), "block1.bn2", 16)
    x = b.op("Relu", [b.op("Add", [y, "x"], "block1.add")], "block1.relu2")
    # Block 2: stride 2, 16 -> 32 channels, so the shortcut is a 1x1 projection with stride 2.
    y = b.conv(x, "block2.conv1", 16, 32, 3, stride=2, bias=False)
    y = b.op("Relu", [b.bn(y, "block2.bn1", 32)], "block2.relu1")
    y = b.bn(b.conv(y, "block2.conv2", 32, 32, 3, bias=False), "block2.bn2", 32)
    s = b.bn(b.conv(x, "block2.shortcut", 16, 32, 1, stride=2, bias=False), "block2.shortcut_bn", 32)
    b.op("Relu", [b.op("Add", [y, s], "block2.add")], "y")
    return b.model("residual_block", [tensor("x", [1, 16, 16, 16])], [tensor("y", [1, 32, 8, 8])],
                   "Two ResNet basic blocks: an identity skip and a strided 1x1 projection skip.")


def mlp() -> onnx.ModelProto:
    b = Builder(seed=3)
    h = b.op("Relu", [b.linear("x", "fc1", 64, 128)], "relu")
    h = b.op("Tanh", [b.linear(h, "fc2", 128, 64)], "tanh")
    b.linear(h, "logits", 64, 10)
    return b.model("mlp", [tensor("x", ["batch", 64])], [tensor("logits", ["batch", 10])],
                   "A three-layer perceptron with a symbolic batch dimension.")


def _layer_norm_primitives(b: Builder, x: str, name: str, dim: int) -> str:
    """LayerNorm spelled out as exporters of older opsets do (a fusion target)."""
    mean = b.op("ReduceMean", [x], f"{name}.mean", axes=[-1], keepdims=1)
    d = b.op("Sub", [x, mean], f"{name}.sub")
    var = b.op("ReduceMean", [b.op("Pow", [d, b.const(f"{name}.two", f32(2.0))], f"{name}.pow")],
               f"{name}.var", axes=[-1], keepdims=1)
    std = b.op("Sqrt", [b.op("Add", [var, b.const(f"{name}.eps", f32(1e-12))], f"{name}.add_eps")],
               f"{name}.sqrt")
    n = b.op("Div", [d, std], f"{name}.div")
    n = b.op("Mul", [n, b.uniform(f"{name}.weight", (dim,), 0.5, 1.5)], f"{name}.mul")
    return b.op("Add", [n, b.randn(f"{name}.bias", (dim,), 0.1)], name)


def _gelu_erf(b: Builder, x: str, name: str) -> str:
    """GELU as x * 0.5 * (1 + erf(x / sqrt(2))), the way torch exports it."""
    e = b.op("Erf", [b.op("Div", [x, b.const(f"{name}.sqrt2", f32(math.sqrt(2.0)))], f"{name}.div")],
             f"{name}.erf")
    e = b.op("Add", [e, b.const(f"{name}.one", f32(1.0))], f"{name}.add")
    return b.op("Mul", [b.op("Mul", [x, e], f"{name}.mul"), b.const(f"{name}.half", f32(0.5))], name)


def transformer_encoder() -> onnx.ModelProto:
    b = Builder(seed=4)
    heads, head_dim, dim = 4, 16, 64
    # Exporter-style dynamic reshape targets: Shape -> Gather -> Unsqueeze -> Concat.
    shape = b.op("Shape", ["hidden"], "attn.shape")
    axes0 = b.const("attn.axes0", i64(0))
    batch = b.op("Unsqueeze", [b.op("Gather", [shape, b.const("attn.idx0", i64(0).reshape(()))],
                                    "attn.batch"), axes0], "attn.batch_1d")
    seq = b.op("Unsqueeze", [b.op("Gather", [shape, b.const("attn.idx1", i64(1).reshape(()))],
                                  "attn.seq"), axes0], "attn.seq_1d")
    split = b.op("Concat", [batch, seq, b.const("attn.heads", i64(heads)),
                            b.const("attn.head_dim", i64(head_dim))], "attn.split_shape", axis=0)
    merge = b.op("Concat", [batch, seq, b.const("attn.dim", i64(dim))], "attn.merge_shape", axis=0)

    def project(name: str, perm: list[int]) -> str:
        h = b.op("Reshape", [b.linear("hidden", f"attn.{name}", dim, dim), split], f"attn.{name}_heads")
        return b.op("Transpose", [h], f"attn.{name}_t", perm=perm)

    q, k, v = project("q", [0, 2, 1, 3]), project("k", [0, 2, 3, 1]), project("v", [0, 2, 1, 3])
    scores = b.op("MatMul", [q, k], "attn.qk")
    scores = b.op("Div", [scores, b.const("attn.scale", f32(math.sqrt(head_dim)))], "attn.scaled")
    # (1 - mask) * -10000, broadcast as [1, 1, 1, seq].
    m = b.op("Unsqueeze", ["mask", b.const("attn.mask_axes", i64(1, 2))], "attn.mask_4d")
    m = b.op("Sub", [b.const("attn.mask_one", f32(1.0)), m], "attn.mask_inv")
    m = b.op("Mul", [m, b.const("attn.mask_neg", f32(-10000.0))], "attn.mask_bias")
    probs = b.op("Softmax", [b.op("Add", [scores, m], "attn.masked")], "attn.probs", axis=-1)
    ctx = b.op("Transpose", [b.op("MatMul", [probs, v], "attn.context")], "attn.context_t", perm=[0, 2, 1, 3])
    ctx = b.op("Reshape", [ctx, merge], "attn.context_merged")
    x = b.op("Add", [b.linear(ctx, "attn.out", dim, dim), "hidden"], "attn.residual")
    x = _layer_norm_primitives(b, x, "ln1", dim)
    h = _gelu_erf(b, b.linear(x, "ffn.fc1", dim, 2 * dim), "ffn.gelu")
    y = b.op("Add", [b.linear(h, "ffn.fc2", 2 * dim, dim), x], "ffn.residual")
    gamma, beta = b.uniform("ln2.weight", (dim,), 0.5, 1.5), b.randn("ln2.bias", (dim,), 0.1)
    b.op("LayerNormalization", [y, gamma, beta], "output", axis=-1, epsilon=1e-12)
    return b.model("transformer_encoder", [tensor("hidden", [1, "seq", dim]), tensor("mask", [1, "seq"])],
                   [tensor("output", [1, "seq", dim])],
                   "One post-LN BERT encoder layer as torch exports it (dynamic reshapes, Erf GELU).")


def dead_branches_consts() -> onnx.ModelProto:
    b = Builder(seed=5)
    c = b.conv("image", "conv", 3, 8, 3)
    # Per-channel Mul/Add by constants right after a Conv: foldable into its weight and bias.
    x = b.op("Mul", [c, b.uniform("post_scale", (1, 8, 1, 1), 0.5, 1.5)], "conv.scale")
    x = b.op("Add", [x, b.randn("post_shift", (1, 8, 1, 1), 0.1)], "conv.shift")
    x = b.op("Dropout", [b.op("Identity", [x], "identity")], "dropout")
    relu = b.op("Relu", [x], "relu")
    # Dead branch: computed, but reaches no graph output.
    dead = b.op("Mul", [b.op("Sigmoid", [c], "dead.sigmoid"), b.const("dead.k", f32(3.0))], "dead.mul")
    b.op("ReduceSum", [dead], "dead.sum", keepdims=0)
    # A Transpose followed by its inverse, then a Cast to the dtype it already has.
    x = b.op("Transpose", [relu], "to_nhwc", perm=[0, 2, 3, 1])
    x = b.op("Transpose", [x], "to_nchw", perm=[0, 3, 1, 2])
    x = b.op("Cast", [x], "cast_same", to=F32)
    # Constants only: Constant -> Add -> Mul -> Reshape, a bias the folder should compute once.
    k = b.op("Add", [b.const("k1", np.linspace(-1, 1, 8, dtype=np.float32)),
                     b.const("k2", np.full(8, 0.25, np.float32))], "k.add")
    k = b.op("Mul", [k, b.const("k.half", f32(0.5))], "k.mul")
    k = b.op("Reshape", [k, b.const("k.shape", i64(1, 8, 1, 1))], "k.reshape")
    x = b.op("Add", [x, k], "add_folded_bias")
    # Reshape -> Reshape chain; the second target is itself a constant expression.
    x = b.op("Reshape", [x, b.const("flat1.shape", i64(1, 8, 256))], "flat1")
    target = b.op("Mul", [b.const("flat2.a", i64(1, 1024)), b.const("flat2.b", i64(1, 2))], "flat2.shape")
    x = b.op("Reshape", [x, target], "flat2")
    # Two identical subexpressions (CSE merges them).
    x = b.op("Add", [b.op("Tanh", [x], "tanh_a"), b.op("Tanh", [x], "tanh_b")], "tanh_sum")
    # Shape of a tensor whose shape is static, feeding a Reshape: folds to a constant.
    b.op("Reshape", [x, b.op("Shape", [relu], "relu.shape")], "y")
    return b.model("dead_branches_consts", [tensor("image", [1, 3, 16, 16])], [tensor("y", [1, 8, 16, 16])],
                   "Work for the optimisation passes: dead code, constant chains, no-ops, CSE, Conv folding.")


# --- broken samples ------------------------------------------------------------------------------


def unsupported_op() -> onnx.ModelProto:
    """Ops GE has no kernel for, as real exports carry them: sequences (TF/Keras exports), a text
    featurizer (scikit-learn pipelines) and a custom domain op."""
    b = Builder(seed=6)
    pieces = b.op("SplitToSequence", ["x"], "split", axis=1)
    joined = b.op("ConcatFromSequence", [pieces], "joined", axis=1)
    b.op("FancyOp", [joined], "y", domain="com.example", alpha=0.5)
    b.op("TfIdfVectorizer", ["tokens"], "ngrams", mode="TF", min_gram_length=1, max_gram_length=1,
         max_skip_count=0, ngram_counts=[0], ngram_indexes=[0, 1, 2], pool_int64s=[2, 3, 5])
    inputs = [tensor("x", [1, 8]), tensor("tokens", [1, 6], I64)]
    outputs = [tensor("y", [1, 8]), tensor("ngrams", [1, 3])]
    return b.model("unsupported_op", inputs, outputs,
                   "Broken on purpose: SplitToSequence, ConcatFromSequence, TfIdfVectorizer and a custom "
                   "com.example::FancyOp.", opsets=(("", OPSET), ("com.example", 1)))


def shape_mismatch() -> onnx.ModelProto:
    b = Builder(seed=7)
    b.op("MatMul", ["x", b.randn("w", (5, 6), 0.5)], "y")  # [1,3,4] @ [5,6]: inner dims 4 != 5
    b.op("Add", [b.op("Relu", ["a"], "relu_a"), "bias"], "z")  # [1,8] + [1,3]: not broadcastable
    inputs = [tensor("x", [1, 3, 4]), tensor("a", [1, 8]), tensor("bias", [1, 3])]
    return b.model("shape_mismatch", inputs, [tensor("y", [None] * 3), tensor("z", [None] * 2)],
                   "Broken on purpose: two independent shape errors (a MatMul and an Add).")


def fails_in_a_pass() -> onnx.ModelProto:
    """A Reshape whose target is sliced from a 70,000-element ConstantOfShape: too big for import's shape
    inference to evaluate (it propagates values up to 65,536 elements), so the model imports with the
    Reshape's output unknown. ConstantFoldingPass computes the target, [4, 4], and the graph after it fails
    verification: 6 elements cannot be reshaped into 16. The error was in the model all along; a pass finds it."""
    b = Builder(seed=8)
    sizes = b.op("ConstantOfShape", [b.init("count", i64(70_000))], "sizes", value=numpy_helper.from_array(i64(4)))
    target = b.op("Slice", [sizes, b.init("start", i64(0)), b.init("end", i64(2))], "target")
    b.op("Relu", [b.op("Reshape", ["x", target], "reshaped")], "y")
    return b.model("fails_in_a_pass", [tensor("x", [1, 6])], [tensor("y", [None, None])],
                   "Broken on purpose: a Reshape target only constant folding computes, which does not fit.")


# --- checking, running, writing ------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    build: Callable[[], onnx.ModelProto]
    # "run": full check (with shape inference) + ORT outputs; "checker": full check only;
    # "structure": checker without shape inference.
    check: str
    seed: int = 0  # for the inputs


SPECS: dict[str, Spec] = {
    "conv_bn_relu": Spec(conv_bn_relu, "run", 11),
    "residual_block": Spec(residual_block, "run", 12),
    "mlp": Spec(mlp, "run", 13),
    "transformer_encoder": Spec(transformer_encoder, "run", 14),
    "dead_branches_consts": Spec(dead_branches_consts, "run", 15),
    # onnx.checker passes it: it skips ops of domains it has no schemas for (check_custom_domain=True
    # would refuse FancyOp). Nothing can run com.example::FancyOp, ORT included, so it is not run.
    "unsupported_op": Spec(unsupported_op, "checker"),
    # Structure only: the full check runs strict shape inference, which rightly rejects both
    # mismatches, and ORT refuses to load it, so it is saved unrun - finding them is the workbench's job.
    "shape_mismatch": Spec(shape_mismatch, "structure"),
    # The full check passes (onnx's inference leaves the Reshape's output unknown, as ours does); ORT would
    # refuse to run it, so it is saved unrun.
    "fails_in_a_pass": Spec(fails_in_a_pass, "checker"),
}
CONCRETE_DIMS = {"batch": 2, "seq": 12}


def make_inputs(model: onnx.ModelProto, seed: int) -> Feeds:
    """Seeded random inputs; symbolic dims get CONCRETE_DIMS. A `mask` masks the last 3 positions."""
    rng = np.random.default_rng(seed)
    feeds: Feeds = {}
    for vi in model.graph.input:
        shape = [d.dim_value if d.HasField("dim_value") else CONCRETE_DIMS[d.dim_param]
                 for d in vi.type.tensor_type.shape.dim]
        if vi.name == "mask":
            mask = np.ones(shape, np.float32)
            mask[..., -3:] = 0.0
            feeds[vi.name] = mask
        else:
            feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def run_ort(model: onnx.ModelProto, feeds: Feeds) -> Feeds:
    """ONNX Runtime on CPU, one thread, no graph rewrites: the plain op-by-op reference."""
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds), strict=True))


def write_npz(path: Path, arrays: Feeds) -> None:
    """Like np.savez, but with fixed zip timestamps so the bytes are the same on every run."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for key in sorted(arrays):
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            data = io.BytesIO()
            np.lib.format.write_array(data, np.ascontiguousarray(arrays[key]), allow_pickle=False)
            zf.writestr(info, data.getvalue())
    path.write_bytes(buf.getvalue())


def build_one(name: str, spec: Spec, out_dir: Path) -> list[Path]:
    model = spec.build()
    written = [out_dir / f"{name}.onnx"]
    onnx.checker.check_model(model, full_check=spec.check != "structure")
    if spec.check == "run":
        feeds = make_inputs(model, spec.seed)
        outputs = run_ort(model, feeds)
        write_npz(out_dir / f"{name}.inputs.npz", feeds)
        write_npz(out_dir / f"{name}.outputs.npz", outputs)
        written += [out_dir / f"{name}.inputs.npz", out_dir / f"{name}.outputs.npz"]
    written[0].write_bytes(model.SerializeToString())
    return written


def build_all(out_dir: Path = HERE) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    return [p for name, spec in SPECS.items() for p in build_one(name, spec, out_dir)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: next to this script)")
    args = parser.parse_args(argv)
    for path in build_all(args.out):
        print(f"{path.stat().st_size:>8}  {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
