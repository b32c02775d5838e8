"""The recurrent-state ops of linear-attention and state-space LLM layers (opset 27): LinearAttention and
CausalConvWithState.

LinearAttention keeps a (key size x value size) state per key/value head and walks the sequence: decay
the state (gated rules), correct the value by what the state already recalls (delta rules), add the
outer product key x value, read it with the query. CausalConvWithState is a depthwise 1-D convolution
over [past_state, input] (k taps per channel), an optional SiLU, and the last k - 1 inputs as the next
state. Both are recurrences with a state output: OPAQUE (never fused through), priced on the vector unit
by their multiply-adds. Kernels follow onnx.reference: LinearAttention accumulates in float32,
CausalConvWithState convolves in the input's dtype and applies SiLU in float32.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import io_bytes, make_desc, operand, optional, require_inputs, shape_error
from ge_core.ops.registry import Category, Cost, OpDef, Operand
from ge_core.ops.spatial import operands_of

FLOATS = ("float16", "float32", "float64", "bfloat16")
RULES = {"linear": (False, False), "gated": (True, False), "delta": (False, True), "gated_delta": (True, True)}
ACTIVATIONS = ("none", "silu", "swish")


# ---- LinearAttention ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Linear:
    batch: int
    steps: int
    q_heads: int
    kv_heads: int
    key: int  # d_k
    value: int  # d_v
    gating: bool
    delta: bool


def _heads(node: Node, operands: list[Operand | None], name: str, hidden: int, heads: int) -> int:
    if hidden >= 0 and hidden % heads:
        raise shape_error(node, operands, f"{name}'s last dim {hidden} is not a multiple of {heads} heads")
    return hidden // heads if hidden >= 0 else -1


def linear_geometry(node: Node, operands: list[Operand | None]) -> Linear:
    require_inputs(node, operands, 3, 6)
    q, k, v = (operand(node, operands, i).desc for i in range(3))
    if any(d.rank != 3 or d.dtype not in FLOATS for d in (q, k, v)):
        raise shape_error(node, operands, "query, key and value must be 3-D (batch, time, heads * size) floats")
    hq, hkv = int(node.attr("q_num_heads", 0)), int(node.attr("kv_num_heads", 0))
    if hq < 1 or hkv < 1 or hq % hkv:
        raise shape_error(node, operands, f"q_num_heads ({hq}) must be a positive multiple of kv_num_heads ({hkv})")
    rule = node.attr("update_rule", "gated_delta")
    if rule not in RULES:
        raise shape_error(node, operands, f"update_rule must be one of {', '.join(RULES)}, got '{rule}'")
    gating, delta = RULES[rule]
    key = _heads(node, operands, "query", q.shape[2], hq)
    if key >= 0 and k.shape[2] >= 0 and k.shape[2] != hkv * key:
        raise shape_error(node, operands, f"key's last dim must be kv_num_heads * {key} = {hkv * key}, got "
                                          f"{k.shape[2]}")
    g = Linear(q.shape[0], q.shape[1], hq, hkv, key, _heads(node, operands, "value", v.shape[2], hkv), gating, delta)
    _check_state_inputs(node, operands, g, rule)
    return g


def _check_state_inputs(node: Node, operands: list[Operand | None], g: Linear, rule: str) -> None:
    past, decay, beta = optional(operands, 3), optional(operands, 4), optional(operands, 5)
    for name, given, needed in (("decay", decay, g.gating), ("beta", beta, g.delta)):
        if (given is not None) != needed:
            raise shape_error(node, operands, f"update_rule '{rule}' {'needs' if needed else 'forbids'} the {name} "
                                              "input")
    want = (g.batch, g.kv_heads, g.key, g.value)
    if past is not None and not _fits(past.desc.shape, want):
        raise shape_error(node, operands, f"past_state must have shape {list(want)}, got {list(past.desc.shape)}")
    if decay is not None and (decay.desc.rank != 3 or decay.desc.shape[2] not in (g.kv_heads, g.kv_heads * g.key)):
        raise shape_error(node, operands, f"decay must be (batch, time, {g.kv_heads} or {g.kv_heads * g.key}), got "
                                          f"{list(decay.desc.shape)}")
    if beta is not None and (beta.desc.rank != 3 or beta.desc.shape[2] not in (g.kv_heads, 1)):
        raise shape_error(node, operands, f"beta must be (batch, time, {g.kv_heads} or 1), got "
                                          f"{list(beta.desc.shape)}")


def _fits(shape: tuple[int, ...], want: tuple[int, ...]) -> bool:
    return len(shape) == len(want) and all(s == w or s < 0 or w < 0 for s, w in zip(shape, want, strict=True))


def _infer_linear(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    g = linear_geometry(node, operands)
    q, past = operand(node, operands, 0).desc, optional(operands, 3)
    hidden = g.q_heads * g.value if g.value >= 0 else -1
    state = past.desc.dtype if past is not None else q.dtype
    return [make_desc((g.batch, g.steps, hidden), q.dtype),
            make_desc((g.batch, g.kv_heads, g.key, g.value), state)]


def _per_head(x: np.ndarray, heads: int) -> np.ndarray:
    """(batch, time, heads * size) -> (batch, heads, time, size), in float32."""
    b, t, hidden = x.shape
    return x.reshape(b, t, heads, hidden // heads).transpose(0, 2, 1, 3).astype(np.float32)


def _linear(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    g = linear_geometry(node, operands_of(inputs))
    query, key, value = inputs[0], inputs[1], inputs[2]
    past, decay, beta = (inputs[i] if i < len(inputs) else None for i in (3, 4, 5))
    assert query is not None and key is not None and value is not None
    q, k, v = _per_head(query, g.q_heads), _per_head(key, g.kv_heads), _per_head(value, g.kv_heads)
    q = q.reshape(g.batch, g.kv_heads, g.q_heads // g.kv_heads, g.steps, g.key)  # query heads by kv head
    gate = None if decay is None else np.exp(_per_head(decay, g.kv_heads))  # (b, h, t, 1 or d_k)
    strength = None if beta is None else _per_head(beta, beta.shape[2])  # (b, h or 1, t, 1)
    state = np.zeros((g.batch, g.kv_heads, g.key, g.value), np.float32) if past is None else past.astype(np.float32)
    scale = float(node.attr("scale", 0.0)) or 1 / np.sqrt(g.key)
    out = np.zeros((g.batch, g.kv_heads, q.shape[2], g.steps, g.value), np.float32)
    for t in range(g.steps):
        if gate is not None:
            state = state * gate[:, :, t, :, None]
        v_t = v[:, :, t]
        if strength is not None:  # delta rule: write only what the state does not recall yet
            v_t = strength[:, :, t] * (v_t - np.einsum("bhdm,bhd->bhm", state, k[:, :, t]))
        state = state + k[:, :, t, :, None] * v_t[:, :, None, :]
        out[:, :, :, t] = scale * np.einsum("bhgd,bhdm->bhgm", q[:, :, :, t], state)
    y = out.reshape(g.batch, g.q_heads, g.steps, g.value).transpose(0, 2, 1, 3).reshape(g.batch, g.steps, -1)
    return [y.astype(query.dtype), state.astype(query.dtype if past is None else past.dtype)]


def _linear_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """Per step and key/value head, d_k x d_v state updates: decay 1, delta 2 (recall) + 1, write 2; and 2
    per query head to read it."""
    g = linear_geometry(node, [None if d is None else Operand(d) for d in inputs])
    per_kv = 2 + (1 if g.gating else 0) + (3 if g.delta else 0)
    state = g.key * g.value if min(g.key, g.value) >= 0 else 0
    steps = g.batch * g.steps if min(g.batch, g.steps) >= 0 else 0
    return Cost(steps * state * (per_kv * g.kv_heads + 2 * g.q_heads), *io_bytes(inputs, outputs))


# ---- CausalConvWithState ---------------------------------------------------------------------------------

def _conv_taps(node: Node, operands: list[Operand | None]) -> int:
    require_inputs(node, operands, 2, 4)
    x, w = operand(node, operands, 0).desc, operand(node, operands, 1).desc
    if x.rank != 3 or x.dtype not in FLOATS:
        raise shape_error(node, operands, f"input must be a 3-D float (batch, channels, length), got {x.text()}")
    channels = x.shape[1]
    if w.rank != 3 or not _fits(w.shape, (channels, 1, -1)) or w.dtype != x.dtype:
        raise shape_error(node, operands, f"weight must be {x.dtype} of shape [{channels}, 1, k], got {w.text()}")
    taps = w.shape[2]
    bias, past = optional(operands, 2), optional(operands, 3)
    if bias is not None and not _fits(bias.desc.shape, (channels,)):
        raise shape_error(node, operands, f"bias must have shape [{channels}], got {list(bias.desc.shape)}")
    want = (x.shape[0], channels, taps - 1 if taps >= 0 else -1)
    if past is not None and not _fits(past.desc.shape, want):
        raise shape_error(node, operands, f"past_state must have shape {list(want)} (k - 1 past inputs), got "
                                          f"{list(past.desc.shape)}")
    if node.attr("activation", "none") not in ACTIVATIONS:
        raise shape_error(node, operands, f"activation must be one of {', '.join(ACTIVATIONS)}, got "
                                          f"'{node.attr('activation')}'")
    return taps


def _infer_conv(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    taps = _conv_taps(node, operands)
    x = operand(node, operands, 0).desc
    return [make_desc(x.shape, x.dtype), make_desc((x.shape[0], x.shape[1], taps - 1 if taps >= 0 else -1), x.dtype)]


def _causal_conv(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, w = inputs[0], inputs[1]
    bias, past = (inputs[i] if i < len(inputs) else None for i in (2, 3))
    assert x is not None and w is not None
    b, c, length = x.shape
    k = w.shape[2]
    padded = np.concatenate((np.zeros((b, c, k - 1), x.dtype) if past is None else past, x), axis=2)
    windows = np.lib.stride_tricks.sliding_window_view(padded, k, axis=2)  # (b, c, length, k)
    columns = windows.transpose(1, 3, 0, 2).reshape(c, k, b * length)  # per channel: im2col, as the reference
    y = np.matmul(w.reshape(c, 1, k), columns).reshape(c, b, length).transpose(1, 0, 2)
    if bias is not None:
        y = y + bias.reshape(1, c, 1)
    y = y.astype(x.dtype, copy=False)
    if node.attr("activation", "none") != "none":  # SiLU / Swish, in float32
        wide = y.astype(np.float32)
        y = (wide * (1.0 / (1.0 + np.exp(-wide)))).astype(x.dtype)
    return [np.ascontiguousarray(y), np.ascontiguousarray(padded[:, :, padded.shape[2] - (k - 1):])]


def _conv_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """k multiply-adds per output, one for the bias, four for a SiLU."""
    taps = _conv_taps(node, [None if d is None else Operand(d) for d in inputs])
    per_output = 2 * max(taps, 0) + (1 if len(inputs) > 2 and inputs[2] is not None else 0)
    per_output += 4 if node.attr("activation", "none") != "none" else 0
    return Cost(per_output * (outputs[0].numel or 0), *io_bytes(inputs, outputs))


OPS: list[OpDef] = [
    # the (gated) (delta-rule) linear-attention recurrence over time, with GQA and a carried state
    OpDef("LinearAttention", Category.OPAQUE, _infer_linear, _linear, _linear_cost, doc="linear attention"),
    # depthwise causal 1-D conv over [past_state, input], optional SiLU; the last k - 1 inputs carry over
    OpDef("CausalConvWithState", Category.OPAQUE, _infer_conv, _causal_conv, _conv_cost,
          doc="stateful causal depthwise conv"),
]
