"""ATen table rows: elementwise math, comparisons, reductions and matrix products.

Each row maps one ATen overload (`aten.add.Tensor`) to the ONNX-named GE ops that compute it. A Python
number operand becomes a constant typed like the tensor operand, as PyTorch's type promotion does for
a scalar.
"""

from __future__ import annotations

from collections.abc import Callable

from ge_core.frontend.torch.emit import Arg, ConversionProblem, Emitter

Row = Callable[[Emitter, Arg], list[str] | str]


def arg(n: Arg, index: int, name: str, default: object = None) -> Arg:
    """Argument `index` (or keyword `name`) of FX node `n`."""
    if index < len(n.args):
        return n.args[index]
    return n.kwargs.get(name, default)


def _binary(op_type: str) -> Row:
    """Arithmetic: both operands in the result's dtype (PyTorch promotes; ONNX wants them equal)."""
    def row(e: Emitter, n: Arg) -> str:
        out = e.dtypes[n.name]
        return e.one(op_type, [e.typed(n.args[0], out), e.typed(n.args[1], out)])
    return row


def _compare(op_type: str) -> Row:
    """Comparisons: a Python number takes the tensor operand's dtype (the result is bool)."""
    def row(e: Emitter, n: Arg) -> str:
        a, b = n.args[0], n.args[1]
        like = a if hasattr(a, "op") else b
        return e.one(op_type, [e.tensor(a, like), e.tensor(b, like)])
    return row


def _unary(op_type: str, **attrs: object) -> Row:
    return lambda e, n: e.one(op_type, [e.tensor(n.args[0])], dict(attrs))


def _add_sub(op_type: str) -> Row:
    """x + alpha * y: alpha (rarely not 1) scales the second operand first."""
    def row(e: Emitter, n: Arg) -> str:
        a, b, out = n.args[0], n.args[1], e.dtypes[n.name]
        alpha = arg(n, 2, "alpha", 1)
        other = e.typed(b, out)
        if alpha != 1:
            other = e.one("Mul", [other, e.typed(alpha, out)])
        return e.one(op_type, [e.typed(a, out), other])
    return row


def _rsub(e: Emitter, n: Arg) -> str:
    """other - alpha * x."""
    x, other, alpha, out = n.args[0], n.args[1], arg(n, 2, "alpha", 1), e.dtypes[n.name]
    scaled = e.typed(x, out) if alpha == 1 else e.one("Mul", [e.typed(x, out), e.typed(alpha, out)])
    return e.one("Sub", [e.typed(other, out), scaled])


def _div(e: Emitter, n: Arg) -> str:
    mode = arg(n, 2, "rounding_mode")
    quotient = _binary("Div")(e, n)
    assert isinstance(quotient, str)
    if mode is None:
        return quotient
    if mode == "floor":
        return e.one("Floor", [quotient])
    raise ConversionProblem(f"rounding_mode {mode!r} has no GE equivalent here (only None and 'floor')")


def _rsqrt(e: Emitter, n: Arg) -> str:
    return e.one("Reciprocal", [e.one("Sqrt", [e.tensor(n.args[0])])])


def _clamp(e: Emitter, n: Arg) -> str:
    x = n.args[0]
    low, high = arg(n, 1, "min"), arg(n, 2, "max")
    bounds = ["" if v is None else e.tensor(v, x) for v in (low, high)]
    while bounds and not bounds[-1]:
        bounds.pop()
    return e.one("Clip", [e.tensor(x), *bounds])


def _hardtanh(e: Emitter, n: Arg) -> str:
    x = n.args[0]
    low, high = arg(n, 1, "min_val", -1.0), arg(n, 2, "max_val", 1.0)
    return e.one("Clip", [e.tensor(x), e.tensor(low, x), e.tensor(high, x)])


def _silu(e: Emitter, n: Arg) -> str:
    x = e.tensor(n.args[0])
    return e.one("Mul", [x, e.one("Sigmoid", [x])])


def _leaky_relu(e: Emitter, n: Arg) -> str:
    return e.one("LeakyRelu", [e.tensor(n.args[0])], {"alpha": float(arg(n, 1, "negative_slope", 0.01))})


def _where(e: Emitter, n: Arg) -> str:
    cond, a, b = n.args
    like = a if hasattr(a, "op") else b
    return e.one("Where", [e.tensor(cond), e.tensor(a, like), e.tensor(b, like)])


def _masked_fill(e: Emitter, n: Arg) -> str:
    x, mask, value = n.args
    return e.one("Where", [e.tensor(mask), e.tensor(value, x), e.tensor(x)])


def _not_equal(e: Emitter, n: Arg) -> str:
    equal = _compare("Equal")(e, n)
    assert isinstance(equal, str)
    return e.one("Not", [equal])


def _bitwise(bool_op: str, int_op: str) -> Row:
    """bitwise_and/or/not: the logical op on bools (masks), the bitwise one on integers."""
    def row(e: Emitter, n: Arg) -> str:
        tensors = [a for a in n.args if hasattr(a, "op")]
        op_type = bool_op if all(e.dtype(t) == "bool" for t in tensors) else int_op
        return e.one(op_type, [e.tensor(a, tensors[0]) for a in n.args])
    return row


