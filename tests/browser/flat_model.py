"""A flat third-party-like model to upload: MobileNetV2-style inverted residual blocks (1x1 expand, 3x3
depthwise, 1x1 project, a residual Add where the shape allows), Conv + BatchNormalization + Relu/HardSwish
as exporters write them, node names without any scope (`Conv_12`), random weights from a fixed seed.
Built here, never downloaded: ~100 nodes, the shape of an uploaded PP-OCR or MobileNet backbone."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

# (expansion, output channels, stride) per block: the residual Add joins the stride-1 blocks of equal width
BLOCKS = ((1, 16, 1), (4, 24, 2), (4, 24, 1), (4, 32, 2), (4, 32, 1), (4, 32, 1), (4, 64, 2), (4, 64, 1),
          (4, 64, 1), (4, 96, 1), (4, 96, 1))
SIZE = 64  # input height and width


class _Builder:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[object] = []
        self.weights: list[object] = []

    def name(self, op: str) -> str:
        return f"{op}_{len(self.nodes)}"

    def tensor(self, name: str, value: np.ndarray) -> str:
        self.weights.append(numpy_helper.from_array(value.astype(np.float32), name))
        return name

    def conv_bn(self, x: str, cin: int, cout: int, kernel: int, stride: int, group: int = 1,
                act: str | None = "Relu") -> str:
        conv = self.name("Conv")
        w = self.tensor(f"{conv}.w", self.rng.normal(0, 0.1, (cout, cin // group, kernel, kernel)))
        self.nodes.append(helper.make_node("Conv", [x, w], [f"{conv}:0"], name=conv, kernel_shape=[kernel] * 2,
                                           strides=[stride] * 2, pads=[kernel // 2] * 4, group=group))
        bn = self.name("BatchNormalization")
        params = [self.tensor(f"{bn}.{p}", v) for p, v in (
            ("scale", self.rng.uniform(0.5, 1.5, cout)), ("bias", self.rng.normal(0, 0.1, cout)),
            ("mean", self.rng.normal(0, 0.1, cout)), ("var", self.rng.uniform(0.5, 1.5, cout)))]
        self.nodes.append(helper.make_node("BatchNormalization", [f"{conv}:0", *params], [f"{bn}:0"], name=bn))
        out = f"{bn}:0"
        if act is not None:
            node = self.name(act)
            self.nodes.append(helper.make_node(act, [out], [f"{node}:0"], name=node))
            out = f"{node}:0"
        return out

    def block(self, x: str, cin: int, expansion: int, cout: int, stride: int) -> str:
        hidden = cin * expansion
        y = self.conv_bn(x, cin, hidden, 1, 1) if expansion != 1 else x
        y = self.conv_bn(y, hidden, hidden, 3, stride, group=hidden)
        y = self.conv_bn(y, hidden, cout, 1, 1, act=None)
        if stride == 1 and cin == cout:
            add = self.name("Add")
            self.nodes.append(helper.make_node("Add", [x, y], [f"{add}:0"], name=add))
            y = f"{add}:0"
        return y


def flat_model(seed: int = 40) -> bytes:
    """The model's ONNX bytes (opset 17, input `image` 1x3x64x64, output `logits` 1x10)."""
    b = _Builder(seed)
    x = b.conv_bn("image", 3, 16, 3, 2, act="HardSwish")
    width = 16
    for expansion, cout, stride in BLOCKS:
        x = b.block(x, width, expansion, cout, stride)
        width = cout
    pool = b.name("GlobalAveragePool")
    b.nodes.append(helper.make_node("GlobalAveragePool", [x], [f"{pool}:0"], name=pool))
    flat = b.name("Flatten")
    b.nodes.append(helper.make_node("Flatten", [f"{pool}:0"], [f"{flat}:0"], name=flat))
    w = b.tensor("fc.w", b.rng.normal(0, 0.1, (10, width)))
    bias = b.tensor("fc.b", np.zeros(10))
    b.nodes.append(helper.make_node("Gemm", [f"{flat}:0", w, bias], ["logits"], name="Gemm_fc", transB=1))
    graph = helper.make_graph(b.nodes, "flat_mobilenet",  # type: ignore[arg-type]
                              [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, SIZE, SIZE])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
                              initializer=b.weights)  # type: ignore[arg-type]
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="flat_model")
    return model.SerializeToString()
