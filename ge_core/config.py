"""CompileConfig: everything a compile depends on, as one frozen, hashable, serializable object.

The sidebar, the CLI flags, a reproducer's config.json and GE switch files all build this one object and
hand it to `ge_core.compile`; `key()` names it for caches and sweeps. Every field is checked when the
object is made, so a config that exists is one that compiles: unknown pass, strategy, order, precision
mode or hardware names are refused there, listing the known ones.

    config = CompileConfig(opt_level="O1", disabled_passes={"CsePass"}, memory=MemoryConfig(reuse=False))
    CompileConfig.from_json(config.to_json()) == config
    CompileConfig.build(opt_level="O3", memory_reuse=False)      # the flat keyword form compile() takes
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ge_core.errors import UsageError
from ge_core.frontend.input_shapes import format_input_shapes, parse_input_shapes
from ge_core.hardware import load_profile
from ge_core.hardware.profile import PRECISION_MODES
from ge_core.memory.order import MEMORY_ORDERS
from ge_core.memory.planners import check_strategy
from ge_core.passes.infra.pipeline import OptLevel, all_passes
from ge_core.passes.infra.switches import apply_switches, read_switch_file

# ATC's --precision_mode values (PRECISION_MODES; the simulator gives each its rounding: ge_core.sim.precision).
# None: the hardware profile's default, which is ATC's own (force_fp16) for every built-in part.
DEFAULT_PRECISION: str | None = None


@dataclass(frozen=True)
class MemoryConfig:
    """How activations are planned into one arena (GE's memory options)."""

    reuse: bool = True  # False is GE's ge.exec.disableReuseMemory: every activation gets its own bytes
    strategy: str = "auto"  # "auto" keeps the smallest arena of every planner (GE's hybrid assigner)
    alignment: int = 512  # bytes every offset is aligned to
    no_copy_concat: bool = True  # Concat inputs written in place at their slice of the output (no task)
    order: str = "graph"  # "memory_aware": adopt a topological order with a lower peak when one is found

    def __post_init__(self) -> None:
        check_strategy(self.strategy)
        if self.order not in MEMORY_ORDERS:
            raise UsageError(f"unknown memory order '{self.order}'.",
                             hint=f"Known orders: {', '.join(MEMORY_ORDERS)}.")
        if not isinstance(self.alignment, int) or isinstance(self.alignment, bool) or self.alignment < 1:
            raise UsageError(f"memory alignment must be a positive number of bytes, not {self.alignment!r}.")

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MemoryConfig:
        return cls(**_known_keys(data, cls, "memory"))


@dataclass(frozen=True)
class CompileConfig:
    """One compile: which passes run, for which inputs and target, and how memory is planned."""

    opt_level: OptLevel | str = OptLevel.O3  # a string is parsed: always an OptLevel once made
    input_shapes: str = ""  # ATC's --input_shape for symbolic dims ("x:1,3,224,224;mask:1,128"), canonical form
    disabled_passes: frozenset[str] = frozenset()  # passes switched off (a switched-off fusion pass dry-runs)
    pipeline: tuple[str, ...] | None = None  # pass names to run instead of the opt level's default steps
    hardware: str | None = None  # NPU target (profile name or .json path): adds the lowering passes
    precision_mode: str | None = DEFAULT_PRECISION  # ATC's --precision_mode when simulated; None: the profile's
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    verify: bool = False  # graph.verify() after every pass

    def __post_init__(self) -> None:
        set_field = object.__setattr__  # frozen: normalise once, here
        set_field(self, "opt_level", OptLevel.parse(self.opt_level))
        set_field(self, "input_shapes", _canonical_shapes(self.input_shapes))
        set_field(self, "disabled_passes", frozenset(_known_passes(self.disabled_passes, "disabled_passes")))
        if self.pipeline is not None:
            set_field(self, "pipeline", tuple(_known_passes(self.pipeline, "pipeline")))
        if self.hardware is not None:
            set_field(self, "hardware", str(self.hardware))
            load_profile(self.hardware)  # an unknown name or a bad profile file is refused now
        if self.precision_mode is not None and self.precision_mode not in PRECISION_MODES:
            raise UsageError(f"unknown precision mode '{self.precision_mode}'.",
                             hint=f"Use one of: {', '.join(PRECISION_MODES)}.")
        if not isinstance(self.memory, MemoryConfig):
            raise UsageError(f"memory must be a MemoryConfig, not {type(self.memory).__name__}.")

    # -- serialisation ------------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values, every field present (the compile report's `config` section)."""
        return {"opt_level": str(self.opt_level), "input_shapes": self.input_shapes,
                "disabled_passes": sorted(self.disabled_passes),
                "pipeline": list(self.pipeline) if self.pipeline is not None else None,
                "hardware": self.hardware, "precision_mode": self.precision_mode,
                "memory": self.memory.to_json(), "verify": self.verify}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str, *, ignore: Iterable[str] = ()) -> CompileConfig:
        """The inverse of to_json (a dict or its JSON text); missing keys take their defaults, unknown
        keys are refused, listing the known ones. `ignore` names keys of other records a file may carry
        beside the config (a reproducer's config.json holds its outcome and commands too)."""
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except json.JSONDecodeError as exc:
                raise UsageError(f"compile config is not valid JSON: {exc}.") from None
        if not isinstance(data, Mapping):
            raise UsageError("a compile config must be a JSON object of option -> value.",
                             hint=f"Known options: {', '.join(f.name for f in fields(cls))}.")
        skipped = set(ignore)
        values = _known_keys({k: v for k, v in data.items() if k not in skipped}, cls, "compile config")
        if "memory" in values:
            if not isinstance(values["memory"], Mapping):
                raise UsageError("compile config: 'memory' must be an object.",
                                 hint=f"Known memory options: {', '.join(f.name for f in fields(MemoryConfig))}.")
            values["memory"] = MemoryConfig.from_json(values["memory"])
        for name in ("disabled_passes", "pipeline"):
            if values.get(name) is not None and not _is_name_list(values[name]):
                raise UsageError(f"compile config: '{name}' must be a list of pass names.")
        if "pipeline" in values and values["pipeline"] is not None:
            values["pipeline"] = tuple(values["pipeline"])
        return cls(**values)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, ignore: Iterable[str] = ()) -> CompileConfig:
        file = Path(path)
        if not file.is_file():
            raise UsageError(f"config file '{path}' not found.")
        return cls.from_json(file.read_text(encoding="utf-8", errors="replace"), ignore=ignore)

    def key(self) -> str:
        """A stable content hash: equal configs give equal keys, in any process, on any machine."""
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    # -- building ----------------------------------------------------------------------------------------

    @classmethod
    def from_switch_file(cls, path: str | os.PathLike[str], base: CompileConfig | None = None) -> CompileConfig:
        """`base` (default: the defaults) with the passes a GE switch file turns off switched off too."""
        base = base or cls()
        off = apply_switches(read_switch_file(path), pass_names())
        return replace(base, disabled_passes=base.disabled_passes | off)

    @classmethod
    def build(cls, *, switch_file: str | os.PathLike[str] | None = None, disabled: Iterable[str] = (),
              memory_reuse: bool | None = None, memory_strategy: str | None = None,
              memory_alignment: int | None = None, memory_no_copy_concat: bool | None = None,
              memory_order: str | None = None, **options: Any) -> CompileConfig:
        """A config from compile()'s keyword form: the fields by name, plus `disabled` (passes switched
        off), `switch_file` and the flat `memory_*` options. Unknown options are refused, listing the known."""
        unknown = sorted(set(options) - {f.name for f in fields(cls)})
        if unknown:
            known = [f.name for f in fields(cls)] + list(_FLAT_OPTIONS)
            raise UsageError(f"unknown compile option(s) {', '.join(repr(u) for u in unknown)}.",
                             hint=f"Known options: {', '.join(sorted(known))}.")
        flat = {"reuse": memory_reuse, "strategy": memory_strategy, "alignment": memory_alignment,
                "no_copy_concat": memory_no_copy_concat, "order": memory_order}
        memory = options.pop("memory", None) or MemoryConfig()
        memory = replace(memory, **{k: v for k, v in flat.items() if v is not None})
        if isinstance(options.get("input_shapes"), Mapping):
            options["input_shapes"] = format_input_shapes(options["input_shapes"])
        if options.get("input_shapes") is None:
            options.pop("input_shapes", None)
        off = frozenset(options.pop("disabled_passes", ())) | frozenset(disabled)
        config = cls(memory=memory, disabled_passes=off, **options)
        return cls.from_switch_file(switch_file, config) if switch_file is not None else config


