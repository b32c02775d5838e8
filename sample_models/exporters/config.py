"""Settings shared by the exporters: output folder, seeds, tolerances, opsets, last-layer gains."""

from __future__ import annotations

from pathlib import Path

OUT_DIR = Path(__file__).resolve().parent.parent / "exported"
SEED = 20240601
ATOL = 1e-4
RTOL = 1e-4

# opset used for the Paddle models: PaddleOCR's documented paddle2onnx command uses 11.
PADDLE_OPSET = 11
BERT_OPSET = 14
GAIN_DET = 5.0  # last-layer gains: logits std ~2-4, so sigmoid/softmax outputs are far from uniform
GAIN_REC = 4.0
DYNAMO_OPSET = 18


def version(dist: str) -> str:
    """The installed version of a distribution, or "not installed"."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version(dist)
    except PackageNotFoundError:
        return "not installed"
