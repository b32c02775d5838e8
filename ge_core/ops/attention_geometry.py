"""Attention's geometry: its dims from Q, K, V (3-D or 4-D) and the past cache, with the checks every part
of the op (inference, kernel, cost) relies on; and FlexAttention's (4-D only)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import UNK, operand, optional, require_inputs, shape_error
from ge_core.ops.registry import Operand

FLOATS = ("float16", "float32", "float64", "bfloat16")
PRECISIONS = {1: "float32", 10: "float16", 11: "float64", 16: "bfloat16"}  # softmax_precision codes


@dataclass(frozen=True)
class Geometry:
    """Attention's dims, -1 where unknown. kv_len counts K's own tokens; total adds the past cache's."""

    rank: int
    batch: int
    q_heads: int
    kv_heads: int
    q_len: int
    kv_len: int
    past_len: int
    head: int
    v_head: int

    @property
    def total(self) -> int:
        return UNK if min(self.kv_len, self.past_len) < 0 else self.kv_len + self.past_len

    @property
    def group(self) -> int:
        """Query heads per key/value head (1: MHA, q_heads: MQA)."""
        return self.q_heads // self.kv_heads if min(self.q_heads, self.kv_heads) > 0 else UNK


def _agree(*dims: int) -> int | None:
    """The one known value among `dims` (UNK if none), or None when two known values differ."""
    known = {d for d in dims if d >= 0}
    return None if len(known) > 1 else (known.pop() if known else UNK)


def _dim(node: Node, operands: Sequence[Operand | None], what: str, **dims: int) -> int:
    value = _agree(*dims.values())
    if value is None:
        shown = ", ".join(f"{k}={v}" for k, v in dims.items())
        raise shape_error(node, operands, f"{what} must agree: {shown}")
    return value


def _split(node: Node, operands: Sequence[Operand | None], name: str, hidden: int, heads: int) -> int:
    """The head size of a 3-D operand's hidden dim split into `heads`."""
    if hidden >= 0 and hidden % heads:
        raise shape_error(node, operands, f"{name}'s hidden size {hidden} is not a multiple of {heads} heads")
    return hidden // heads if hidden >= 0 else UNK


def _heads_attr(node: Node, operands: Sequence[Operand | None], name: str) -> int | None:
    value = node.attr(name)
    if value is not None and int(value) < 1:
        raise shape_error(node, operands, f"{name} must be >= 1, got {value}")
    return None if value is None else int(value)


def _qkv_dims(node: Node, operands: Sequence[Operand | None], q: TensorDesc, k: TensorDesc, v: TensorDesc
              ) -> tuple[int, int, int, int, int, int]:
    """(q_heads, kv_heads, head, v_head, q_len, kv_len) of 3-D or 4-D Q, K, V."""
    hq, hkv = _heads_attr(node, operands, "q_num_heads"), _heads_attr(node, operands, "kv_num_heads")
    if q.rank == 3:
        if hq is None or hkv is None:
            raise shape_error(node, operands, "3-D Q, K, V need the q_num_heads and kv_num_heads attributes")
        head = _dim(node, operands, "Q's and K's head sizes", Q=_split(node, operands, "Q", q.shape[2], hq),
                    K=_split(node, operands, "K", k.shape[2], hkv))
        return hq, hkv, head, _split(node, operands, "V", v.shape[2], hkv), q.shape[1], k.shape[1]
    if node.op_type == "Attention" and node.opset >= 25 and (hq is not None or hkv is not None):
        raise shape_error(node, operands, "q_num_heads and kv_num_heads must not be given with 4-D inputs")
    q_heads = _dim(node, operands, "Q's heads and q_num_heads", Q=q.shape[1], q_num_heads=hq or UNK)
    kv_heads = _dim(node, operands, "K's and V's heads (and kv_num_heads)", K=k.shape[1], V=v.shape[1],
                    kv_num_heads=hkv or UNK)
    head = _dim(node, operands, "Q's and K's head sizes", Q=q.shape[3], K=k.shape[3])
    return q_heads, kv_heads, head, v.shape[3], q.shape[2], k.shape[2]


def qkv_geometry(node: Node, operands: Sequence[Operand | None]) -> Geometry:
    """Q, K and V's geometry (no past cache), with every shape and dtype check they need."""
    q, k, v = (operand(node, operands, i).desc for i in range(3))
    if q.rank not in (3, 4) or k.rank != q.rank or v.rank != q.rank:
        raise shape_error(node, operands, f"Q, K and V must be all 3-D or all 4-D, got ranks {q.rank}, {k.rank}, "
                                          f"{v.rank}")
    for name, d in (("Q", q), ("K", k), ("V", v)):
        if d.dtype not in FLOATS:
            raise shape_error(node, operands, f"{name} must be one of {', '.join(FLOATS)}, got {d.dtype}")
    if k.dtype != q.dtype:
        raise shape_error(node, operands, f"Q and K must share one dtype, got {q.dtype} and {k.dtype}")
    hq, hkv, head, v_head, q_len, kv_len = _qkv_dims(node, operands, q, k, v)
    if min(hq, hkv) > 0 and hq % hkv:
        raise shape_error(node, operands, f"{hq} query heads are not a multiple of {hkv} key/value heads")
    batch = _dim(node, operands, "the batch sizes", Q=q.shape[0], K=k.shape[0], V=v.shape[0])
    kv_len = _dim(node, operands, "K's and V's sequence lengths", K=kv_len, V=v.shape[-2])
    return Geometry(q.rank, batch, hq, hkv, q_len, kv_len, 0, head, v_head)


