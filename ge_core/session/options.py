"""A Session's options, spelled as GE's (ge.oo.level, ge.inputShape, ...), mapped onto one CompileConfig
plus what a CompileConfig cannot hold: the dynamic-shape plan (gears, ranges) and the fusion mode.

    SessionOptions.parse({"ge.oo.level": "O3", "ge.socVersion": "Ascend910",
                          "ge.inputShape": "x:1,-1", "ge.dynamicDims": "16;64"})

Values are strings as GE takes them (numbers and booleans are accepted too). An unknown option is refused
listing the known ones; a bad value is refused naming the option and what it accepts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from ge_core.config import PRECISION_MODES, CompileConfig
from ge_core.errors import UsageError, quote
from ge_core.frontend.input_shapes import DimRange, InputShapes, ShapeSpec, format_input_shapes, parse_shape_spec
from ge_core.hardware import profile_names
from ge_core.passes.infra.pipeline import OptLevel
from ge_core.session.shapes import fill, unknown_dims

FUSION_MODES = ("offline", "online")
KNOWN_OPTIONS: dict[str, str] = {
    "ge.oo.level": "O0, O1 or O3 (default O3)",
    "ge.exec.disableReuseMemory": "1 gives every activation its own bytes, 0 plans reuse (default 0)",
    "ge.exec.precision_mode": f"one of {', '.join(PRECISION_MODES)}",
    "ge.socVersion": "the NPU to lower for and simulate on: Ascend310, Ascend310P3, Ascend910, Ascend910B or a "
                     "profile .json",
    "ge.inputShape": 'shapes with -1 or LOW~HIGH dims, e.g. "input_ids:1,-1" or "input_ids:1,1~512"',
    "ge.dynamicDims": 'gears: one value per -1 dim of ge.inputShape, gears separated by ";", e.g. "16,16;64,64"',
    "ge.dynamicBatchSize": 'batch gears for the -1 dims of ge.inputShape, e.g. "1,2,4,8"',
    "ge.fusionMode": "offline (compile per shape, default) or online (compile once, decide per shape at run time)",
    "ge.graph_compiler_cache_dir": "a compile cache folder: compiles done before load from it (default: none)",
}


@dataclass(frozen=True)
class SessionOptions:
    config: CompileConfig  # input_shapes empty: the plan below sets them per compile
    input_shape: ShapeSpec | None = None  # ge.inputShape as written (None: the graph's own input shapes)
    gears: tuple[InputShapes, ...] = ()  # one compile each, at build time
    fusion_mode: str = "offline"
    cache_dir: Path | None = None
    gear_option: str = ""  # ATC's name of the option that gave the gears: dynamic_dims or dynamic_batch_size

    @classmethod
    def parse(cls, options: Mapping[str, object] | None, base: CompileConfig | None = None) -> SessionOptions:
        """`options` by GE's names; the ones given override `base` (default: CompileConfig's defaults), so
        a caller with a whole CompileConfig (the CLI's flags) keeps every field GE has no option for."""
        given = {str(k): _text(k, v) for k, v in (options or {}).items()}
        unknown = sorted(set(given) - set(KNOWN_OPTIONS))
        if unknown:
            raise UsageError(f"unknown session option(s) {', '.join(quote(u) for u in unknown)}.",
                             hint="Known options: " + "; ".join(f"{k} ({v})" for k, v in KNOWN_OPTIONS.items()) + ".")
        config = replace(base or CompileConfig(), input_shapes="")  # the plan sets the shapes per compile
        if "ge.oo.level" in given:
            config = replace(config, opt_level=_opt_level(given["ge.oo.level"]))
        if "ge.exec.precision_mode" in given:
            config = replace(config, precision_mode=_choice(given, "ge.exec.precision_mode", PRECISION_MODES, ""))
        if "ge.socVersion" in given:
            config = replace(config, hardware=_soc(given["ge.socVersion"]))
        if "ge.exec.disableReuseMemory" in given:
            reuse = not _flag(given, "ge.exec.disableReuseMemory")
            config = replace(config, memory=replace(config.memory, reuse=reuse))
        spec = parse_shape_spec(given["ge.inputShape"]) if given.get("ge.inputShape") else None
        mode = _choice(given, "ge.fusionMode", FUSION_MODES, "offline")
        cache = Path(given["ge.graph_compiler_cache_dir"]) if given.get("ge.graph_compiler_cache_dir") else None
        option = "dynamic_batch_size" if "ge.dynamicBatchSize" in given else "dynamic_dims"
        return cls(config, spec, _gears(given, spec, mode), mode, cache, option)

    def with_spec(self, spec: ShapeSpec) -> SessionOptions:
        """These options for a graph whose own input shapes stand in for a missing ge.inputShape."""
        return self if self.input_shape is not None else replace(self, input_shape=spec)


def _text(key: object, value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if not isinstance(value, str | int | float):
        raise UsageError(f"session option {quote(key)} must be a string, not {type(value).__name__}.")
    return str(value).strip()


def _opt_level(value: str) -> str:
    try:
        return str(OptLevel.parse(value))
    except UsageError:
        raise UsageError(f"ge.oo.level: unknown level {quote(value)}.", hint="Use O0, O1 or O3.") from None


def _choice(given: Mapping[str, str], key: str, known: tuple[str, ...], default: str) -> str:
    value = given.get(key, default)
    if value not in known:
        raise UsageError(f"{key}: unknown value {quote(value)}.", hint=f"Use one of: {', '.join(known)}.")
    return value


def _flag(given: Mapping[str, str], key: str) -> bool:
    value = given[key].lower()
    if value not in ("0", "1", "true", "false"):
        raise UsageError(f"{key}: {quote(given[key])} is not 0 or 1.")
    return value in ("1", "true")


def _soc(value: str) -> str:
    """GE's SoC names (Ascend910B3, Ascend310P3 ...) -> the closest hardware profile; a .json path as is."""
    if value.endswith(".json"):
        return value
    lowered = value.lower()
    for name in sorted(profile_names(), key=len, reverse=True):
        if lowered.startswith(name):
            return name
    raise UsageError(f"ge.socVersion: unknown SoC {quote(value)}.",
                     hint=f"Known: {', '.join(profile_names())} (GE's spellings such as Ascend910B3 work too), "
                          "or a hardware profile .json.")


def _gears(given: Mapping[str, str], spec: ShapeSpec | None, mode: str) -> tuple[InputShapes, ...]:
    dims_text, batch_text = given.get("ge.dynamicDims"), given.get("ge.dynamicBatchSize")
    if dims_text is None and batch_text is None:
        return ()
    key = "ge.dynamicDims" if dims_text is not None else "ge.dynamicBatchSize"
    if dims_text is not None and batch_text is not None:
        raise UsageError("ge.dynamicDims and ge.dynamicBatchSize are both given.", hint="Give one of them.")
    if mode == "online":
        raise UsageError(f"{key} compiles gears ahead; ge.fusionMode online decides at run time.",
                         hint="Use ge.inputShape ranges (LOW~HIGH) with online fusion, or offline with gears.")
    if spec is None or not unknown_dims(spec):
        raise UsageError(f"{key} needs ge.inputShape with -1 at the dims the gears set.",
                         hint='Example: "ge.inputShape": "input_ids:1,-1", "ge.dynamicDims": "16;64".')
    unknown = unknown_dims(spec)
    if any(d != DimRange() for dims in spec.values() for d in dims if isinstance(d, DimRange)):
        raise UsageError(f"{key}: ge.inputShape {quote(format_input_shapes(spec))} has ranges; gears set -1 dims.")
    if batch_text is not None:
        values = [[size] * len(unknown) for size in _sizes(key, batch_text.split(","))]
    else:
        values = [_sizes(key, gear.split(",")) for gear in str(dims_text).split(";") if gear.strip()]
    for gear in values:
        if len(gear) != len(unknown):
            where = ", ".join(f"{name}[{axis}]" for name, axis in unknown)
            raise UsageError(f"{key}: gear {quote(','.join(map(str, gear)))} has {len(gear)} value(s); ge.inputShape "
                             f"has {len(unknown)} -1 dim(s) ({where}).", hint="Give one value per -1 dim, in order.")
    if not values:
        raise UsageError(f"{key}: no gears given.")
    return tuple(fill(spec, g) for g in dict.fromkeys(tuple(g) for g in values))  # repeated gears once


def _sizes(key: str, parts: list[str]) -> list[int]:
    try:
        sizes = [int(p) for p in parts]
    except ValueError:
        raise UsageError(f"{key}: {quote(','.join(parts))} is not a list of integers.") from None
    if any(s < 1 for s in sizes):
        raise UsageError(f"{key}: gear sizes must be >= 1, not {sizes}.")
    return sizes
