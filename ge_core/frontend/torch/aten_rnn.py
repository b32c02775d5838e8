"""ATen table rows: nn.LSTM and nn.GRU kept whole (`aten.lstm.input`, `aten.gru.input`) as ONNX LSTM/GRU.

Decomposed, a recurrent layer is unrolled into a few ops per time step (100 nodes for six steps); GE runs
the whole time loop as one kernel (DynamicRNN / DynamicGRUV2). The weights are reordered at import from
PyTorch's gate order to ONNX's (LSTM i,f,g,o -> i,o,f,c; GRU r,z,n -> z,r,h, with linear_before_reset as
PyTorch computes n) and stacked per direction. Layers run one after another, time-major inside.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ge_core.frontend.torch.aten_math import Row
from ge_core.frontend.torch.emit import Arg, ConversionProblem, Emitter

# PyTorch gate order -> ONNX gate order, as chunk indices of the stacked gate weights
GATE_ORDER = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2)}


def _constant(e: Emitter, arg: Arg) -> np.ndarray:
    name = e.tensor(arg)
    if name not in e.graph.constants:
        raise ConversionProblem("recurrent weights that are not constants (computed or fed at run time)")
    return e.graph.constants[name]


def _reorder(array: np.ndarray, op_type: str) -> np.ndarray:
    chunks = np.split(array, len(GATE_ORDER[op_type]), axis=0)
    return np.concatenate([chunks[i] for i in GATE_ORDER[op_type]], axis=0)


def _layer_weights(e: Emitter, params: list[Arg], op_type: str, biased: bool, directions: int,
                   hidden: int) -> tuple[str, str, str]:
    """W [D, G*H, I], R [D, G*H, H], B [D, 2*G*H] of one layer from its params (w_ih, w_hh, b_ih, b_hh
    per direction)."""
    per = 4 if biased else 2
    ws, rs, bs = [], [], []
    for d in range(directions):
        group = [_constant(e, p) for p in params[d * per:(d + 1) * per]]
        ws.append(_reorder(group[0], op_type))
        rs.append(_reorder(group[1], op_type))
        gates = group[0].shape[0]
        biases = group[2:] if biased else [np.zeros(gates, group[0].dtype)] * 2
        bs.append(np.concatenate([_reorder(b, op_type) for b in biases]))
    if ws[0].shape[0] != len(GATE_ORDER[op_type]) * hidden:
        raise ConversionProblem("a recurrent layer with projections (proj_size) is not supported")
    return e.const(np.stack(ws), "W"), e.const(np.stack(rs), "R"), e.const(np.stack(bs), "B")


def _state_slice(e: Emitter, state: str, layer: int, directions: int) -> str:
    start, end = layer * directions, (layer + 1) * directions
    return e.one("Slice", [state, e.ints([start]), e.ints([end]), e.ints([0])])


def _recurrent(op_type: str) -> Row:
    """lstm.input / gru.input (input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first) -> (output, h_n[, c_n])."""
    def row(e: Emitter, n: Arg) -> list[str]:
        x, params = n.args[0], list(n.args[2])
        hx = list(n.args[1]) if isinstance(n.args[1], list | tuple) else [n.args[1]]  # LSTM: [h0, c0]
        biased, layers, _, train, bidirectional, batch_first = n.args[3:9]
        if train:
            raise ConversionProblem("a recurrent layer in training mode; call model.eval() before exporting")
        directions = 2 if bidirectional else 1
        hidden = int(e.shape(hx[0])[-1])
        states = [e.tensor(h) for h in hx]
        sequence = e.tensor(x)
        if batch_first:
            sequence = e.one("Transpose", [sequence], {"perm": [1, 0, 2]})
        per_layer = (4 if biased else 2) * directions
        finals: list[list[str]] = [[] for _ in states]
        attrs: dict[str, Any] = {"hidden_size": hidden, "direction": "bidirectional" if bidirectional else "forward"}
        if op_type == "GRU":
            attrs["linear_before_reset"] = 1
        for layer in range(int(layers)):
            w, r, b = _layer_weights(e, params[layer * per_layer:(layer + 1) * per_layer], op_type, biased,
                                     directions, hidden)
            initial = [_state_slice(e, s, layer, directions) for s in states]
            y, *last = e.node(op_type, [sequence, w, r, b, "", *initial], attrs, outputs=1 + len(states))
            for final, value in zip(finals, last, strict=True):
                final.append(value)
            time_major = e.one("Transpose", [y], {"perm": [0, 2, 1, 3]})  # [T, D, B, H] -> [T, B, D, H]
            sequence = e.one("Reshape", [time_major, e.ints([0, 0, -1])])
        output = e.one("Transpose", [sequence], {"perm": [1, 0, 2]}) if batch_first else sequence
        joined = [f[0] if len(f) == 1 else e.one("Concat", f, {"axis": 0}) for f in finals]
        return [output, *joined]
    return row


RNN_ROWS: dict[str, Row] = {
    "aten.lstm.input": _recurrent("LSTM"),
    "aten.gru.input": _recurrent("GRU"),
}
