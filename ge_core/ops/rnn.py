"""Recurrent layers: RNN, GRU and LSTM with ONNX's full semantics: forward / reverse / bidirectional,
sequence_lens, initial states, activations (with activation_alpha/beta), clip, layout (batch-major when 1),
GRU's linear_before_reset and LSTM's peepholes and input_forget.

Shapes (layout 0; layout 1 swaps the batch to the front): X [T, B, I], W [D, G*H, I], R [D, G*H, H],
B [D, 2*G*H] (W's biases then R's), initial_h/initial_c [D, B, H], P [D, 3H]; Y [T, D, B, H],
Y_h/Y_c [D, B, H]. G is 1, 3 (z, r, h) or 4 (i, o, f, c). The loops live in rnn_cells.py.
OPAQUE: a whole time loop is one kernel (GE's DynamicRNN / DynamicGRUV2), never fused with neighbours.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import io_bytes, make_desc, operand, optional, require_inputs, shape_error
from ge_core.ops.math import FLOATS, check_dtype
from ge_core.ops.registry import Category, Cost, OpDef, Operand, VectorClass
from ge_core.ops.rnn_cells import ACTIVATION_ARGS, ActivationSpec, Acts, Sequences, run_gru, run_lstm, run_rnn


@dataclass(frozen=True)
class Kind:
    gates: int
    activations: tuple[str, ...]  # the defaults, per direction
    max_inputs: int
    outputs: int
    elementwise: int  # FLOPs per hidden unit per step besides the GEMMs (transcendentals count as one)


KINDS = {"RNN": Kind(1, ("tanh",), 6, 2, 2),
         "GRU": Kind(3, ("sigmoid", "tanh"), 6, 2, 10),
         "LSTM": Kind(4, ("sigmoid", "tanh", "tanh"), 8, 3, 14)}
DIRECTIONS = ("forward", "reverse", "bidirectional")


def _directions(node: Node, operands: list[Operand | None]) -> int:
    direction = str(node.attr("direction", "forward"))
    if direction not in DIRECTIONS:
        raise shape_error(node, operands, f"direction {direction!r} is not one of {', '.join(DIRECTIONS)}")
    return 2 if direction == "bidirectional" else 1


def activation_specs(node: Node, operands: list[Operand | None], num_dir: int) -> list[list[ActivationSpec]]:
    """Per slot (f, g, h), one spec per direction. alpha/beta values are consumed in list order by the
    activations that take them; missing ones default to the ONNX operator's."""
    kind = KINDS[node.op_type]
    names = [str(a).lower() for a in node.attr("activations", list(kind.activations) * num_dir)]
    if len(names) == len(kind.activations) and num_dir == 2:
        names = names * 2  # one set given for both directions
    if len(names) != len(kind.activations) * num_dir:
        raise shape_error(node, operands, f"activations must list {len(kind.activations)} per direction "
                                          f"({len(kind.activations) * num_dir}), got {len(names)}")
    alphas, betas = list(node.attr("activation_alpha", [])), list(node.attr("activation_beta", []))
    specs = []
    for name in names:
        if name not in ACTIVATION_ARGS:
            raise shape_error(node, operands, f"activation {name!r} is not one of {', '.join(ACTIVATION_ARGS)}")
        da, db = ACTIVATION_ARGS[name]
        alpha = (float(alphas.pop(0)) if alphas else da) if da is not None else 0.0
        beta = (float(betas.pop(0)) if betas else db) if db is not None else 0.0
        specs.append(ActivationSpec(name, alpha, beta))
    n = len(kind.activations)
    return [[specs[d * n + slot] for d in range(num_dir)] for slot in range(n)]


def _check(node: Node, operands: list[Operand | None], index: int, name: str, want: tuple[int, ...]) -> None:
    """Input `index` (when present) must have shape `want` (unknown dims on either side match)."""
    op = optional(operands, index)
    if op is None:
        return
    have = op.desc.shape
    if len(have) != len(want) or any(a >= 0 and b >= 0 and a != b for a, b in zip(have, want, strict=True)):
        raise shape_error(node, operands, f"{name} must have shape {list(want)}, got {list(have)}")


