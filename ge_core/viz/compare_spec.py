"""What a comparison is, as data: a model reference and named CompileConfigs, saved as JSON and carried in
the page's address (`to_address`: compact JSON, URL-safe base64).

    {"model": "sample:densenet121", "seed": 0,
     "configs": [{"name": "O1", "config": {...CompileConfig.to_json()...}}, {"name": "O3", "config": {...}}]}

Unknown keys are refused at every level, listing the known ones (CompileConfig.from_json's rule).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ge_core.config import CompileConfig
from ge_core.errors import UsageError

SPEC_KEYS = ("model", "seed", "configs")
ENTRY_KEYS = ("name", "config")


@dataclass(frozen=True)
class ComparisonSpec:
    """model: "sample:NAME", a path to an .onnx file, or "upload:<sha256>" (its bytes given when run)."""

    model: str
    configs: tuple[tuple[str, CompileConfig], ...]
    seed: int = 0

    def __post_init__(self) -> None:
        names = [name for name, _ in self.configs]
        if not self.configs:
            raise UsageError("a comparison needs at least one configuration.")
        if any(not isinstance(n, str) or not n.strip() for n in names) or len(set(names)) != len(names):
            raise UsageError(f"comparison configurations need distinct, non-empty names, got {names}.")
        if not all(isinstance(c, CompileConfig) for _, c in self.configs):
            raise UsageError("each comparison configuration must be a CompileConfig.")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise UsageError(f"comparison seed must be an integer, got {self.seed!r}.")

    @classmethod
    def of(cls, model: str, configs: Sequence[tuple[str, CompileConfig]], seed: int = 0) -> ComparisonSpec:
        return cls(model, tuple((name, config) for name, config in configs), seed)

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "seed": self.seed,
                "configs": [{"name": name, "config": config.to_json()} for name, config in self.configs]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str) -> ComparisonSpec:
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except json.JSONDecodeError as exc:
                raise UsageError(f"comparison is not valid JSON: {exc}.") from None
        values = _object(data, SPEC_KEYS, "comparison")
        if not isinstance(values.get("model"), str) or not values["model"]:
            raise UsageError("comparison: 'model' must name the model (sample:NAME, a path or upload:<sha256>).")
        entries = values.get("configs")
        if not isinstance(entries, list):
            raise UsageError("comparison: 'configs' must be a list of {name, config} objects.")
        configs: list[tuple[str, CompileConfig]] = []
        for entry in entries:
            item = _object(entry, ENTRY_KEYS, "comparison config")
            configs.append((item.get("name", ""), CompileConfig.from_json(item.get("config", {}))))
        return cls(values["model"], tuple(configs), values.get("seed", 0))

    def to_address(self) -> str:
        """The spec as one URL-safe token (compact JSON, base64 without padding)."""
        text = json.dumps(self.to_json(), separators=(",", ":"), sort_keys=True)
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    @classmethod
    def from_address(cls, token: str) -> ComparisonSpec:
        try:
            text = base64.b64decode(token + "=" * (-len(token) % 4), altchars=b"-_", validate=True).decode()
        except (binascii.Error, UnicodeDecodeError, ValueError):
            raise UsageError("the comparison in the address is not readable.",
                             hint="Open the Compare page again and choose the configurations.") from None
        return cls.from_json(text)


def _object(data: Any, known: Sequence[str], what: str) -> dict[str, Any]:
    if not isinstance(data, Mapping):
        raise UsageError(f"{what} must be a JSON object.", hint=f"Known keys: {', '.join(known)}.")
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise UsageError(f"{what}: unknown key(s) {', '.join(repr(u) for u in unknown)}.",
                         hint=f"Known keys: {', '.join(known)}.")
    return dict(data)
