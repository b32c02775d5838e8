"""Device formats: the device shape of NC1HWC0 and FRACTAL_Z tensors, and the TransData op."""

from __future__ import annotations

import numpy as np
import pytest

from ge_core.ir.formats import FRACTAL_Z, NC1HWC0, device_shape
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY
from ge_core.ops.registry import Operand
from ge_core.passes.npu.edits import in_format


@pytest.mark.parametrize(("shape", "fmt", "device"), [
    ((1, 64, 56, 56), NC1HWC0, (1, 4, 56, 56, 16)),
    ((1, 3, 224, 224), NC1HWC0, (1, 1, 224, 224, 16)),  # 3 channels padded to one C0 block of 16
    ((2, 17, 5, 5), NC1HWC0, (2, 2, 5, 5, 16)),
    ((-1, 32, 7, 7), NC1HWC0, (-1, 2, 7, 7, 16)),  # unknown batch stays unknown
    ((1, -1, 7, 7), NC1HWC0, (1, -1, 7, 7, 16)),
    ((64, 1, 1), NC1HWC0, (1, 4, 1, 1, 16)),  # a per-channel constant, right-aligned to NCHW
    ((64, 3, 7, 7), FRACTAL_Z, (49, 4, 16, 16)),  # (C1*Kh*Kw, Co/16, 16, C0)
    ((32, 16, 3, 3), FRACTAL_Z, (9, 2, 16, 16)),
    ((1, 64, 56, 56), "NCHW", (1, 64, 56, 56)),
    ((8, 16), "ND", (8, 16)),
])
def test_device_shape(shape: tuple[int, ...], fmt: str, device: tuple[int, ...]) -> None:
    assert device_shape(shape, fmt) == device


def test_desc_in_a_device_format() -> None:
    desc = TensorDesc((1, 3, 4, 4), "float32", "NCHW")
    lowered = in_format(desc, NC1HWC0)
    assert (lowered.format, lowered.origin_format, lowered.origin_shape) == (NC1HWC0, "NCHW", (1, 3, 4, 4))
    assert lowered.shape == desc.shape  # CPU arrays keep the origin layout
    assert (desc.device_nbytes, lowered.device_nbytes) == (192, 1 * 1 * 4 * 4 * 16 * 4)
    assert lowered.text() == "f32[1,3,4,4]@NC1HWC0"
    assert lowered.to_json()["device_shape"] == [1, 1, 4, 4, 16]
    assert "device_shape" not in desc.to_json()  # target-independent descs serialise as before


def test_transdata_op() -> None:
    op = REGISTRY.get("TransData", "ge")
    assert op is not None and not op.view  # a real kernel on the NPU
    node = Node("t", "TransData", ("x",), ("y",), {"src_format": "NCHW", "dst_format": NC1HWC0}, domain="ge")
    x = TensorDesc((1, 3, 4, 4), "float32", "NCHW")
    (out,) = op.infer(node, [Operand(x)])
    assert (out.shape, out.dtype, out.format, out.origin_format) == ((1, 3, 4, 4), "float32", NC1HWC0, "NCHW")
    value = np.arange(48, dtype=np.float32).reshape(1, 3, 4, 4)
    assert np.array_equal(op.kernel(node, [value])[0], value)  # values stay in the origin layout
    cost = op.cost(node, [x], [out])
    assert (cost.flops, cost.bytes_read, cost.bytes_written) == (0, 192, 1024)  # C padded 3 -> 16
