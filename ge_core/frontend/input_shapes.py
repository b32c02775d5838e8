"""ATC-style input shape specs: `--input_shape "x:1,3,640,640;mask:1,128"`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ge_core.errors import UsageError

InputShapes = dict[str, tuple[int, ...]]


def parse_input_shapes(spec: str | Mapping[str, Sequence[int]] | None) -> InputShapes:
    """Parse `name:d0,d1;name2:d0` (or accept a mapping). Dims must be non-negative integers."""
    if spec is None or spec == "":
        return {}
    if isinstance(spec, Mapping):
        return {str(k): _dims(str(k), [str(d) for d in v], str(dict(spec))) for k, v in spec.items()}
    shapes: InputShapes = {}
    for part in str(spec).split(";"):
        part = part.strip()
        if not part:
            continue
        name, sep, dims = part.rpartition(":")
        if not sep or not name:
            raise UsageError(f"input shape '{part}' in '{spec}' is not NAME:D0,D1,...",
                             hint='Example: --input-shape "x:1,3,224,224;mask:1,128".')
        if name in shapes:
            raise UsageError(f"input '{name}' is given twice in input shape spec '{spec}'.")
        shapes[name] = _dims(name, dims.split(",") if dims.strip() else [], spec)
    return shapes


def format_input_shapes(shapes: Mapping[str, Sequence[int]]) -> str:
    return ";".join(f"{k}:{','.join(str(d) for d in v)}" for k, v in shapes.items())


def _dims(name: str, parts: list[str], spec: str) -> tuple[int, ...]:
    dims = []
    for p in parts:
        p = p.strip()
        try:
            d = int(p)
        except ValueError:
            raise UsageError(f"input '{name}': dim '{p}' in '{spec}' is not an integer.") from None
        if d < 0:
            raise UsageError(f"input '{name}': dim {d} in '{spec}' is negative; dims must be >= 0.")
        dims.append(d)
    return tuple(dims)
