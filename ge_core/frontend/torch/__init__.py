"""PyTorch -> GE Graph through torch.export (TorchAir's capture, in this workbench).

    graph = ge_core.from_torch(module, example_inputs, dynamic_shapes=None)

capture.py exports and decomposes to core ATen, keeping the ops GE computes as one op (linear, layer_norm,
batch_norm, scaled_dot_product_attention, gelu, softmax, the convolutions: aten_nn.py says why);
convert.py builds the graph with one row per ATen op (aten_table.py), names and scopes from the module tree
(names.py), weights as constants, Dims as symbolic dims with ranges (symbols.py). PyTorch is optional:
nothing here imports it until a model is converted.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

from ge_core.errors import UsageError
from ge_core.frontend.torch.aten_table import supported_aten_ops
from ge_core.frontend.torch.emit import DynamicShapes

if TYPE_CHECKING:
    from ge_core.ir.graph import Graph

TORCH_PIN = "torch==2.13.0"
INSTALL_HINT = (f"Install PyTorch (the CPU build is enough): pip install '.[torch]' from the repository "
                f"(torch>=2.6), or pip install {TORCH_PIN}, the CPU build on these machines.")


def require_torch() -> None:
    """Raise a UsageError saying how to install PyTorch when it is not importable."""
    if importlib.util.find_spec("torch") is None:
        raise UsageError("PyTorch is not installed, so a PyTorch module cannot be converted.", hint=INSTALL_HINT)


def from_torch(module: Any, example_inputs: Any, dynamic_shapes: DynamicShapes = None) -> Graph:
    """A torch.nn.Module as a verified GE Graph (inference), or one error listing every problem.

    `example_inputs`: a tuple of tensors for `module.forward` (or one tensor); `dynamic_shapes`:
    torch.export's, e.g. {"x": {0: torch.export.Dim("batch", min=1, max=64)}}: those dims stay symbolic
    in the graph."""
    require_torch()
    from ge_core.frontend.torch.capture import capture  # capture and convert import torch, an optional package
    from ge_core.frontend.torch.convert import convert

    program = capture(module, example_inputs, dynamic_shapes)
    return convert(program, type(module).__name__, dynamic_shapes)


__all__ = ["INSTALL_HINT", "from_torch", "require_torch", "supported_aten_ops"]
