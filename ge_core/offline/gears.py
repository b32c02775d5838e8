"""ATC's gears: the input shapes a model is compiled for ahead, and which of them a run's inputs are.

    atc --input_shape="hidden:1,-1,64;mask:1,-1" --dynamic_dims="16,16;64,64"   two gears
    atc --input_shape="x:-1,3,224,224" --dynamic_batch_size="1,2,4,8"            four gears

ATC writes one .om holding every gear; before each execute the application names the gear with
aclmdlSetDynamicBatchSize / aclmdlSetInputDynamicDims, and a size that is not one of the gears set at build
time is an error. A GearSet is that list: the spec with -1 dims, the ATC option that filled them, and each
gear's full input shapes. The Session compiles one model per gear (ge_core/session/plans.py) and an offline
model stores them all (ge_core/offline/gem.py); both refuse a shape outside the gears with `pick`, which
lists the gears in ATC's syntax.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ge_core.errors import UsageError, quote
from ge_core.frontend.input_shapes import DimRange, InputShapes, ShapeSpec, format_input_shapes, parse_shape_spec

GEAR_OPTIONS = ("dynamic_dims", "dynamic_batch_size")  # ATC's flags (GE's ge.dynamicDims, ge.dynamicBatchSize)


@dataclass(frozen=True)
class GearSet:
    spec: ShapeSpec  # the -1 spec as given (ATC's --input_shape): the inputs it names
    option: str  # which of GEAR_OPTIONS gave the values
    shapes: tuple[InputShapes, ...]  # each gear: every input's shape (inputs the spec leaves out too)

    def values(self, index: int) -> tuple[int, ...]:
        """Gear `index`'s sizes of the spec's -1 dims, in order (what --dynamic_dims writes for it)."""
        gear = self.shapes[index]
        return tuple(gear[name][axis] for name, dims in self.spec.items()
                     for axis, d in enumerate(dims) if isinstance(d, DimRange))

    def value_text(self, index: int) -> str:
        """Gear `index` as its option writes it: "16,16" (dims) or "4" (batch)."""
        values = self.values(index)
        return str(values[0]) if self.option == "dynamic_batch_size" else ",".join(map(str, values))

    def atc_flags(self) -> str:
        """The gears in ATC's syntax: --input_shape="x:-1,3" --dynamic_batch_size="1,2,4"."""
        separator = "," if self.option == "dynamic_batch_size" else ";"
        values = separator.join(self.value_text(i) for i in range(len(self.shapes)))
        return f'--input_shape="{format_input_shapes(self.spec)}" --{self.option}="{values}"'

    def listing(self) -> str:
        """Every gear's input shapes, with the ATC flags that made them."""
        shapes = "; ".join(format_input_shapes(s) for s in self.shapes)
        return f"{len(self.shapes)} gear(s) ({self.atc_flags()}): {shapes}"

    def index(self, shapes: Mapping[str, Sequence[int]]) -> int | None:
        """The gear whose shapes `shapes` (a run's inputs) equal, or None."""
        given = {n: tuple(int(d) for d in s) for n, s in shapes.items()}
        for i, gear in enumerate(self.shapes):
            if all(given.get(name) == dims for name, dims in gear.items()):
                return i
        return None

    def pick(self, shapes: Mapping[str, Sequence[int]], what: str = "the model") -> int:
        """The gear of `shapes`; refused, listing the gears, when there is none (as ACL refuses a size that is
        not one of the gears set at build time)."""
        found = self.index(shapes)
        if found is None:
            fed = format_input_shapes({n: s for n, s in shapes.items() if n in self.shapes[0]})
            raise UsageError(f"input shapes {fed} match no gear of {what}, which has {self.listing()}.",
                             hint="Pad the inputs to a gear, or compile with a gear of this shape "
                                  "(--dynamic-dims / --dynamic-batch-size).")
        return found

    def find(self, text: str, what: str = "the model") -> int:
        """The gear written as its option writes it ("16,16", or "4" for a batch size: `--gear`)."""
        wanted = ",".join(part.strip() for part in str(text).split(","))
        for i in range(len(self.shapes)):
            if self.value_text(i) == wanted or ",".join(map(str, self.values(i))) == wanted:
                return i
        raise UsageError(f"{what} has no gear {quote(text)}; it has {self.listing()}.",
                         hint=f"Give one of: {', '.join(self.value_text(i) for i in range(len(self.shapes)))}.")

    def to_json(self) -> dict[str, Any]:
        return {"input_shape": format_input_shapes(self.spec), "option": self.option,
                "shapes": [{n: list(d) for n, d in gear.items()} for gear in self.shapes]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GearSet:
        """A stored GearSet, checked (ValueError, KeyError or TypeError when it is not one)."""
        spec = parse_shape_spec(str(data["input_shape"]), "the stored --input_shape")
        option = str(data["option"])
        if option not in GEAR_OPTIONS:
            raise ValueError(f"unknown gear option {option!r}")
        shapes = tuple({str(n): tuple(_size(d) for d in dims) for n, dims in gear.items()} for gear in data["shapes"])
        if not shapes or any(gear.keys() != shapes[0].keys() for gear in shapes):
            raise ValueError("the gears do not all name the same inputs")
        for gear in shapes:
            if not all(_fits(dims, gear.get(name)) for name, dims in spec.items()):
                raise ValueError(f"gear {format_input_shapes(gear)} does not fit --input_shape")
        return cls(spec, option, shapes)


def _fits(dims: Sequence[object], sizes: Sequence[int] | None) -> bool:
    """Whether a gear's `sizes` are the spec's `dims` with each -1 set."""
    return sizes is not None and len(sizes) == len(dims) and all(
        isinstance(d, DimRange) or d == s for d, s in zip(dims, sizes, strict=True))


def _size(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{value!r} is not a dim size")
    return value
