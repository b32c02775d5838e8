"""ATen table rows: views, layout and indexing (view, permute, slice, cat, split, gather, casts).

A size may be symbolic (a `torch.export.Dim`): the rows read the FX node's own example shape, where a
symbolic dim is a SymInt, and write the GE op so it holds for every value: Reshape's 0 keeps the input's
dim at that axis, its -1 infers one dim, Expand's 1 keeps the input's dim by broadcasting.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ge_core.frontend.torch.aten_math import Row, arg
from ge_core.frontend.torch.emit import Arg, ConversionProblem, Emitter
from ge_core.ir.dtypes import onnx_code

INT64_MAX = 2**63 - 1


def is_static(dim: Any) -> bool:
    return isinstance(dim, int)


def _reshape_sizes(in_shape: tuple[Any, ...], out_shape: tuple[Any, ...]) -> list[int] | None:
    """Reshape's constant target (0 keeps the input's dim, -1 infers one), or None when it needs more."""
    sizes: list[int] = []
    for axis, dim in enumerate(out_shape):
        if is_static(dim):
            sizes.append(int(dim))
        elif axis < len(in_shape) and str(in_shape[axis]) == str(dim):
            sizes.append(0)  # the input's (symbolic) dim at this axis
        else:
            sizes.append(-1)
    return sizes if sizes.count(-1) <= 1 else None


def _reshape(e: Emitter, n: Arg) -> str:
    x = n.args[0]
    sizes = _reshape_sizes(e.shape(x), e.shape(n))
    target = e.ints(sizes) if sizes is not None else _shape_tensor(e, e.shape(n))
    return e.one("Reshape", [e.tensor(x), target])


def _shape_tensor(e: Emitter, shape: tuple[Any, ...]) -> str:
    """The target shape computed at run time: Concat of constants and Shape slices of the graph inputs
    that carry each symbol (a symbol times a number: that slice times the number)."""
    return e.one("Concat", [_dim_tensor(e, d, list(map(str, shape))) for d in shape], {"axis": 0})


def _dim_tensor(e: Emitter, dim: Any, shape: list[str]) -> str:
    if is_static(dim):
        return e.ints([int(dim)])
    expr = dim.node.expr
    factor, symbols = 1, []
    for term in expr.as_ordered_factors():
        if term.is_Integer:
            factor *= int(term)
        elif term.is_Symbol and str(term) in e.sym_sources:
            symbols.append(e.sym_sources[str(term)])
        else:
            raise ConversionProblem(f"reshape to {shape}: GE cannot compute the size {expr} at run time")
    pieces = [e.one("Shape", [source], {"start": axis, "end": axis + 1}) for source, axis in symbols]
    if factor != 1 or not pieces:
        pieces.append(e.ints([factor]))
    result = pieces[0]
    for piece in pieces[1:]:
        result = e.one("Mul", [result, piece])
    return result


def _expand(e: Emitter, n: Arg) -> str:
    sizes = [int(d) if is_static(d) else 1 for d in e.shape(n)]
    return e.one("Expand", [e.tensor(n.args[0]), e.ints(sizes)])


def _axis(dim: int, rank: int) -> int:
    return dim + rank if dim < 0 else dim


def _permute(e: Emitter, n: Arg) -> str:
    x = n.args[0]
    return e.one("Transpose", [e.tensor(x)], {"perm": [_axis(d, e.rank(x)) for d in n.args[1]]})


def _transpose(e: Emitter, n: Arg) -> str:
    x, rank = n.args[0], e.rank(n.args[0])
    perm = list(range(rank))
    a, b = (_axis(d, rank) for d in (arg(n, 1, "dim0", 0), arg(n, 2, "dim1", 1)))
    perm[a], perm[b] = perm[b], perm[a]
    return e.one("Transpose", [e.tensor(x)], {"perm": perm})


def _unsqueeze(e: Emitter, n: Arg) -> str:
    x = n.args[0]
    return e.one("Unsqueeze", [e.tensor(x), e.ints([_axis(n.args[1], e.rank(x) + 1)])])


def _squeeze(e: Emitter, n: Arg) -> str:
    """torch leaves a named dim that is not 1 alone; ONNX would refuse it, so only the 1s are named."""
    x = n.args[0]
    shape = e.shape(x)
    dims = arg(n, 1, "dim", None)
    named = range(len(shape)) if dims is None else [dims] if isinstance(dims, int) else dims
    axes = [a for a in (_axis(d, len(shape)) for d in named) if is_static(shape[a]) and shape[a] == 1]
    return e.one("Squeeze", [e.tensor(x), e.ints(axes)]) if axes else e.one("Identity", [e.tensor(x)])


def _identity(e: Emitter, n: Arg) -> str:
    return e.one("Identity", [e.tensor(n.args[0])])


def _to_copy(e: Emitter, n: Arg) -> str:
    """_to_copy / to.dtype: a Cast when the dtype changes (devices and layouts do not exist here)."""
    x = n.args[0]
    source, target = e.dtype(x), e.dtypes[n.name]
    if source == target:
        return e.one("Identity", [e.tensor(x)])
    code = onnx_code(target)
    if code is None:
        raise ConversionProblem(f"casts to {target}, which GE has no ONNX code for")
    return e.one("Cast", [e.tensor(x)], {"to": code})


def _select(e: Emitter, n: Arg) -> str:
    x, dim, index = n.args
    if not is_static(index):
        raise ConversionProblem("selects at a symbolic index")
    index_tensor = e.const(np.asarray(int(index), dtype=np.int64), "index")
    return e.one("Gather", [e.tensor(x), index_tensor], {"axis": _axis(dim, e.rank(x))})


def _slice(e: Emitter, n: Arg) -> str:
    x = n.args[0]
    dim, start, end, step = (arg(n, 1, "dim", 0), arg(n, 2, "start"), arg(n, 3, "end"), arg(n, 4, "step", 1))
    if not all(v is None or is_static(v) for v in (start, end, step)):
        raise ConversionProblem("slices with symbolic bounds")
    start = 0 if start is None else start
    end = INT64_MAX if end is None else min(int(end), INT64_MAX)
    axes = _axis(dim, e.rank(x))
    return e.one("Slice", [e.tensor(x), e.ints([start]), e.ints([end]), e.ints([axes]), e.ints([step])])


def _cat(e: Emitter, n: Arg) -> str:
    tensors = [t for t in n.args[0] if 0 not in e.shape(t)]  # torch skips empty operands, ONNX would not
    dim = arg(n, 1, "dim", 0)
    return e.one("Concat", [e.tensor(t) for t in tensors], {"axis": _axis(dim, e.rank(tensors[0]))})


def _split_sizes(e: Emitter, n: Arg) -> list[str]:
    x, sizes = n.args[0], list(n.args[1])
    dim = _axis(arg(n, 2, "dim", 0), e.rank(x))
    return e.node("Split", [e.tensor(x), e.ints(sizes)], {"axis": dim}, outputs=len(sizes))


def _split(e: Emitter, n: Arg) -> list[str]:
    """split.Tensor: equal chunks of split_size, the last one shorter."""
    x, size = n.args[0], n.args[1]
    dim = _axis(arg(n, 2, "dim", 0), e.rank(x))
    total = e.shape(x)[dim]
    if not is_static(total):
        raise ConversionProblem("splits a symbolic dim")
    sizes = [min(size, total - start) for start in range(0, total, size)]
    return e.node("Split", [e.tensor(x), e.ints(sizes)], {"axis": dim}, outputs=len(sizes))


def _unbind(e: Emitter, n: Arg) -> list[str]:
    x = n.args[0]
    dim = _axis(arg(n, 1, "dim", 0), e.rank(x))
    count = e.shape(x)[dim]
    if not is_static(count):
        raise ConversionProblem("unbinds a symbolic dim")
    parts = e.node("Split", [e.tensor(x), e.ints([1] * count)], {"axis": dim}, outputs=count)
    return [e.one("Squeeze", [p, e.ints([dim])]) for p in parts]


def _index_select(e: Emitter, n: Arg) -> str:
    x, dim, index = n.args
    return e.one("Gather", [e.tensor(x), e.tensor(index)], {"axis": _axis(dim, e.rank(x))})


def _index(e: Emitter, n: Arg) -> str:
    """x[..., idx] with one index tensor: a Gather on its axis; x[i0, i1, ...] on the leading axes: the
    indices broadcast and stacked, then one GatherND (PyTorch's advanced indexing)."""
    x, indices = n.args
    given = [(axis, i) for axis, i in enumerate(indices) if i is not None]
    if any(e.dtype(i) == "bool" for _, i in given):
        raise ConversionProblem("indexes with a boolean mask, whose result size depends on the data")
    if len(given) == 1:
        axis, index = given[0]
        return e.one("Gather", [e.tensor(x), e.tensor(index)], {"axis": axis})
    if [axis for axis, _ in given] != list(range(len(given))):
        raise ConversionProblem("indexes with several index tensors that are not on the leading axes")
    shapes = [e.shape(i) for _, i in given]
    if not all(is_static(d) for s in shapes for d in s):
        raise ConversionProblem("indexes with several index tensors of symbolic shape")
    common = [int(d) for d in np.broadcast_shapes(*shapes)]
    columns = [e.one("Unsqueeze", [e.one("Expand", [e.tensor(i), e.ints(common)]), e.ints([-1])])
               for _, i in given]
    stacked = e.one("Concat", columns, {"axis": -1})
    return e.one("GatherND", [e.tensor(x), stacked])


def _gather(e: Emitter, n: Arg) -> str:
    """torch.gather(x, dim, index): ONNX's GatherElements."""
    x, dim, index = n.args[:3]
    return e.one("GatherElements", [e.tensor(x), e.tensor(index)], {"axis": _axis(dim, e.rank(x))})


def _embedding(e: Emitter, n: Arg) -> str:
    weight, indices = n.args[:2]
    return e.one("Gather", [e.tensor(weight), e.tensor(indices)], {"axis": 0})


SHAPE_ROWS: dict[str, Row] = {
    "aten.view.default": _reshape,
    "aten._unsafe_view.default": _reshape,
    "aten.reshape.default": _reshape,
    "aten.expand.default": _expand,
    "aten.permute.default": _permute,
    "aten.transpose.int": _transpose,
    "aten.t.default": _transpose,
    "aten.unsqueeze.default": _unsqueeze,
    "aten.squeeze.dims": _squeeze,
    "aten.squeeze.dim": _squeeze,
    "aten.squeeze.default": _squeeze,
    "aten.clone.default": _identity,
    "aten.alias.default": _identity,
    "aten.detach.default": _identity,
    "aten.contiguous.default": _identity,
    "aten.dropout.default": _identity,  # inference: dropout is the identity
    "aten._to_copy.default": _to_copy,
    "aten.to.dtype": _to_copy,
    "aten.select.int": _select,
    "aten.slice.Tensor": _slice,
    "aten.cat.default": _cat,
    "aten.split_with_sizes.default": _split_sizes,
    "aten.split.Tensor": _split,
    "aten.unbind.int": _unbind,
    "aten.index_select.default": _index_select,
    "aten.index.Tensor": _index,
    "aten.gather.default": _gather,
    "aten.embedding.default": _embedding,
}