def _infer_rnn(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    kind = KINDS[node.op_type]
    require_inputs(node, operands, 3, kind.max_inputs)
    x, w, r = (operand(node, operands, i).desc for i in range(3))
    check_dtype(node, operands, x.dtype, FLOATS, "X")
    for i in (1, 2, 3, 5, 6, 7):
        op = optional(operands, i)
        if op is not None and op.desc.dtype != x.dtype:
            raise shape_error(node, operands, f"input {i} must have X's dtype {x.dtype}, got {op.desc.dtype}")
    if x.rank != 3 or w.rank != 3 or r.rank != 3:
        raise shape_error(node, operands, f"X, W and R must be 3-D, got ranks {x.rank}, {w.rank}, {r.rank}")
    d = _directions(node, operands)
    activation_specs(node, operands, d)
    layout = int(node.attr("layout", 0))
    if layout not in (0, 1):
        raise shape_error(node, operands, f"layout={layout} must be 0 (time major) or 1 (batch major)")
    steps, batch = (x.shape[1], x.shape[0]) if layout else (x.shape[0], x.shape[1])
    hidden = int(node.attr("hidden_size", r.shape[2]))
    g = kind.gates
    _check(node, operands, 1, "W", (d, g * hidden, x.shape[2]))
    _check(node, operands, 2, "R", (d, g * hidden, hidden))
    _check(node, operands, 3, "B", (d, 2 * g * hidden))
    _check(node, operands, 4, "sequence_lens", (batch,))
    state = (batch, d, hidden) if layout else (d, batch, hidden)
    _check(node, operands, 5, "initial_h", state)
    _check(node, operands, 6, "initial_c", state)
    _check(node, operands, 7, "P", (d, 3 * hidden))
    lens = optional(operands, 4)
    if lens is not None and lens.desc.dtype != "int32":
        raise shape_error(node, operands, f"sequence_lens must be int32, got {lens.desc.dtype}")
    y = (batch, steps, d, hidden) if layout else (steps, d, batch, hidden)
    return [make_desc(y, x.dtype)] + [make_desc(state, x.dtype)] * (kind.outputs - 1)


def _present(inputs: list[np.ndarray | None], index: int) -> np.ndarray | None:
    return inputs[index] if index < len(inputs) else None


def _state(value: np.ndarray | None, layout: int, shape: tuple[int, int, int], dtype: np.dtype) -> np.ndarray:
    """An initial state as [D, B, H] in the work dtype (zeros when absent)."""
    if value is None:
        return np.zeros(shape, dtype=dtype)
    return (np.swapaxes(value, 0, 1) if layout else value).astype(dtype)


def _sequences(node: Node, inputs: list[np.ndarray | None], fold_bias: slice) -> tuple[Sequences, np.ndarray]:
    """The time-major, direction-stacked Sequences, and the bias [D, 2*G*H] in the work dtype."""
    x, w, r = inputs[0], inputs[1], inputs[2]
    assert x is not None and w is not None and r is not None
    work = np.float32 if x.dtype.itemsize < 4 else x.dtype
    layout = int(node.attr("layout", 0))
    xt = (np.swapaxes(x, 0, 1) if layout else x).astype(work)  # [T, B, I]
    d, gh = w.shape[0], w.shape[1]
    b_in = _present(inputs, 3)
    bias = np.zeros((d, 2 * gh), dtype=work) if b_in is None else b_in.astype(work)
    folded = bias[:, :gh].copy()
    folded[:, fold_bias] += bias[:, gh:][:, fold_bias]  # R's biases that can be added before the loop
    x_proj = np.einsum("tbi,dgi->dtbg", xt, w.astype(work), optimize=True) + folded[:, None, None, :]
    lens_in = _present(inputs, 4)
    lens = None if lens_in is None else np.clip(lens_in.astype(np.int64), 0, xt.shape[0])
    reverse = np.array([False, True]) if d == 2 else np.array([str(node.attr("direction")) == "reverse"])
    clip = node.attr("clip")
    r_t = np.ascontiguousarray(np.swapaxes(r.astype(work), 1, 2))  # contiguous: matmul then uses BLAS
    seq = Sequences.build(x_proj, r_t, lens, reverse, None if clip is None else float(clip))
    return seq, bias


def _outputs(node: Node, x: np.ndarray, y: np.ndarray, *states: np.ndarray) -> list[np.ndarray]:
    """Y [T, D, B, H] and the states [D, B, H] in the node's layout and X's dtype."""
    if int(node.attr("layout", 0)):
        y = np.transpose(y, (2, 0, 1, 3))
        states = tuple(np.swapaxes(s, 0, 1) for s in states)
    return [np.ascontiguousarray(a).astype(x.dtype, copy=False) for a in (y, *states)]


def _rnn_kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, r = inputs[0], inputs[2]
    assert x is not None and r is not None
    d, hidden = r.shape[0], r.shape[2]
    layout = int(node.attr("layout", 0))
    specs = activation_specs(node, [], d)
    kind = node.op_type
    fold = slice(None) if kind != "GRU" or not node.attr("linear_before_reset", 0) else slice(0, 2 * hidden)
    seq, bias = _sequences(node, inputs, fold)
    batch = seq.x_proj.shape[2]
    h0 = _state(_present(inputs, 5), layout, (d, batch, hidden), seq.x_proj.dtype)
    if kind == "RNN":
        return _outputs(node, x, *run_rnn(seq, h0, Acts(specs[0])))
    if kind == "GRU":
        lbr = bool(node.attr("linear_before_reset", 0))
        r_bias_h = bias[:, None, 5 * hidden:] if lbr else None
        return _outputs(node, x, *run_gru(seq, h0, Acts(specs[0]), Acts(specs[1]), r_bias_h, lbr))
    c0 = _state(_present(inputs, 6), layout, (d, batch, hidden), seq.x_proj.dtype)
    p = _present(inputs, 7)
    peep = None if p is None else p.astype(seq.x_proj.dtype)
    acts = (Acts(specs[0]), Acts(specs[1]), Acts(specs[2]))
    return _outputs(node, x, *run_lstm(seq, h0, c0, peep, acts, bool(node.attr("input_forget", 0))))


def _rnn_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """Per step and direction: 2*B*I*G*H (input GEMM) + 2*B*H*G*H (recurrent GEMM) + the gates' pointwise
    work; bytes are the inputs read once and the outputs written once."""
    read, written = io_bytes(inputs, outputs)
    x, w = inputs[0], inputs[1]
    y = outputs[0]
    if x is None or w is None or not (x.is_static and w.is_static and y.is_static):
        return Cost(0, read, written)
    layout = int(node.attr("layout", 0))
    steps, batch = (x.shape[1], x.shape[0]) if layout else (x.shape[0], x.shape[1])
    d, gh, size = w.shape
    hidden = y.shape[3]
    kind = KINDS[node.op_type]
    per_step = 2 * batch * size * gh + 2 * batch * hidden * gh + kind.elementwise * batch * hidden
    return Cost(steps * d * per_step, read, written)


def _rnn_def(op_type: str, doc: str) -> OpDef:
    return OpDef(op_type, Category.OPAQUE, _infer_rnn, _rnn_kernel, _rnn_cost, doc=doc,
                 vector_class=VectorClass.TRANSCENDENTAL)


OPS: list[OpDef] = [
    # H_t = f(X_t W^T + H_{t-1} R^T + Wb + Rb)
    _rnn_def("RNN", "simple recurrent layer"),
    # update z, reset r and candidate h gates; optional linear_before_reset
    _rnn_def("GRU", "gated recurrent unit"),
    # input, output, forget and cell gates with optional peepholes and coupled input/forget
    _rnn_def("LSTM", "long short-term memory"),
]
