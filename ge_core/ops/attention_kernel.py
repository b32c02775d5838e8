"""The numpy kernels of Attention and FlexAttention, with onnx.reference's arithmetic step for step.

Everything is computed in the inputs' own dtype, as the reference does (float16 scores, softmax and all,
unless softmax_precision says otherwise): the conformance data is made that way, and a float32 detour
rounds differently. Query heads sharing a key/value head (GQA) are multiplied as one stacked matrix,
(group * q_len) x head, against their key/value head, instead of repeating K and V per query head: the
same dot products without the copies, and the shape attention_cost.py prices.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np

from ge_core.errors import GEError
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import blas
from ge_core.ops.attention_geometry import PRECISIONS, Geometry, flex_geometry, geometry
from ge_core.ops.registry import RunSubgraph
from ge_core.ops.spatial import operands_of

_SOFTMAX_DTYPES = {name: np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)
                   for name in PRECISIONS.values()}


def to_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """(batch, seq, heads * size) -> (batch, heads, seq, size); 4-D inputs are already so."""
    if x.ndim == 4:
        return x
    b, s, hidden = x.shape
    return x.reshape(b, s, heads, hidden // heads).transpose(0, 2, 1, 3)


def grouped_matmul(a: np.ndarray, b: np.ndarray, kv_heads: int) -> np.ndarray:
    """a (batch, q_heads, m, k) @ b (batch, kv_heads, k, n), query head h reading key/value head
    h // group (ONNX's interleaved repeat); the result in a's dtype (bfloat16 products come as float32)."""
    batch, q_heads, m, k = a.shape
    group = q_heads // kv_heads
    stacked = a.reshape(batch, kv_heads, group * m, k)
    out = blas.matmul(stacked, b).reshape(batch, q_heads, m, b.shape[-1])
    return out if out.dtype == a.dtype else out.astype(a.dtype)


def softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis; a row of -inf only gives zeros, not NaN (as the reference)."""
    x_max = np.max(x, axis=-1, keepdims=True)
    zero, one = np.zeros((), x.dtype), np.ones((), x.dtype)
    e = np.exp(x - np.where(np.isneginf(x_max), zero, x_max))
    s = np.sum(e, axis=-1, keepdims=True)
    return e / np.where(s == zero, one, s)


def _scale(node: Node, g: Geometry, dtype: np.dtype) -> np.generic:
    """sqrt(scale) in the inputs' dtype: Q and K are each scaled by it before their product."""
    scale = node.attr("scale")
    value = 1 / np.sqrt(g.head) if scale is None else float(scale)
    return dtype.type(np.sqrt(value))


def _padded_mask(mask: np.ndarray, total: int) -> np.ndarray:
    """The mask's last axis padded to `total` keys: masked out (False, -inf)."""
    pad = total - mask.shape[-1]
    if pad <= 0:
        return mask
    value = False if mask.dtype == np.bool_ else -np.inf
    return np.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, pad)], constant_values=value)


def _offset(g: Geometry, nonpad: np.ndarray | None) -> int | np.ndarray:
    """How many valid keys precede the query block: the past length, nonpad - q_len per batch, or 0."""
    if g.past_len:
        return g.past_len
    if nonpad is not None:
        return nonpad.reshape(-1, 1, 1, 1).astype(np.int64) - g.q_len
    return 0


def _allowed(node: Node, g: Geometry, offset: int | np.ndarray) -> np.ndarray | None:
    """Which keys each query may see under is_causal and the sliding window: (q, kv) or per batch
    (batch, 1, q, kv); None when neither restricts."""
    left, right = int(node.attr("left_window_size", -1)), int(node.attr("right_window_size", -1))
    causal = bool(node.attr("is_causal", 0))
    if not causal and left < 0 and right < 0:
        return None
    diff = np.arange(g.q_len).reshape(-1, 1) + offset - np.arange(g.total).reshape(1, -1)  # query pos - key pos
    allowed = np.ones(np.shape(diff), bool)
    if causal:
        allowed &= diff >= 0
    if left >= 0:
        allowed &= diff <= left
    if right >= 0:
        allowed &= -diff <= right
    return allowed


def attention_bias(node: Node, g: Geometry, mask: np.ndarray | None, nonpad: np.ndarray | None,
                   dtype: np.dtype) -> np.ndarray:
    """The additive bias on the scores (0 or -inf, plus a float mask), broadcasting to (batch, q heads,
    q_len, total): the mask (its last axis padded), then is_causal and the window (bottom-right, by the
    offset), then the padding past nonpad_kv_seqlen. Adding zeros is exact, so the order is free."""
    zero, neg_inf = dtype.type(0), dtype.type(-np.inf)
    bias = np.zeros((g.q_len, g.total), dtype)
    if mask is not None:
        mask = _padded_mask(mask, g.total)
        bias = bias + (np.where(mask, zero, neg_inf) if mask.dtype == np.bool_ else mask)
    allowed = _allowed(node, g, _offset(g, nonpad))
    if allowed is not None:
        bias = bias + np.where(allowed, zero, neg_inf)
    if nonpad is not None:
        valid = np.arange(g.total) < nonpad.reshape(-1, 1, 1, 1)
        bias = bias + np.where(valid, zero, neg_inf).astype(bias.dtype)
    return bias


