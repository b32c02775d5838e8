"""The compile cache: offline models on disk, keyed by everything a compile depends on.

    key = sha256(model content, CompileConfig.key(), the hardware profile's content, ge_core's version,
                 the offline-model format, ge_core's source code)

An entry is one `.gem` file named by its key (ge_core/offline/gem.py), written to a temporary file and
renamed into place, so a reader sees a whole entry or none and two processes compiling the same model at
once both succeed (the second rename wins; both wrote the same thing). An entry is never trusted on its
name alone: reading it checks its content hash and that its manifest names the key asked for. The folder
is bounded (`GE_CACHE_MAX_BYTES`, default 2 GiB): least recently used entries go first (a hit touches its
entry). `GE_CACHE_DIR` overrides the per-user default folder.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ge_core.config import CompileConfig
from ge_core.errors import ModelError, UsageError, quote
from ge_core.hardware import load_profile
from ge_core.ir.graph import Graph
from ge_core.offline.gem import FORMAT_VERSION, Contents, read_gem, write_gem
from ge_core.version import __version__

DEFAULT_MAX_BYTES = 2 << 30
SUFFIX = ".gem"


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
    """The cache key of compiling the model with this sha256 under `config`."""
    profile = ""
    if config.hardware is not None:  # a profile file may change under the same name: its content counts
        profile = json.dumps(dataclasses.asdict(load_profile(config.hardware)), sort_keys=True, default=str)
    parts = [model_digest, config.key(), hashlib.sha256(profile.encode()).hexdigest(), __version__,
             str(FORMAT_VERSION), code_fingerprint()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


@dataclass
class CompileCache:
    folder: Path
    max_bytes: int = DEFAULT_MAX_BYTES
    # A hit rebuilds the graph after every pass only when asked: the web page's pass stepper and
    # `compile --dump-dir` need them; running the model does not, and they are most of a hit's work on
    # small models (bert_encoder_torch: 0.18 of 0.22 s).
    snapshots: bool = True

    def __post_init__(self) -> None:
        self.folder = Path(self.folder)  # a str is fine too

    @classmethod
    def default(cls) -> CompileCache:
        raw = os.environ.get("GE_CACHE_MAX_BYTES", "")
        return cls(default_cache_dir(), int(raw) if raw.isdigit() else DEFAULT_MAX_BYTES)

    def path(self, key: str) -> Path:
        return self.folder / f"{key}{SUFFIX}"

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
        """Drop least recently used entries until the folder fits max_bytes."""
        entries = sorted(self._entries(), key=lambda e: e[1])
        total = sum(size for _, _, size in entries)
        for path, _, size in entries:
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size

    def _entries(self) -> Iterator[tuple[Path, float, int]]:
        for path in self.folder.glob(f"*{SUFFIX}"):
            try:
                info = path.stat()
            except OSError:  # evicted by another process meanwhile
                continue
            yield path, info.st_mtime, info.st_size
