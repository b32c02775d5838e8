"""The context an ATen table row writes into: the GE Graph being built, named after the FX node.

One ATen node may become several GE nodes (a `linear` on a 3-D input is MatMul + Add); they all live in
the FX node's name scope (its module path), named after it: `/encoder/layer.0/attention/linear`,
`/encoder/layer.0/attention/linear_add`. Python numbers an ATen op takes (`x * 2.0`, a reshape's sizes)
become small graph constants.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ge_core.ir.dtypes import onnx_code
from ge_core.ir.graph import Graph

Arg = Any  # an FX argument: a torch.fx.Node, a Python number, a list of them, None
# torch.export's dynamic_shapes: by argument name or position, each {axis: Dim} or a list of Dim/None
DynamicShapes = dict[str, Any] | tuple[Any, ...] | list[Any] | None


class ConversionProblem(Exception):
    """A row cannot convert this use of its op (an argument GE has no equivalent for): listed, not raised."""


class Emitter:
    """Adds GE nodes for one FX node at a time; `tensor(arg)` names the GE tensor of an FX value."""

    def __init__(self, graph: Graph, values: dict[str, str], shapes: dict[str, tuple[Any, ...]],
                 dtypes: dict[str, str]) -> None:
        self.graph = graph
        self.values = values  # FX node name -> GE tensor name (a getitem of a multi-output node included)
        self.shapes = shapes  # FX node name -> its example shape (ints, or torch SymInts for symbolic dims)
        self.dtypes = dtypes  # FX node name -> GE dtype name
        self.sym_sources: dict[str, tuple[str, int]] = {}  # symbol ("s77") -> (graph input, axis) holding it
        self.base = ""  # the GE name of the FX node being converted (scope path + FX name)
        self.fx_name = ""
        self._count = 0

    def start(self, base: str, fx_name: str) -> None:
        self.base, self.fx_name, self._count = base, fx_name, 0

    # ---- values -----------------------------------------------------------------------------------
    def tensor(self, arg: Arg, like: Arg = None) -> str:
        """The GE tensor of `arg`: an FX node's tensor, or a Python number as a constant typed like `like`."""
        if hasattr(arg, "name") and hasattr(arg, "op"):
            if arg.name not in self.values:
                raise ConversionProblem(f"reads {arg.name!r}, which has no tensor (a symbolic size or an "
                                        "unsupported producer)")
            return self.values[arg.name]
        dtype = self.dtype(like) if like is not None else ("float32" if isinstance(arg, float) else "int64")
        return self.const(np.asarray(arg, dtype=_numpy_dtype(dtype)))

    def typed(self, arg: Arg, dtype: str) -> str:
        """The GE tensor of `arg` in `dtype`: PyTorch's type promotion made explicit (an int tensor times
        0.5, or divided by 2, computes in float), a Cast where the tensor has another dtype."""
        if not (hasattr(arg, "name") and hasattr(arg, "op")):
            return self.const(np.asarray(arg, dtype=_numpy_dtype(dtype)))
        tensor = self.tensor(arg)
        code = onnx_code(dtype)
        if self.dtypes[arg.name] == dtype or code is None:
            return tensor
        return self.one("Cast", [tensor], {"to": code})

    def dtype(self, arg: Arg) -> str:
        if hasattr(arg, "name") and hasattr(arg, "op"):
            return self.dtypes[arg.name]
        return "float32" if isinstance(arg, float) else "bool" if isinstance(arg, bool) else "int64"

    def shape(self, arg: Arg) -> tuple[Any, ...]:
        return self.shapes[arg.name]

    def rank(self, arg: Arg) -> int:
        return len(self.shape(arg))

    def const(self, array: np.ndarray, suffix: str = "const") -> str:
        name = self.graph.unique_tensor_name(f"{self.base}_{suffix}")
        self.graph.add_constant(name, array)
        return name

    def ints(self, values: Sequence[int]) -> str:
        """An int64 1-D constant (axes, sizes, pads given as inputs)."""
        return self.const(np.asarray([int(v) for v in values], dtype=np.int64), "ints")

    # ---- nodes ------------------------------------------------------------------------------------
    def node(self, op_type: str, inputs: Sequence[str], attrs: dict[str, Any] | None = None,
             outputs: int = 1) -> list[str]:
        """Add one GE node in the FX node's scope; returns its output tensor names."""
        name = self.base if self._count == 0 else f"{self.base}_{op_type.lower()}"
        while self.graph.has_node(name):
            self._count += 1
            name = f"{self.base}_{op_type.lower()}{self._count}"
        self._count += 1
        outs = [self.graph.unique_tensor_name(name if i == 0 else f"{name}:{i}") for i in range(outputs)]
        self.graph.add_node(op_type, list(inputs), outs, attrs or {}, name=name)
        return outs

    def one(self, op_type: str, inputs: Sequence[str], attrs: dict[str, Any] | None = None) -> str:
        return self.node(op_type, inputs, attrs)[0]


def _numpy_dtype(name: str) -> np.dtype[Any]:
    return np.dtype("bool" if name == "bool" else name)
