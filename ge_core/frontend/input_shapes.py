"""ATC-style input shape specs: `--input_shape "x:1,3,640,640;mask:1,128"`, the one parser of that grammar.

    "x:1,3,224,224;mask:1,128"        fixed dims (what import and compile take)
    "input_ids:1,-1;mask:1,-1"        -1: an unknown dim (GE's ge.inputShape: set by a gear, or any size)
    "input_ids:1,1~512;mask:1,1~512"  lo~hi: a dim range (lo~-1: no upper bound)

`parse_input_shapes` takes fixed dims only; `parse_shape_spec` takes -1 and ranges too (ge_core.session).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ge_core.errors import UsageError, quote

InputShapes = dict[str, tuple[int, ...]]


@dataclass(frozen=True)
class DimRange:
    """A dim of any size from `low` to `high` (None: no upper bound). -1 is DimRange(1, None)."""

    low: int = 1
    high: int | None = None

    def __contains__(self, size: object) -> bool:
        return isinstance(size, int) and size >= self.low and (self.high is None or size <= self.high)

    def __str__(self) -> str:
        if self.low == 1 and self.high is None:
            return "-1"
        return f"{self.low}~{-1 if self.high is None else self.high}"


Dim = int | DimRange
ShapeSpec = dict[str, tuple[Dim, ...]]  # input name -> dims, in the order the spec wrote them

_FIXED_EXAMPLE = 'Example: "x:1,3,224,224;mask:1,128".'
_RANGED_EXAMPLE = 'Example: "input_ids:1,-1;mask:1,-1", or a range "input_ids:1,1~512".'


def parse_input_shapes(spec: str | Mapping[str, Sequence[int]] | None, option: str = "input shape") -> InputShapes:
    """Parse `name:d0,d1;name2:d0` (or accept a mapping). Dims must be non-negative integers. Errors name
    `option` (how the caller's user wrote the spec: a flag, a field) and the offending text."""
    if spec is None or spec == "":
        return {}
    if isinstance(spec, Mapping):
        where = f"{option} {quote(dict(spec))}"
        return {str(k): tuple(_fixed(_dim(str(k), str(d).strip(), where, False)) for d in v) for k, v in spec.items()}
    return {name: tuple(_fixed(d) for d in dims) for name, dims in _parse(str(spec), option, False).items()}


def parse_shape_spec(spec: str, option: str = "ge.inputShape") -> ShapeSpec:
    """`name:d0,d1;name2:d0` where each dim is an int, -1 or lo~hi. Errors name `option` and the dim."""
    return _parse(str(spec), option, True)


def format_input_shapes(shapes: Mapping[str, Sequence[Dim]]) -> str:
    """The spec text of `shapes` (fixed dims, -1 or ranges): what the parsers read back."""
    return ";".join(f"{name}:{','.join(str(d) for d in dims)}" for name, dims in shapes.items())


def _parse(spec: str, option: str, ranged: bool) -> ShapeSpec:
    where = f"{option} {quote(spec)}"
    shapes: ShapeSpec = {}
    for part in (p.strip() for p in spec.split(";")):
        if not part:
            continue
        name, sep, dims = part.rpartition(":")
        if not sep or not name:
            raise UsageError(f"{where}: {quote(part)} is not NAME:D0,D1,...",
                             hint=_RANGED_EXAMPLE if ranged else _FIXED_EXAMPLE)
        if name in shapes:
            raise UsageError(f"{where}: input {quote(name)} is given twice.", hint="Give each input once.")
        shapes[name] = tuple(_dim(name, d.strip(), where, ranged) for d in dims.split(",")) if dims.strip() else ()
    return shapes


def _dim(name: str, text: str, where: str, ranged: bool) -> Dim:
    low_text, tilde, high_text = text.partition("~") if ranged else (text, "", "")
    try:
        low = int(low_text)
        high = int(high_text) if tilde else None
    except ValueError:
        what = "an integer, -1 or a range LOW~HIGH" if ranged else "an integer"
        raise UsageError(f"{where}: input {quote(name)} has dim {quote(text)}, which is not {what}.") from None
    if not tilde:
        if low == -1 and ranged:
            return DimRange()
        if low < 0:
            rule = "dims are >= 0, or -1 for unknown" if ranged else "dims must be >= 0"
            raise UsageError(f"{where}: input {quote(name)} has dim {low}; {rule}.")
        return low
    if low < 1 or (high is not None and high != -1 and high < low):
        raise UsageError(f"{where}: input {quote(name)} has range {quote(text)}; write LOW~HIGH with "
                         "1 <= LOW <= HIGH (HIGH -1: no upper bound).")
    return DimRange(low, None if high == -1 else high)


def _fixed(dim: Dim) -> int:
    assert isinstance(dim, int)  # _dim gives a DimRange only when ranges are allowed
    return dim
