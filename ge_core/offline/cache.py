"""The compile cache: offline models on disk, keyed by everything a compile depends on.

    key = sha256(model content, CompileConfig.key(), the hardware profile's content, ge_core's version,
                 the offline-model format, ge_core's source code)

An entry is one `.gem` file named by its key (ge_core/offline/gem.py), written to a temporary file and
renamed into place, so a reader sees a whole entry or none and two processes compiling the same model at
once both succeed (the second rename wins; both wrote the same thing). An entry is never trusted on its
name alone: reading it checks its content hash and that its manifest names the key asked for. The folder
is bounded (`GE_CACHE_MAX_BYTES`, default 2 GiB): least recently used entries go first (a hit touches its
entry). `GE_CACHE_DIR` overrides the per-user default folder.

An entry is kept only where it pays. Hashing a model's weights and loading the weights its compile made
can cost more than compiling (resnet50: a compile is mostly BatchNorm folding, one pass over the weights).
So a store times loading the entry it just wrote (twice if that is close) and keeps it only when
hashing plus loading cost at most PAYS_BELOW of the compile; either way the costs go to a `.cost` file
keyed by a cheap stand-in for the model (`cost_hint`: no weight is hashed), so the next compile of a model
that does not pay hashes nothing and looks nothing up. A hit that costs more than the compile is averaged
into the costs, so a misjudged entry turns. Costs are CPU seconds of the compiling thread, which other
processes on a busy machine disturb far less than wall time.
`GE_CACHE_KEEP=all` (or `keep_all=True`) keeps every compile unjudged: the test suite's setting, so what
it checks of hits does not hang on timings.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ge_core.config import CompileConfig
from ge_core.errors import ModelError, UsageError, quote
from ge_core.hardware import HardwareProfile, load_profile
from ge_core.ir.graph import Graph
from ge_core.ir.serialize import graph_digest
from ge_core.offline.gem import FORMAT_VERSION, Contents, read_gem, write_gem
from ge_core.version import __version__

DEFAULT_MAX_BYTES = 2 << 30
SUFFIX, COST_SUFFIX = ".gem", ".cost"
PAYS_BELOW = 0.8  # keep an entry when hashing + loading cost at most this share of the compile (margin: one trial)
_EDGE = 1 << 16


def default_cache_dir() -> Path:
    """GE_CACHE_DIR, else $XDG_CACHE_HOME/ge_workbench, else ~/.cache/ge_workbench."""
    if os.environ.get("GE_CACHE_DIR"):
        return Path(os.environ["GE_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ge_workbench"


@functools.cache
def code_fingerprint() -> str:
    """A sha256 of ge_core's own source (every .py and data file of the package): any change to a pass, a
    kernel or a profile makes new keys, so a cache never answers with what older code compiled (the
    version string alone would not change while the code is edited). Read once per process (~10 ms)."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".json") and p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def compile_key(model_digest: str, config: CompileConfig) -> str:
    """The cache key of compiling the model with this digest under `config`."""
    # a profile file may change under the same name: its content counts
    profile = _profile_digest(load_profile(config.hardware) if config.hardware is not None else None)
    parts = [model_digest, config.key(), profile, __version__, str(FORMAT_VERSION), code_fingerprint()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


@functools.lru_cache(maxsize=64)
def _profile_digest(profile: HardwareProfile | None) -> str:
    """Once per profile object (a frozen dataclass; a file read again is a new one): 0.1 ms a key before."""
    text = json.dumps(dataclasses.asdict(profile), sort_keys=True, default=str) if profile is not None else ""
    return hashlib.sha256(text.encode()).hexdigest()


def cost_hint(source: Graph | bytes) -> str:
    """A cheap stand-in for the model, keying its costs: an ONNX file's length and first and last 64 KiB,
    a graph's inputs, constants' names and bytes and nodes in order. Models differing only in weights share it, and
    so a verdict; it is a hint: one shared by mistake costs time, never a wrong model."""
    if isinstance(source, bytes):
        edges = f"{len(source)}:".encode() + source[:_EDGE] + source[-_EDGE:]
        return f"onnx-bytes:{hashlib.sha256(edges).hexdigest()}"
    parts = [f"{t}:{source.desc(t)}" for t in source.inputs]
    parts += [*source.constants, str(sum(value.nbytes for value in source.constants.values()))]
    parts += [f"{node.op_type}:{node.name}" for node in source.nodes]
    text = "\n".join(parts)
    return f"graph:{hashlib.sha256(text.encode()).hexdigest()}"


def content_digest(source: Graph | bytes) -> str:
    """The model's whole content: an ONNX file's sha256, or the graph's (ir.serialize.graph_digest)."""
    return f"onnx-bytes:{hashlib.sha256(source).hexdigest()}" if isinstance(source, bytes) else graph_digest(source)


@dataclass
class Costs:
    """What compiling one model and loading its entry cost, in CPU seconds (its `.cost` file)."""

    compile_seconds: float  # what a hit saves: the passes and the plan, and for ONNX bytes their import
    key_seconds: float  # hashing the model for the entry's key
    load_seconds: dict[str, float] = field(default_factory=dict)  # reading the entry, per CompileCache.mode

    def pays(self, mode: str) -> bool | None:
        """Whether a hit costs at most PAYS_BELOW of the compile (None: no load was timed in this mode)."""
        load = self.load_seconds.get(mode)
        return None if load is None else self.key_seconds + load <= PAYS_BELOW * self.compile_seconds

    def add_hit(self, mode: str, load: float) -> bool:
        """Average a hit's load into the costs when it cost more than the compile (True: they changed); other
        hits leave them be (and the file unwritten)."""
        if self.key_seconds + load <= self.compile_seconds and mode in self.load_seconds:
            return False
        before = self.load_seconds.get(mode)
        self.load_seconds[mode] = load if before is None else (before + load) / 2
        return True

    def why(self, mode: str) -> str:
        hit = self.key_seconds + self.load_seconds.get(mode, 0.0)
        return (f"hashing the model and loading its entry ({mode.replace('_', ' ')}) take {hit:.3f} s of CPU "
                f"against {self.compile_seconds:.3f} s to compile it")

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Costs:
        return cls(float(data["compile_seconds"]), float(data["key_seconds"]),
                   {str(k): float(v) for k, v in data["load_seconds"].items()})


_REMEMBERED: dict[Path, Costs] = {}  # the `.cost` files this process read or wrote


def _remember(path: Path, costs: Costs) -> None:
    if len(_REMEMBERED) >= 4096:  # a long-lived server: forget all, read again
        _REMEMBERED.clear()
    _REMEMBERED[path] = costs


@dataclass
class Lookup:
    """One compile's way through the cache: the entry it hit, or the keys a store needs."""

    costs_key: str  # cost_hint under the config: its `.cost` file
    key: str | None = None  # the entry's; None when the costs said a hit would not pay (nothing looked up)
    key_seconds: float = 0.0
    contents: Contents | None = None  # the hit
    why: str = ""  # why nothing was looked up


@dataclass
class CompileCache:
    folder: Path
    max_bytes: int = DEFAULT_MAX_BYTES
    # A hit rebuilds the graph after every pass only when asked: the web page's pass stepper and
    # `compile --dump-dir` need them; running the model does not, and they are most of a hit's work on
    # small models (bert_encoder_torch: 0.18 of 0.22 s).
    snapshots: bool = True
    keep_all: bool = field(default_factory=lambda: os.environ.get("GE_CACHE_KEEP") == "all")

    def __post_init__(self) -> None:
        self.folder = Path(self.folder)  # a str is fine too

    @classmethod
    def default(cls) -> CompileCache:
        raw = os.environ.get("GE_CACHE_MAX_BYTES", "")
        return cls(default_cache_dir(), int(raw) if raw.isdigit() else DEFAULT_MAX_BYTES)

    @property
    def mode(self) -> str:
        """What a hit loads: with snapshots it costs more, so whether it pays is judged per mode."""
        return "snapshots" if self.snapshots else "no_snapshots"

    def path(self, key: str) -> Path:
        return self.folder / f"{key}{SUFFIX}"

    def lookup(self, source: Graph | bytes, config: CompileConfig) -> Lookup:
        """The entry of compiling `source` under `config` (a hit), else the key to store the compile under;
        when this model's costs say a hit does not pay, its weights are not even hashed. A Graph's entry
        names its constants (store it with known=the graph); an ONNX file's bytes are looked up before they
        are imported, so a hit skips the import too, and its entry holds the imported graph whole."""
        code_fingerprint()  # once per process, whatever the model: not a hit's cost
        start = time.thread_time()
        costs_key = compile_key(cost_hint(source), config)
        costs = None if self.keep_all else self._costs(costs_key)
        if costs is not None and costs.pays(self.mode) is False:
            return Lookup(costs_key, why=costs.why(self.mode))
        key = compile_key(content_digest(source), config)
        found = Lookup(costs_key, key, time.thread_time() - start)
        loading = time.thread_time()
        found.contents = self.get(key, source=source if isinstance(source, Graph) else None)
        if found.contents is not None and costs is not None and costs.add_hit(self.mode, time.thread_time() - loading):
            self._write_costs(costs_key, costs)  # a first hit in this mode, or one slower than judged
        return found

    def store(self, found: Lookup, contents: Contents, known: Graph | None, compile_seconds: float
              ) -> dict[str, Any]:
        """Write the entry `found` missed, time loading it back and keep it only if a hit pays; the report's
        `kept` and `why`. `compile_seconds`: the CPU seconds a hit would save (the passes, and the import
        for bytes); `known`: the graph looked up, whose constants the entry names (None for bytes)."""
        key = found.key or ""
        self.put(key, contents, known)
        if self.keep_all:
            return {"kept": True}
        load = self._trial(key, known, PAYS_BELOW * compile_seconds - found.key_seconds)
        if load is None:
            return {"kept": False, "why": "its entry could not be read back"}
        before = self._costs(found.costs_key)  # another mode's load stays judged
        costs = Costs(compile_seconds, found.key_seconds, {**(before.load_seconds if before else {}), self.mode: load})
        self._write_costs(found.costs_key, costs)
        if costs.pays(self.mode):
            return {"kept": True}
        self.path(key).unlink(missing_ok=True)
        return {"kept": False, "why": costs.why(self.mode)}

    def _trial(self, key: str, known: Graph | None, budget: float) -> float | None:
        """CPU seconds of loading the entry back as a hit would; None when it cannot be read. A load over
        `budget` by less than half is tried once more and the quicker kept: one burst of a shared machine
        does not condemn an entry (a warm second load favours keeping, and a hit that then costs more than
        the compile turns the verdict); a clear loser is not loaded twice."""
        times: list[float] = []
        while not times or (len(times) == 1 and budget < times[0] <= 1.5 * budget):
            start = time.thread_time()
            if self.get(key, source=known) is None:
                return None
            times.append(time.thread_time() - start)
        return min(times)

    def get(self, key: str, source: Graph | None = None) -> Contents | None:
        """The entry for `key`, or None (missing, or not trustworthy: then it is removed). `source`: the
        graph being compiled, as given to `put` (its constants are not stored again)."""
        path = self.path(key)
        if not path.is_file():
            return None
        try:
            contents = read_gem(path, expect_key=key, known=source, snapshots=self.snapshots)
        except ModelError:  # truncated, corrupted, from another version, or not what its name says
            path.unlink(missing_ok=True)
            return None
        os.utime(path)  # least recently used goes first
        return contents

    def put(self, key: str, contents: Contents, source: Graph | None = None) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            write_gem(contents, self.path(key), cache_key=key, snapshots=True, known=source)
        except OSError as exc:
            raise UsageError(f"cannot write the compile cache in {quote(self.folder)} ({exc.strerror}).",
                             hint="Give a writable --cache-dir, or pass --no-cache.") from None
        self.evict()

    def evict(self) -> None:
        """Drop least recently used entries (and cost files) until the folder fits max_bytes."""
        entries = sorted(self._entries(), key=lambda e: e[1])
        total = sum(size for _, _, size in entries)
        for path, _, size in entries:
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size

    def _costs(self, costs_key: str) -> Costs | None:
        """The model's costs: remembered by the process (a file read per compile was 0.1 ms, 4% of a small
        model's), else read from the folder (another process's verdict: a hint, so never stale enough to harm)."""
        path = self.folder / f"{costs_key}{COST_SUFFIX}"
        if path in _REMEMBERED:
            return _REMEMBERED[path]
        try:
            costs = Costs.from_json(json.loads(path.read_bytes()))
            os.utime(path)  # a model compiled often keeps its verdict
        except (OSError, ValueError, KeyError, TypeError, AttributeError):  # none yet, or unreadable: judge again
            return None
        _remember(path, costs)
        return costs

    def _write_costs(self, costs_key: str, costs: Costs) -> None:
        path = self.folder / f"{costs_key}{COST_SUFFIX}"
        _remember(path, costs)
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        try:
            partial.write_text(json.dumps(dataclasses.asdict(costs)), encoding="utf-8")
            os.replace(partial, path)
        except OSError:  # a verdict is an optimisation: without it the next compile judges again
            partial.unlink(missing_ok=True)

    def _entries(self) -> Iterator[tuple[Path, float, int]]:
        for path in [*self.folder.glob(f"*{SUFFIX}"), *self.folder.glob(f"*{COST_SUFFIX}")]:
            try:
                info = path.stat()
            except OSError:  # evicted by another process meanwhile
                continue
            yield path, info.st_mtime, info.st_size