def _reduce(op_type: str) -> Row:
    """mean.dim / sum.dim_IntList / amax: axes as an input (opset 18+), keepdim as keepdims."""
    def row(e: Emitter, n: Arg) -> str:
        x, dims = n.args[0], arg(n, 1, "dim")
        keep = int(bool(arg(n, 2, "keepdim", False)))
        if arg(n, 3, "dtype") is not None and op_type != "ReduceMax":
            raise ConversionProblem("a reduction with dtype= is not supported; cast the input first")
        if dims is None or dims == []:
            return e.one(op_type, [e.tensor(x)], {"keepdims": keep})
        axes = [dims] if isinstance(dims, int) else list(dims)
        return e.one(op_type, [e.tensor(x), e.ints(axes)], {"keepdims": keep})
    return row


def _addmm(e: Emitter, n: Arg) -> str:
    """beta * bias + alpha * (a @ b): GE's Gemm."""
    bias, a, b = n.args[:3]
    attrs = {"beta": float(arg(n, 3, "beta", 1)), "alpha": float(arg(n, 4, "alpha", 1))}
    return e.one("Gemm", [e.tensor(a), e.tensor(b), e.tensor(bias)], attrs)


def _pow(e: Emitter, n: Arg) -> str:
    base, exponent = n.args
    out = e.dtypes[n.name]
    if exponent == 2:  # x ** 2: one multiply, as GE's fusion and the ONNX exporter's graphs have it
        x = e.typed(base, out)
        return e.one("Mul", [x, x])
    return e.one("Pow", [e.typed(base, out), e.typed(exponent, out)])


MATH_ROWS: dict[str, Row] = {
    "aten.add.Tensor": _add_sub("Add"),
    "aten.add.Scalar": _add_sub("Add"),
    "aten.sub.Tensor": _add_sub("Sub"),
    "aten.sub.Scalar": _add_sub("Sub"),
    "aten.rsub.Scalar": _rsub,
    "aten.rsub.Tensor": _rsub,
    "aten.mul.Tensor": _binary("Mul"),
    "aten.mul.Scalar": _binary("Mul"),
    "aten.div.Tensor": _div,
    "aten.div.Scalar": _div,
    "aten.div.Tensor_mode": _div,
    "aten.pow.Tensor_Scalar": _pow,
    "aten.pow.Tensor_Tensor": _pow,
    "aten.maximum.default": _binary("Max"),
    "aten.minimum.default": _binary("Min"),
    "aten.neg.default": _unary("Neg"),
    "aten.abs.default": _unary("Abs"),
    "aten.exp.default": _unary("Exp"),
    "aten.log.default": _unary("Log"),
    "aten.sqrt.default": _unary("Sqrt"),
    "aten.rsqrt.default": _rsqrt,
    "aten.reciprocal.default": _unary("Reciprocal"),
    "aten.erf.default": _unary("Erf"),
    "aten.sin.default": _unary("Sin"),
    "aten.cos.default": _unary("Cos"),
    "aten.floor.default": _unary("Floor"),
    "aten.ceil.default": _unary("Ceil"),
    "aten.relu.default": _unary("Relu"),
    "aten.sigmoid.default": _unary("Sigmoid"),
    "aten.tanh.default": _unary("Tanh"),
    "aten.silu.default": _silu,
    "aten.leaky_relu.default": _leaky_relu,
    "aten.hardtanh.default": _hardtanh,
    "aten.clamp.default": _clamp,
    "aten.where.self": _where,
    "aten.masked_fill.Scalar": _masked_fill,
    "aten.masked_fill.Tensor": _masked_fill,
    "aten.eq.Tensor": _compare("Equal"),
    "aten.eq.Scalar": _compare("Equal"),
    "aten.ne.Tensor": _not_equal,
    "aten.ne.Scalar": _not_equal,
    "aten.lt.Tensor": _compare("Less"),
    "aten.lt.Scalar": _compare("Less"),
    "aten.le.Tensor": _compare("LessOrEqual"),
    "aten.le.Scalar": _compare("LessOrEqual"),
    "aten.gt.Tensor": _compare("Greater"),
    "aten.gt.Scalar": _compare("Greater"),
    "aten.ge.Tensor": _compare("GreaterOrEqual"),
    "aten.ge.Scalar": _compare("GreaterOrEqual"),
    "aten.logical_not.default": _unary("Not"),
    "aten.bitwise_and.Tensor": _bitwise("And", "BitwiseAnd"),
    "aten.bitwise_or.Tensor": _bitwise("Or", "BitwiseOr"),
    "aten.bitwise_not.default": _bitwise("Not", "BitwiseNot"),
    "aten.logical_and.default": _binary("And"),
    "aten.logical_or.default": _binary("Or"),
    "aten.mean.dim": _reduce("ReduceMean"),
    "aten.mean.default": _reduce("ReduceMean"),
    "aten.sum.dim_IntList": _reduce("ReduceSum"),
    "aten.sum.default": _reduce("ReduceSum"),
    "aten.amax.default": _reduce("ReduceMax"),
    "aten.amin.default": _reduce("ReduceMin"),
    "aten.mm.default": _binary("MatMul"),
    "aten.bmm.default": _binary("MatMul"),
    "aten.matmul.default": _binary("MatMul"),
    "aten.addmm.default": _addmm,
}
