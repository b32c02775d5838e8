"""What a sweep runs: the models, the named configurations and the hardware profiles, crossed into Tasks.

    models    "sample:NAME", a path to an .onnx file, or a folder of .onnx files
    configs   CompileConfigs, (name, config) pairs, {name: config}, opt levels ("O1,O3") or a C.json file
              holding a list of CompileConfig JSON objects, each with an optional "name"
    hardware  profile names or .json paths; none: each config's own target (no simulation without one)

Everything is checked here, on the driver, before a single task is sent: an unknown sample, a missing file,
a bad config or hardware name is a UsageError naming it, not a column of failed rows.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import product
from pathlib import Path
from typing import Any

from ge_core.config import CompileConfig
from ge_core.errors import GEError, UsageError, quote
from ge_core.hardware import load_profile
from ge_core.samples import get_sample

SAMPLE_PREFIX = "sample:"
ModelSpec = str | os.PathLike[str]
ConfigSpec = CompileConfig | tuple[str, CompileConfig] | str


@dataclass(frozen=True)
class ModelRef:
    """One model of a sweep: `name` as rows show it (what the user gave), `source` what a worker loads
    ("sample:NAME" or an absolute path), `digest` the sha256 of its file (a sample's: of the file it is
    built from, with its name), `input_shapes` a sample's own shapes for its symbolic dims."""

    name: str
    source: str
    digest: str
    input_shapes: str = ""


@dataclass(frozen=True)
class NamedConfig:
    name: str
    config: CompileConfig


@dataclass(frozen=True)
class Task:
    """One (model, config, hardware) cell; `hardware` "" means no target (compiled, run, not simulated)."""

    model: ModelRef
    config: NamedConfig
    hardware: str
    seed: int = 0

    @property
    def key(self) -> str:
        """What resume matches on: the model's content, the config's key() and the hardware."""
        return f"{self.model.digest[:16]}:{self.config.config.key()}:{self.hardware or '-'}"

    def compile_config(self) -> CompileConfig:
        """The config as compiled: this task's hardware target, and a sample's own input shapes when the
        config names none (the row keeps the given config's key and name)."""
        config = self.config.config
        shapes = config.input_shapes or self.model.input_shapes
        return replace(config, hardware=self.hardware or None, input_shapes=shapes)


def plan_tasks(models: Iterable[ModelSpec] | ModelSpec, configs: Any, hardware: Iterable[str] | str = (),
               seed: int = 0) -> list[Task]:
    """Every (model, config, hardware) task, models outermost, in the order given; a model given twice (or two
    files of the same bytes: the key is the content) runs once."""
    refs = model_refs([models] if isinstance(models, str | os.PathLike) else models)
    named = named_configs(configs)
    targets = hardware_names(hardware)
    axis: list[str | None] = list(targets) or [None]  # None: each config's own target
    tasks = [Task(m, c, h if h is not None else c.config.hardware or "", seed)
             for m, c, h in product(refs, named, axis)]
    return list({t.key: t for t in tasks}.values())  # a model given twice runs once


def model_refs(models: Iterable[ModelSpec]) -> list[ModelRef]:
    refs: dict[str, ModelRef] = {}
    for spec in models:
        for ref in _expand(str(spec)):
            refs.setdefault(ref.source, ref)
    if not refs:
        raise UsageError("a sweep needs at least one model.", hint="Give sample:NAME, an .onnx file or a folder.")
    return list(refs.values())


