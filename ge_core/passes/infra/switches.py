"""GE-style switch files: passes switched on or off by name.

A switch file turns passes on or off by name, one per line (`ConstantFoldingPass:off`, `#` comments), or
as JSON: a flat {"PassName": "off"} map, or GE's fusion_switch_file layout
{"Switch": {"GraphFusion": {"ALL": "on", "SomePass": "off"}, "UBFusion": {...}}}.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ge_core.errors import UsageError


def read_switch_file(path: str | os.PathLike[str]) -> dict[str, bool]:
    """{pass name: enabled} from a switch file (text lines or JSON)."""
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"switch file '{path}' not found.")
    text = file.read_text(encoding="utf-8", errors="replace")
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"switch file '{path}' is not valid JSON: {exc}.") from None
        return _from_json(data, str(path))
    return _from_lines(text, str(path))


def apply_switches(switches: Mapping[str, bool], known: Iterable[str]) -> frozenset[str]:
    """The set of disabled passes; unknown names are refused, listing the known ones."""
    known_names = sorted(set(known))
    unknown = sorted(n for n in switches if n not in known_names and n != "ALL")
    if unknown:
        raise UsageError(f"switch file names unknown passes {unknown}.",
                         hint=f"Known passes: {', '.join(known_names)}.")
    if switches.get("ALL") is False:
        return frozenset(n for n in known_names if switches.get(n) is not True)
    return frozenset(n for n, on in switches.items() if not on and n != "ALL")


def _from_lines(text: str, origin: str) -> dict[str, bool]:
    switches: dict[str, bool] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, value = line.partition(":")
        switches[name.strip()] = _on_off(value.strip() if sep else "", f"{origin}:{number}")
    return switches


def _from_json(data: Any, origin: str) -> dict[str, bool]:
    if isinstance(data, dict) and "Switch" in data and isinstance(data["Switch"], dict):
        merged: dict[str, bool] = {}
        for group in data["Switch"].values():
            if isinstance(group, dict):
                merged.update(_from_json(group, origin))
        return merged
    if not isinstance(data, dict):
        raise UsageError(f"switch file '{origin}' must hold a JSON object of pass name -> on/off.")
    return {str(k): _on_off(str(v), origin) for k, v in data.items()}


def _on_off(value: str, where: str) -> bool:
    lowered = value.lower()
    if lowered in ("on", "true", "1"):
        return True
    if lowered in ("off", "false", "0"):
        return False
    raise UsageError(f"{where}: switch value '{value}' must be on or off (e.g. 'ConstantFoldingPass:off').")
