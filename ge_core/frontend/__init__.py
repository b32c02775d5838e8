"""Frontends: model formats -> GE Graph."""

from ge_core.frontend.input_shapes import format_input_shapes, parse_input_shapes
from ge_core.frontend.onnx import ImportResult, import_onnx, load_onnx

__all__ = ["ImportResult", "format_input_shapes", "import_onnx", "load_onnx", "parse_input_shapes"]