def _with_past(x: np.ndarray, past: np.ndarray | None) -> np.ndarray:
    return x if past is None else np.concatenate((past, x), axis=2)


def _capped(scores: np.ndarray, softcap: float) -> np.ndarray:
    return np.tanh(scores / softcap) * softcap if softcap > 0 else scores


def attention_kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    g = geometry(node, operands_of(inputs))
    q_in, k_in, v_in = inputs[0], inputs[1], inputs[2]
    assert q_in is not None and k_in is not None and v_in is not None
    mask, past_k, past_v, nonpad = (inputs[i] if i < len(inputs) else None for i in (3, 4, 5, 6))
    q, k, v = to_heads(q_in, g.q_heads), to_heads(k_in, g.kv_heads), to_heads(v_in, g.kv_heads)
    k, v = _with_past(k, past_k), _with_past(v, past_v)
    dtype = q.dtype
    s = _scale(node, g, dtype)
    bias = attention_bias(node, g, mask, nonpad, dtype)
    # onnx.reference's qk_matmul_output is the scores after the softcap in modes 0 and 1 alike
    scores = _capped(grouped_matmul(q * s, np.swapaxes(k * s, -1, -2), g.kv_heads),
                     float(node.attr("softcap", 0.0)))
    biased = scores + bias
    mode = int(node.attr("qk_matmul_output_mode", 0))
    precision = node.attr("softmax_precision")
    probs = softmax(biased if precision is None else biased.astype(_SOFTMAX_DTYPES[PRECISIONS[int(precision)]]))
    # a query row with every key masked out gives zeros (decided on the bias, not on possibly-NaN scores)
    probs = np.where(np.isneginf(np.max(bias, axis=-1, keepdims=True)), np.zeros((), probs.dtype), probs)
    qk = {0: scores, 1: scores, 2: biased, 3: probs}[mode].astype(dtype)
    y = grouped_matmul(probs.astype(dtype), v, g.kv_heads)
    if q_in.ndim == 3:
        y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], y.shape[2], -1)
    return [y, k, v, qk]


def flex_dtype(node: Node, dtype: np.dtype) -> np.dtype:
    """Where FlexAttention runs its softmax: softmax_precision, else float32 for 16-bit inputs."""
    precision = node.attr("softmax_precision")
    if precision is not None:
        return _SOFTMAX_DTYPES[PRECISIONS[int(precision)]]
    return np.dtype(np.float32) if dtype.itemsize < 4 else dtype


Modifier = Callable[[str, np.ndarray], np.ndarray]  # (subgraph attribute, scores or probabilities) -> same


def _flex(node: Node, inputs: Sequence[np.ndarray | None], modify: Modifier) -> list[np.ndarray]:
    """softmax(Q K^T * scale, score_mod applied) with prob_mod applied, times V; as onnx.reference."""
    g = flex_geometry(node, operands_of(inputs))
    q, k, v = inputs[:3]
    assert q is not None and k is not None and v is not None
    scale = node.attr("scale")
    s = np.asarray(np.sqrt(np.float32(1 / np.sqrt(g.head) if scale is None else scale)), dtype=q.dtype)
    compute = flex_dtype(node, q.dtype)
    scores = blas.matmul((q * s).reshape(g.batch, g.kv_heads, -1, g.head), np.swapaxes(k * s, -1, -2))
    scores = scores.reshape(g.batch, g.q_heads, g.q_len, -1).astype(compute)
    if "score_mod" in node.subgraphs:
        scores = np.asarray(modify("score_mod", scores), dtype=compute)
    e = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    probs = e / np.sum(e, axis=-1, keepdims=True)
    if "prob_mod" in node.subgraphs:
        probs = np.asarray(modify("prob_mod", probs), dtype=compute)
    y = grouped_matmul(probs, v.astype(compute), g.kv_heads)
    return [y.astype(v.dtype)]


def flex_kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    def refuse(name: str, x: np.ndarray) -> np.ndarray:
        raise GEError(f"node '{node.name}' (FlexAttention) runs its {name} subgraph through the interpreter, not "
                      "as a plain kernel.", hint="Run the graph with ge_core.runtime (Executor, Interpreter, execute).")

    return _flex(node, inputs[: len(node.inputs) - node.num_captures], refuse)


def flex_run(node: Node, inputs: list[np.ndarray | None], run: RunSubgraph,
             descs: Sequence[TensorDesc | None]) -> list[np.ndarray]:
    """FlexAttention as the interpreter runs it: the modifier subgraphs through `run` (OpDef.run_subgraphs)."""
    def modify(name: str, x: np.ndarray) -> np.ndarray:
        (out,) = run(name, [x], "")
        return out

    return _flex(node, inputs, modify)