_FLAT_OPTIONS = ("disabled", "switch_file", "memory_reuse", "memory_strategy", "memory_alignment",
                 "memory_no_copy_concat", "memory_order")


def pass_names() -> list[str]:
    """Every pass a pipeline can run, once each, in pipeline order (the names a config may switch off)."""
    return [p.name for p in all_passes()]


def fusion_pass_names() -> list[str]:
    """The graph fusion and UB fusion passes, in pipeline order: what "all fusion off" switches off."""
    return [p.name for p in all_passes() if type(p).__module__.startswith("ge_core.passes.fusion")]


def _known_passes(names: Iterable[str], what: str) -> list[str]:
    if isinstance(names, str):
        raise UsageError(f"{what} must be a collection of pass names, not the string '{names}'.")
    listed = [str(n) for n in names]
    known = pass_names()
    unknown = sorted(set(listed) - set(known))
    if unknown:
        raise UsageError(f"{what} names unknown passes {unknown}.", hint=f"Known passes: {', '.join(known)}.")
    return listed


def _canonical_shapes(spec: str | Mapping[str, Sequence[int]] | None) -> str:
    """One spelling per set of shapes (checked, sorted by input name), so equal specs give equal keys."""
    shapes = parse_input_shapes(spec)
    return format_input_shapes(dict(sorted(shapes.items())))


def _known_keys(data: Mapping[str, Any], cls: type, what: str) -> dict[str, Any]:
    known = [f.name for f in fields(cls)]
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise UsageError(f"{what}: unknown key(s) {', '.join(repr(u) for u in unknown)}.",
                         hint=f"Known keys: {', '.join(known)}.")
    return dict(data)


def _is_name_list(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)
