"""ATen table rows: the neural-network ops, several of them kept whole where GE has one op for them.

`linear`, `layer_norm`, `batch_norm`, `scaled_dot_product_attention`, `gelu`, `softmax`/`log_softmax` and
the convolutions are kept out of the decomposition (capture.py) because GE computes each as one op
(Gemm/MatMul, LayerNormalization, BatchNormalization, Attention, Gelu, Softmax, Conv) that its fusion
passes and the simulator know; decomposed, they would come back as a dozen elementwise nodes to re-fuse.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ge_core.frontend.torch.aten_math import Row, arg
from ge_core.frontend.torch.emit import Arg, ConversionProblem, Emitter


def _linear(e: Emitter, n: Arg) -> str:
    """x @ W.T + b: Gemm for a 2-D input (as the ONNX exporter writes it), else MatMul (+ Add)."""
    x, weight, bias = n.args[0], n.args[1], arg(n, 2, "bias")
    if e.rank(x) == 2:
        inputs = [e.tensor(x), e.tensor(weight)] + ([e.tensor(bias)] if bias is not None else [])
        return e.one("Gemm", inputs, {"transB": 1})
    product = e.one("MatMul", [e.tensor(x), e.one("Transpose", [e.tensor(weight)], {"perm": [1, 0]})])
    return product if bias is None else e.one("Add", [product, e.tensor(bias)])


def _ones_like_last(e: Emitter, x: Arg, value: float, shape: tuple[int, ...]) -> str:
    return e.const(np.full(shape, value, dtype=np.dtype(e.dtype(x))), "affine")


def _layer_norm(e: Emitter, n: Arg) -> str:
    x, normalized = n.args[0], list(n.args[1])
    weight, bias = arg(n, 2, "weight"), arg(n, 3, "bias")
    eps = float(arg(n, 4, "eps", 1e-5))
    shape = tuple(int(d) for d in normalized)
    scale = e.tensor(weight) if weight is not None else _ones_like_last(e, x, 1.0, shape)
    shift = e.tensor(bias) if bias is not None else _ones_like_last(e, x, 0.0, shape)
    return e.one("LayerNormalization", [e.tensor(x), scale, shift], {"axis": -len(shape), "epsilon": eps})


def _group_norm(e: Emitter, n: Arg) -> str:
    """group_norm(x, groups, weight, bias, eps): per-channel scale and bias (opset 21's form)."""
    x, groups, weight, bias = n.args[0], n.args[1], arg(n, 2, "weight"), arg(n, 3, "bias")
    channels = (int(e.shape(x)[1]),)
    scale = e.tensor(weight) if weight is not None else _ones_like_last(e, x, 1.0, channels)
    shift = e.tensor(bias) if bias is not None else _ones_like_last(e, x, 0.0, channels)
    attrs = {"num_groups": int(groups), "epsilon": float(arg(n, 4, "eps", 1e-5))}
    return e.one("GroupNormalization", [e.tensor(x), scale, shift], attrs)


def _batch_norm(e: Emitter, n: Arg) -> str:
    """batch_norm(x, w, b, mean, var, training, momentum, eps) in eval mode: BatchNormalization."""
    x, weight, bias, mean, var = n.args[:5]
    if arg(n, 5, "training", False):
        raise ConversionProblem("batch norm in training mode; call model.eval() before exporting")
    return _bn(e, x, weight, bias, mean, var, float(arg(n, 7, "eps", 1e-5)))


def _bn_no_training(e: Emitter, n: Arg) -> list[str]:
    """_native_batch_norm_legit_no_training(x, w, b, mean, var, momentum, eps) -> (y, saved mean, rstd)."""
    x, weight, bias, mean, var = n.args[:5]
    return [_bn(e, x, weight, bias, mean, var, float(arg(n, 6, "eps", 1e-5)))]


def _bn(e: Emitter, x: Arg, weight: Arg, bias: Arg, mean: Arg, var: Arg, eps: float) -> str:
    channels = (int(e.shape(x)[1]),)
    scale = e.tensor(weight) if weight is not None else _ones_like_last(e, x, 1.0, channels)
    shift = e.tensor(bias) if bias is not None else _ones_like_last(e, x, 0.0, channels)
    return e.one("BatchNormalization", [e.tensor(x), scale, shift, e.tensor(mean), e.tensor(var)],
                 {"epsilon": eps})


def _conv_attrs(rank: int, stride: Any, padding: Any, dilation: Any) -> dict[str, Any]:
    def spatial(v: Any, default: int) -> list[int]:
        values = [default] if v is None else [v] if isinstance(v, int) else list(v)
        return [int(x) for x in (values * rank if len(values) == 1 else values)]
    if isinstance(padding, str):
        raise ConversionProblem(f"padding={padding!r}; give the padding as numbers")
    pads = spatial(padding, 0)
    return {"strides": spatial(stride, 1), "pads": pads + pads, "dilations": spatial(dilation, 1)}


def _conv(e: Emitter, n: Arg) -> str:
    """conv1d/2d/3d(x, w, b, stride, padding, dilation, groups)."""
    x, weight, bias = n.args[0], n.args[1], arg(n, 2, "bias")
    attrs = _conv_attrs(e.rank(x) - 2, arg(n, 3, "stride"), arg(n, 4, "padding"), arg(n, 5, "dilation"))
    attrs["group"] = int(arg(n, 6, "groups", 1))
    inputs = [e.tensor(x), e.tensor(weight)] + ([e.tensor(bias)] if bias is not None else [])
    return e.one("Conv", inputs, attrs)


def _convolution(e: Emitter, n: Arg) -> str:
    """convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups)."""
    x, weight, bias = n.args[0], n.args[1], n.args[2]
    attrs = _conv_attrs(e.rank(x) - 2, n.args[3], n.args[4], n.args[5])
    attrs["group"] = int(n.args[8])
    inputs = [e.tensor(x), e.tensor(weight)] + ([e.tensor(bias)] if bias is not None else [])
    if n.args[6]:
        attrs["output_padding"] = [int(p) for p in n.args[7]]
        return e.one("ConvTranspose", inputs, attrs)
    return e.one("Conv", inputs, attrs)


def _pool_attrs(n: Arg, rank: int) -> dict[str, Any]:
    kernel = [int(k) for k in n.args[1]] * (rank if len(n.args[1]) == 1 else 1)
    stride = arg(n, 2, "stride") or kernel
    padding = arg(n, 3, "padding", 0)
    attrs = _conv_attrs(rank, stride, padding, None)
    attrs.pop("dilations")
    attrs["kernel_shape"] = kernel
    return attrs


def _max_pool(e: Emitter, n: Arg) -> list[str]:
    """max_pool2d(_with_indices)(x, kernel, stride, padding, dilation, ceil_mode): the values only."""
    x = n.args[0]
    attrs = _pool_attrs(n, e.rank(x) - 2)
    attrs["dilations"] = _conv_attrs(e.rank(x) - 2, None, None, arg(n, 4, "dilation"))["dilations"]
    attrs["ceil_mode"] = int(bool(arg(n, 5, "ceil_mode", False)))
    return [e.one("MaxPool", [e.tensor(x)], attrs)]


def _avg_pool(e: Emitter, n: Arg) -> str:
    """avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)."""
    x = n.args[0]
    if arg(n, 6, "divisor_override") is not None:
        raise ConversionProblem("avg_pool with divisor_override")
    attrs = _pool_attrs(n, e.rank(x) - 2)
    attrs["ceil_mode"] = int(bool(arg(n, 4, "ceil_mode", False)))
    attrs["count_include_pad"] = int(bool(arg(n, 5, "count_include_pad", True)))
    return e.one("AveragePool", [e.tensor(x)], attrs)


def _adaptive_avg_pool(e: Emitter, n: Arg) -> str:
    """To 1x1: GlobalAveragePool; to a size that divides the input: an AveragePool of fixed windows."""
    x, size = n.args[0], [int(s) for s in n.args[1]]
    spatial = e.shape(x)[2:]
    if all(s == 1 for s in size):
        return e.one("GlobalAveragePool", [e.tensor(x)])
    if not all(isinstance(d, int) and d % s == 0 for d, s in zip(spatial, size, strict=True)):
        raise ConversionProblem(f"adaptive average pooling of {list(map(str, spatial))} to {size} (windows of "
                                "unequal size)")
    kernel = [d // s for d, s in zip(spatial, size, strict=True)]
    return e.one("AveragePool", [e.tensor(x)], {"kernel_shape": kernel, "strides": kernel})


def _softmax(op_type: str) -> Row:
    def row(e: Emitter, n: Arg) -> str:
        if len(n.args) > 2 and n.args[2] not in (None, False):
            raise ConversionProblem("softmax with a dtype or half_to_float; cast the input first")
        return e.one(op_type, [e.tensor(n.args[0])], {"axis": int(n.args[1])})
    return row


def _gelu(e: Emitter, n: Arg) -> str:
    return e.one("Gelu", [e.tensor(n.args[0])], {"approximate": str(n.kwargs.get("approximate", "none"))})


def _sdpa(e: Emitter, n: Arg) -> str:
    """scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale=, enable_gqa=)."""
    q, k, v = n.args[:3]
    mask, causal = arg(n, 3, "attn_mask"), bool(arg(n, 5, "is_causal", False))
    if float(arg(n, 4, "dropout_p", 0.0)) != 0.0:
        raise ConversionProblem("attention dropout; export in eval mode (dropout_p=0)")
    if causal and str(e.shape(q)[-2]) != str(e.shape(k)[-2]):
        raise ConversionProblem("causal attention with query and key lengths that differ (PyTorch aligns "
                                "the mask top-left, GE's Attention bottom-right)")
    attrs: dict[str, Any] = {"is_causal": int(causal)}
    scale = n.kwargs.get("scale")
    if scale is not None:
        attrs["scale"] = float(scale)
    inputs = [e.tensor(q), e.tensor(k), e.tensor(v)] + ([e.tensor(mask)] if mask is not None else [])
    return e.one("Attention", inputs, attrs)


def _upsample(mode: str) -> Row:
    """upsample_nearest2d / upsample_bilinear2d (.vec): Resize to the output's sizes."""
    def row(e: Emitter, n: Arg) -> str:
        x = n.args[0]
        out = e.shape(n)
        if not all(isinstance(d, int) for d in out):
            raise ConversionProblem("interpolates to a symbolic size")
        align = bool(arg(n, 2, "align_corners", False)) if mode == "linear" else False
        coord = "align_corners" if align else ("asymmetric" if mode == "nearest" else "half_pixel")
        attrs = {"mode": mode, "coordinate_transformation_mode": coord}
        if mode == "nearest":
            attrs["nearest_mode"] = "floor"
        return e.one("Resize", [e.tensor(x), "", "", e.ints(out)], attrs)
    return row


NN_ROWS: dict[str, Row] = {
    "aten.linear.default": _linear,
    "aten.layer_norm.default": _layer_norm,
    "aten.native_layer_norm.default": lambda e, n: [_layer_norm(e, n)],
    "aten.group_norm.default": _group_norm,
    "aten.batch_norm.default": _batch_norm,
    "aten._native_batch_norm_legit_no_training.default": _bn_no_training,
    "aten.conv1d.default": _conv,
    "aten.conv2d.default": _conv,
    "aten.conv3d.default": _conv,
    "aten.convolution.default": _convolution,
    "aten.max_pool2d.default": lambda e, n: _max_pool(e, n)[0],
    "aten.max_pool2d_with_indices.default": _max_pool,
    "aten.avg_pool2d.default": _avg_pool,
    "aten.adaptive_avg_pool2d.default": _adaptive_avg_pool,
    "aten._adaptive_avg_pool2d.default": _adaptive_avg_pool,
    "aten.softmax.int": _softmax("Softmax"),
    "aten._softmax.default": _softmax("Softmax"),
    "aten.log_softmax.int": _softmax("LogSoftmax"),
    "aten._log_softmax.default": _softmax("LogSoftmax"),
    "aten.gelu.default": _gelu,
    "aten.scaled_dot_product_attention.default": _sdpa,
    "aten.upsample_nearest2d.vec": _upsample("nearest"),
    "aten.upsample_bilinear2d.vec": _upsample("linear"),
}
