"""The PaddleOCR models (``paddle_det`` detector, ``paddle_rec`` recogniser): seeded random parameters,
``paddle.jit.save`` then paddle2onnx (PaddleOCR's own flow), and an onnxruntime check."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import paddle
import paddle2onnx
from paddle import nn

from .config import GAIN_DET, GAIN_REC, OUT_DIR, PADDLE_OPSET, SEED
from .paddle_det import DBNet
from .paddle_rec import CRNN
from .verify import compare, ort_run


def _randomise_parameters(model: nn.Layer, rng: np.random.Generator) -> None:
    """Random BatchNorm and LayerNorm affine parameters, and random biases."""
    for layer in model.sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value((1.0 + 0.2 * rng.standard_normal(c)).astype("float32"))
            layer.bias.set_value((0.2 * rng.standard_normal(c)).astype("float32"))
        elif isinstance(layer, nn.LayerNorm):
            c = layer.weight.shape[0]
            layer.weight.set_value((1.0 + 0.1 * rng.standard_normal(c)).astype("float32"))
            layer.bias.set_value((0.05 * rng.standard_normal(c)).astype("float32"))
        elif isinstance(layer, (nn.Linear, nn.Conv2D, nn.Conv2DTranspose)) and layer.bias is not None:
            b = layer.bias
            b.set_value((0.05 * rng.standard_normal(b.shape)).astype("float32"))


def _calibrate_batchnorm(model: nn.Layer, rng: np.random.Generator, calib_shape: tuple[int, ...]) -> None:
    """BN running statistics of one random batch (momentum 0, one train-mode pass), then perturbed."""
    bns = [m for m in model.sublayers() if isinstance(m, nn.BatchNorm2D)]
    for bn in bns:
        bn._momentum = 0.0
    model.train()
    with paddle.no_grad():
        model(paddle.to_tensor(rng.standard_normal(calib_shape).astype("float32")))
    for bn in bns:
        bn._momentum = 0.9
        c = bn._mean.shape[0]
        mean, var = bn._mean.numpy(), bn._variance.numpy()
        std = np.sqrt(np.maximum(var, 1e-4))
        bn._mean.set_value((mean + 0.1 * std * rng.standard_normal(c)).astype("float32"))
        bn._variance.set_value((np.maximum(var, 1e-4) * rng.uniform(0.8, 1.25, c)).astype("float32"))


def randomise_paddle(model: nn.Layer, seed: int, calib_shape: tuple[int, ...], head_gain: dict[str, float]) -> None:
    """Give the model trained-looking, non-trivial parameters.

    Paddle's default init plus BN statistics drawn at random leaves activations shrinking layer by
    layer (a near-constant output says little about numerics).  So: randomise BN affine params and
    LayerNorm params, calibrate every BN's running mean/var on a random batch (momentum 0 for one
    train-mode pass), then perturb those statistics at random (var stays positive) so they are not
    exactly the batch statistics, and scale the last layer up so the head produces confident,
    varied probabilities.
    """
    rng = np.random.default_rng(seed)
    _randomise_parameters(model, rng)
    _calibrate_batchnorm(model, rng, calib_shape)
    for name, gain in head_gain.items():
        w = dict(model.named_parameters())[name]
        w.set_value(w.numpy() * gain)
    model.eval()


def _build(kind: str) -> tuple[nn.Layer, str, list[Any], list[tuple[int, ...]], dict[str, float]]:
    """The model, its file name, input spec, the input shapes checked, and its last-layer gain."""
    model: nn.Layer
    if kind == "det":
        model = DBNet()
        spec = [paddle.static.InputSpec(shape=[-1, 3, -1, -1], dtype="float32", name="x")]
        cases = [(1, 3, 64, 96), (2, 3, 96, 128)]
        return model, "ocr_det_db_paddle.onnx", spec, cases, {"head.conv3.weight": GAIN_DET}
    model = CRNN()
    spec = [paddle.static.InputSpec(shape=[-1, 3, 32, -1], dtype="float32", name="x")]
    cases = [(1, 3, 32, 100), (3, 3, 32, 160)]
    return model, "ocr_rec_crnn_paddle.onnx", spec, cases, {"head.fc.weight": GAIN_REC}


def _to_onnx(model: nn.Layer, spec: list[Any], path: Path, opset: int) -> str:
    """The PaddleOCR flow: save a static inference model with jit.save, then paddle2onnx it.

    Returns the format jit.save wrote ("PIR json" or "pdmodel").
    """
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "inference")
        static_model = paddle.jit.to_static(model, input_spec=spec, full_graph=True)
        paddle.jit.save(static_model, prefix)
        model_file = prefix + (".json" if os.path.exists(prefix + ".json") else ".pdmodel")
        paddle2onnx.export(
            model_file, prefix + ".pdiparams", str(path), opset_version=opset, enable_onnx_checker=True
        )
        return "PIR json" if model_file.endswith(".json") else "pdmodel"


def export_paddle(kind: str, opset: int = PADDLE_OPSET) -> dict[str, Any]:
    """Build, randomise, export and check the "det" or "rec" model; return its provenance."""
    paddle.seed(SEED)
    np.random.seed(SEED)
    model, name, spec, cases, gain = _build(kind)
    randomise_paddle(model, SEED + (1 if kind == "det" else 2), calib_shape=(4, *cases[1][1:]), head_gain=gain)
    path = OUT_DIR / name
    saved_format = _to_onnx(model, spec, path, opset)

    checks = []
    rng = np.random.default_rng(SEED + 7)
    for shape in cases:
        x = rng.standard_normal(shape).astype("float32")
        with paddle.no_grad():
            ref = model(paddle.to_tensor(x))
        ref = [r.numpy() for r in (ref if isinstance(ref, (list, tuple)) else [ref])]
        got = ort_run(path, {"x": x})
        checks.append(compare(name, "x=" + "x".join(map(str, shape)), ref, got))
    return {
        "file": name,
        "framework": f"PaddlePaddle {paddle.__version__} (dygraph -> paddle.jit.save, {saved_format})",
        "exporter": f"paddle2onnx {paddle2onnx.__version__} (paddle2onnx.export, default optimisation)",
        "requested_opset": opset,
        "checks": checks,
    }

