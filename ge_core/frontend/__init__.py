"""Frontends: model formats -> GE Graph (and GE Graph -> ONNX for standard graphs)."""

from ge_core.frontend.input_shapes import format_input_shapes, parse_input_shapes
from ge_core.frontend.onnx import ImportResult, import_onnx, load_onnx
from ge_core.frontend.onnx_export import ExportError, is_standard, to_onnx

__all__ = ["ExportError", "ImportResult", "format_input_shapes", "import_onnx", "is_standard", "load_onnx",
           "parse_input_shapes", "to_onnx"]