def geometry(node: Node, operands: Sequence[Operand | None]) -> Geometry:
    """Attention's geometry with its past cache, checking the cache and nonpad_kv_seqlen inputs."""
    require_inputs(node, operands, 3, 7)
    g = qkv_geometry(node, operands)
    past_k, past_v, nonpad = optional(operands, 4), optional(operands, 5), optional(operands, 6)
    if (past_k is None) != (past_v is None):
        raise shape_error(node, operands, "past_key and past_value must be given together")
    if nonpad is not None:
        if past_k is not None:
            raise shape_error(node, operands, "nonpad_kv_seqlen (an external cache) cannot be combined with "
                                              "past_key/past_value (the op's own cache)")
        if nonpad.desc.dtype != "int64" or nonpad.desc.rank != 1 or _agree(nonpad.desc.shape[0], g.batch) is None:
            raise shape_error(node, operands, f"nonpad_kv_seqlen must be int64 of shape [{g.batch}], got "
                                              f"{nonpad.desc.text()}")
    if past_k is None or past_v is None:
        return g
    q, v = operand(node, operands, 0).desc, operand(node, operands, 2).desc
    for name, d, size, dtype in (("past_key", past_k.desc, g.head, q.dtype), ("past_value", past_v.desc, g.v_head,
                                                                             v.dtype)):
        want = (g.batch, g.kv_heads, UNK, size)
        if d.rank != 4 or any(_agree(a, b) is None for a, b in zip(d.shape, want, strict=True)) or d.dtype != dtype:
            raise shape_error(node, operands, f"{name} must be {dtype} of shape [batch {g.batch}, kv heads "
                                              f"{g.kv_heads}, past length, {size}], got {d.text()}")
    past = _dim(node, operands, "past_key's and past_value's lengths", past_key=past_k.desc.shape[2],
                past_value=past_v.desc.shape[2])
    return Geometry(g.rank, g.batch, g.q_heads, g.kv_heads, g.q_len, g.kv_len, past, g.head, g.v_head)


def check_mask(node: Node, operands: Sequence[Operand | None], g: Geometry, dtype: str) -> None:
    """attn_mask: boolean or of Q's dtype, broadcasting to (batch, q heads, q length, total length), its
    last dim possibly shorter than total (padded with -inf)."""
    mask = optional(operands, 3)
    if mask is None:
        return
    d = mask.desc
    if d.dtype != "bool" and d.dtype != dtype:
        raise shape_error(node, operands, f"attn_mask must be bool or {dtype} (Q's dtype), got {d.dtype}")
    if not 1 <= d.rank <= 4:
        raise shape_error(node, operands, f"attn_mask must have rank 1 to 4, got {d.rank}")
    *lead, last = d.shape
    if last >= 0 and g.total >= 0 and last > g.total:
        raise shape_error(node, operands, f"attn_mask's last dim {last} exceeds the total sequence length {g.total}")
    target = (g.batch, g.q_heads, g.q_len)[3 - len(lead):]
    if any(m not in (1, t) and m >= 0 and t >= 0 for m, t in zip(lead, target, strict=True)):
        raise shape_error(node, operands, f"attn_mask {list(d.shape)} does not broadcast to [batch {g.batch}, "
                                          f"heads {g.q_heads}, q length {g.q_len}, {g.total}]")


def check_attrs(node: Node, operands: Sequence[Operand | None]) -> None:
    mode = int(node.attr("qk_matmul_output_mode", 0))
    if mode not in (0, 1, 2, 3):
        raise shape_error(node, operands, f"qk_matmul_output_mode must be 0, 1, 2 or 3, got {mode}")
    if float(node.attr("softcap", 0.0)) < 0:
        raise shape_error(node, operands, f"softcap must be >= 0, got {node.attr('softcap')}")
    precision = node.attr("softmax_precision")
    if precision is not None and int(precision) not in PRECISIONS:
        raise shape_error(node, operands, f"softmax_precision must be one of {sorted(PRECISIONS)} "
                                          f"({', '.join(PRECISIONS.values())}), got {precision}")
    for name in ("left_window_size", "right_window_size"):
        if int(node.attr(name, -1)) < -1:
            raise shape_error(node, operands, f"{name} must be -1 (unbounded) or >= 0, got {node.attr(name)}")


# ---- FlexAttention (ai.onnx.preview) ------------------------------------------------------------------

def flex_geometry(node: Node, operands: Sequence[Operand | None]) -> Geometry:
    """FlexAttention: 4-D Q, K, V (any trailing operands, tensors its subgraphs capture, left out)."""
    explicit = operands[: len(node.inputs) - node.num_captures]
    require_inputs(node, explicit, 3, 3)
    plain = [name for name in ("score_mod", "prob_mod") if node.attr(name) is not None]
    if plain:
        raise shape_error(node, explicit, f"{' and '.join(plain)} must be a graph attribute (a subgraph)")
    if operand(node, explicit, 0).desc.rank != 4:
        raise shape_error(node, explicit, "FlexAttention needs 4-D Q, K, V (batch, heads, sequence, head size)")
    precision = node.attr("softmax_precision")
    if precision is not None and int(precision) not in PRECISIONS:
        raise shape_error(node, explicit, f"softmax_precision must be one of {sorted(PRECISIONS)}, got {precision}")
    return qkv_geometry(node, explicit)