def _expand(spec: str) -> list[ModelRef]:
    if spec.startswith(SAMPLE_PREFIX):
        sample = get_sample(spec.removeprefix(SAMPLE_PREFIX))
        identity = f"{sample.name}:{sample.kind}:{sample.nodes}:".encode()
        digest = _file_digest(sample.path, hashlib.sha256(identity)) if sample.path.is_file() else \
            hashlib.sha256(identity).hexdigest()  # a missing sample file is the task's refusal, not the plan's
        return [ModelRef(spec, f"{SAMPLE_PREFIX}{sample.name}", digest, sample.input_shapes)]
    path = Path(spec)
    if path.is_dir():
        files = sorted(p for p in path.glob("*.onnx") if p.is_file())
        if not files:
            raise UsageError(f"folder {quote(spec)} holds no .onnx files.", hint="Give a folder of .onnx models.")
        return [ModelRef(str(p), str(p.resolve()), _file_digest(p)) for p in files]
    if not path.is_file():
        raise UsageError(f"model {quote(spec)} not found.",
                         hint="Give an .onnx file, a folder of them, or sample:NAME (python -m ge_core inspect "
                              "sample:NAME lists the samples when NAME is unknown).")
    return [ModelRef(spec, str(path.resolve()), _file_digest(path))]


def _file_digest(path: Path, digest: Any = None) -> str:
    digest = digest if digest is not None else hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return str(digest.hexdigest())


def named_configs(configs: Any) -> list[NamedConfig]:
    """Configs in any form the module docstring lists, each with a distinct name."""
    if isinstance(configs, str | os.PathLike):
        named = read_configs(str(configs))
    elif isinstance(configs, Mapping):
        named = [_named(item, str(name)) for name, item in configs.items()]
    elif isinstance(configs, CompileConfig | NamedConfig):
        named = [_named(configs)]
    else:
        named = [_named(item) for item in configs]
    if not named:
        raise UsageError("a sweep needs at least one configuration.", hint="Give opt levels such as O1,O3.")
    names = [c.name for c in named]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UsageError(f"configuration names must be distinct; {', '.join(map(quote, duplicates))} is used twice.",
                         hint="Give each config in the JSON file its own \"name\".")
    return named


def _named(item: Any, name: str | None = None) -> NamedConfig:
    if isinstance(item, NamedConfig):
        return item
    if isinstance(item, tuple) and len(item) == 2:
        name, item = str(item[0]), item[1]
    if isinstance(item, str):
        item = CompileConfig(opt_level=item)
    if not isinstance(item, CompileConfig):
        raise UsageError(f"a sweep configuration must be a CompileConfig, not {type(item).__name__}.")
    return NamedConfig(name or default_name(item), item)


def default_name(config: CompileConfig) -> str:
    """The opt level for a config that is only an opt level ("O3"), else the level and a key prefix."""
    level = str(config.opt_level)
    return level if config == CompileConfig(opt_level=level) else f"{level}-{config.key()[:6]}"


def read_configs(spec: str) -> list[NamedConfig]:
    """`--configs`: a .json file (a list of CompileConfig objects with optional "name"), or opt levels."""
    if spec.endswith(".json") or Path(spec).is_file():
        return _configs_file(Path(spec))
    return [_named(level.strip()) for level in spec.split(",") if level.strip()]


def _configs_file(path: Path) -> list[NamedConfig]:
    if not path.is_file():
        raise UsageError(f"configs file {quote(path)} not found.")
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        raise UsageError(f"configs file {quote(path)} is not valid JSON: {exc}.") from None
    entries: Sequence[Any] = [data] if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise UsageError(f"configs file {quote(path)} must hold a list of CompileConfig JSON objects.")
    named = []
    for index, entry in enumerate(entries, 1):
        try:
            if not isinstance(entry, dict):
                raise UsageError("it is not a JSON object.")
            config = CompileConfig.from_json(entry, ignore=("name",))
        except GEError as err:
            raise UsageError(f"configs file {quote(path)}, entry {index}: {err}") from None
        named.append(NamedConfig(str(entry.get("name") or default_name(config)), config))
    return named


def hardware_names(hardware: Iterable[str] | str) -> list[str]:
    """Profile names or .json paths, checked now (an unknown one is refused, listing the known)."""
    names = [h.strip() for h in hardware.split(",")] if isinstance(hardware, str) else [str(h) for h in hardware]
    names = [n for n in names if n]
    for name in names:
        load_profile(name)
    return list(dict.fromkeys(names))
