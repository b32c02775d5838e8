"""The ATen op table: one row per ATen overload, like the ONNX op table of ge_core/ops.

A row is a function (Emitter, FX node) -> the GE tensor(s) of the node's result; the rows live by kind in
aten_math.py, aten_shape.py, aten_nn.py and aten_rnn.py. IGNORED_OPS produce nothing GE runs: runtime assertions
torch.export adds on symbolic sizes (GE checks shapes when it runs) and metadata checks.
"""

from __future__ import annotations

from ge_core.frontend.torch.aten_math import MATH_ROWS, Row
from ge_core.frontend.torch.aten_nn import NN_ROWS
from ge_core.frontend.torch.aten_rnn import RNN_ROWS
from ge_core.frontend.torch.aten_shape import SHAPE_ROWS

ATEN_TABLE: dict[str, Row] = {**MATH_ROWS, **SHAPE_ROWS, **NN_ROWS, **RNN_ROWS}

IGNORED_OPS: frozenset[str] = frozenset({
    "aten._assert_scalar.default", "aten._assert_tensor_metadata.default", "aten.sym_constrain_range.default",
    "aten.sym_constrain_range_for_size.default", "aten._assert_async.msg",
})


def supported_aten_ops() -> list[str]:
    """Every ATen overload the frontend converts, sorted."""
    return sorted(ATEN_TABLE)
