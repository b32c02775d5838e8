"""Loading hardware profiles: a built-in name (ascend310, ascend310p, ascend910, ascend910b) or a JSON file of one's
own.

A profile file is plain JSON (ge_core/hardware/profiles/ascend910.json is a complete example). A user
profile may start from a built-in one with `"extends": "ascend910"` and give only what differs; nested
sections merge key by key. Every field is checked before anything uses it, and a bad file is refused
naming the field, what it must be and what it was: "hardware profile 'x.json': field 'buffers_bytes.l0a'
must be a positive integer, got -1".
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ge_core.errors import UsageError
from ge_core.hardware.profile import (
    ATC_DEFAULT_PRECISION,
    PRECISION_MODES,
    Alignment,
    Bandwidths,
    Buffers,
    Efficiency,
    HardwareProfile,
    Overheads,
)

PROFILE_DIR = Path(__file__).resolve().parent / "profiles"
DEFAULT_PROFILE = "ascend910"  # the target wherever one is needed and none is named
VECTOR_CLASSES = ("elementwise", "transcendental", "reduce", "data_move")
_HINT = f"Fix the file; {PROFILE_DIR / 'ascend910.json'} is a complete example."


class ProfileError(UsageError):
    """A hardware profile that cannot be used: unknown name, unreadable file, or a bad field (named)."""


def profile_names() -> list[str]:
    """The built-in profiles, by name."""
    return list(_builtin_names())


@functools.cache
def _builtin_names() -> tuple[str, ...]:  # the package's own files: read the folder once
    return tuple(sorted(p.stem for p in PROFILE_DIR.glob("*.json")))


def load_profile(name_or_path: str | Path | HardwareProfile) -> HardwareProfile:
    """A profile by built-in name (case-insensitive) or by path to a .json file."""
    if isinstance(name_or_path, HardwareProfile):
        return name_or_path
    text = str(name_or_path).strip()
    if text.lower() in _builtin_names():
        return _builtin(text.lower())
    path = Path(text)
    if path.suffix.lower() in (".yaml", ".yml"):
        raise ProfileError(f"hardware profile '{text}': YAML profiles need pyyaml, which GE Workbench does not "
                           "depend on.", hint="Write the profile as JSON (same fields).")
    if path.suffix.lower() != ".json" and not path.is_file():
        raise ProfileError(f"unknown hardware profile '{text}'.",
                           hint=f"Known profiles: {', '.join(profile_names())}; or give a path to a .json profile.")
    return _from_file(path)


def profile_data(profile: HardwareProfile) -> dict[str, Any]:
    """The JSON data `profile` was built from (its file, with what it extends merged in)."""
    path = Path(profile.path)
    if not path.is_file():
        raise ProfileError(f"hardware profile '{profile.name}' has no file to read its fields from.",
                           hint="Load profiles with load_profile (a built-in name or a .json path).")
    return _read(path, 0)


@functools.cache
def _builtin(name: str) -> HardwareProfile:
    return _from_file(PROFILE_DIR / f"{name}.json")


def _from_file(path: Path, depth: int = 0) -> HardwareProfile:
    return build_profile(_read(path, depth), str(path))


def _read(path: Path, depth: int) -> dict[str, Any]:
    """The file's data, merged over the profile it extends."""
    label = path.name
    if not path.is_file():
        raise ProfileError(f"hardware profile '{path}' not found.",
                           hint=f"Known profiles: {', '.join(profile_names())}.")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProfileError(f"hardware profile '{label}' is not readable JSON ({exc}).", hint=_HINT) from None
    if not isinstance(data, dict):
        raise ProfileError(f"hardware profile '{label}' must be a JSON object, got {type(data).__name__}.", hint=_HINT)
    base = data.pop("extends", None)
    if base is None:
        return data
    if not isinstance(base, str) or depth > 4:
        raise ProfileError(f"hardware profile '{label}': field 'extends' must name a profile (no loops), "
                           f"got {base!r}.", hint=f"Known profiles: {', '.join(profile_names())}.")
    base_path = PROFILE_DIR / f"{base.lower()}.json" if base.lower() in profile_names() else path.parent / base
    return _merge(_read(base_path, depth + 1), data)


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


# ---- validation --------------------------------------------------------------------------------------

Check = Callable[[Any], str | None]  # None when fine, else what the value must be


def _pos_int(v: Any) -> str | None:
    return None if isinstance(v, int) and not isinstance(v, bool) and v > 0 else "must be a positive integer"


def _pos_num(v: Any) -> str | None:
    ok = isinstance(v, int | float) and not isinstance(v, bool) and v > 0 and v == v and v != float("inf")
    return None if ok else "must be a positive number"


def _ratio(v: Any) -> str | None:
    return _pos_num(v) or (None if v <= 1 else "must be a number in (0, 1]")


def _nonneg_int(v: Any) -> str | None:
    ok = isinstance(v, int) and not isinstance(v, bool) and v >= 0
    return None if ok else "must be a non-negative integer"


def _nonneg_num(v: Any) -> str | None:
    ok = isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < float("inf")
    return None if ok else "must be a non-negative number"


def _text(v: Any) -> str | None:
    return None if isinstance(v, str) and v.strip() else "must be a non-empty string"


def _flag(v: Any) -> str | None:
    return None if isinstance(v, bool) else "must be true or false"


def _power_of_two(v: Any) -> str | None:
    return _pos_int(v) or (None if v & (v - 1) == 0 else "must be a power of two")


def _object(v: Any) -> str | None:
    return None if isinstance(v, dict) else "must be an object"


def _precision_mode(v: Any) -> str | None:
    return None if v in PRECISION_MODES else "must be one of " + ", ".join(PRECISION_MODES)


_SECTIONS: dict[str, dict[str, Check]] = {
    "cores": {"ai_cores": _pos_int, "vector_cores": _pos_int, "separated_vector_cores": _flag,
              "clock_ghz": _pos_num},
    "cube": {"m": _pos_int, "k": _pos_int, "n": _pos_int, "fp32_ratio": _ratio},
    "vector": {"bytes_per_cycle": _power_of_two, "class_cycles": lambda v: None},  # checked below
    "buffers_bytes": {k: _pos_int for k in ("l0a", "l0b", "l0c", "l1", "ub", "l2")},
    "bandwidth_bytes_per_cycle": {k: _pos_num for k in ("ddr_read", "ddr_write", "l2_read", "l2_write", "l1_to_l0a",
                                                        "l1_to_l0b", "l1_to_ub", "ub_to_l1", "l0c_to_ub")},
    "alignment_bytes": {k: _power_of_two for k in ("ub", "l1", "l0a", "l0b", "l0c")},
    "overheads": {"kernel_launch_us": _nonneg_num, "scalar_cycles_per_kernel": _nonneg_int,
                  "scalar_cycles_per_tile": _nonneg_int},
}
_TOP: dict[str, Check] = {"name": _text, "title": _text, "memory_bandwidth_gbps": _pos_num}
_OPTIONAL = {"description", "sources", "default_precision_mode", "efficiency", "calibration", "fidelity"}
_OPTIONAL_CHECKS: dict[str, Check] = {"default_precision_mode": _precision_mode, "calibration": _object,
                                      "fidelity": _object}
_EFFICIENCY: dict[str, Check] = {"cube": _pos_num, "vector": _pos_num, "memory": _pos_num}


def build_profile(data: Mapping[str, Any], label: str = "<dict>") -> HardwareProfile:
    """A checked HardwareProfile from the JSON layout (see ascend910.json); ProfileError names a bad field."""
    name = Path(label).name
    _raise_first(_field_problems(data, name))
    profile = _assemble(data, label)
    _raise_first(_fit_problems(profile, name))
    return profile


def profile_problems(data: Mapping[str, Any], label: str = "<dict>") -> list[str]:
    """Every problem of a profile's JSON at once (the UI lists them all), [] when build_profile takes it.
    An "extends" naming a built-in profile is merged first, as a profile file's is."""
    name = Path(label).name
    if not isinstance(data, Mapping):
        return [f"hardware profile '{name}' must be a JSON object, got {type(data).__name__}."]
    base = data.get("extends")
    if base is not None:
        if not isinstance(base, str) or base.lower() not in profile_names():
            return [f"hardware profile '{name}': field 'extends' must name a built-in profile "
                    f"({', '.join(profile_names())}), got {base!r}."]
        data = _merge(_read(PROFILE_DIR / f"{base.lower()}.json", 1), {k: v for k, v in data.items() if k != "extends"})
    problems = _field_problems(data, name)
    if not problems:
        problems = _fit_problems(_assemble(data, label), name)
    return [message if hint == _HINT else f"{message} {hint}" for message, hint in problems]


def _assemble(data: Mapping[str, Any], label: str) -> HardwareProfile:
    c, v, b, w, a, o = (data[s] for s in ("cores", "vector", "buffers_bytes", "bandwidth_bytes_per_cycle",
                                          "alignment_bytes", "overheads"))
    return HardwareProfile(
        name=data["name"], title=data["title"], ai_cores=c["ai_cores"], vector_cores=c["vector_cores"],
        clock_ghz=float(c["clock_ghz"]), cube_m=data["cube"]["m"], cube_k=data["cube"]["k"],
        cube_n=data["cube"]["n"], cube_fp32_ratio=float(data["cube"]["fp32_ratio"]),
        vector_bytes_per_cycle=v["bytes_per_cycle"], vector_class_cycles=dict(v["class_cycles"]),
        buffers=Buffers(**b), bandwidth=Bandwidths(**w), memory_bandwidth_gbps=float(data["memory_bandwidth_gbps"]),
        alignment=Alignment(**a), overheads=Overheads(float(o["kernel_launch_us"]), o["scalar_cycles_per_kernel"],
                                                      o["scalar_cycles_per_tile"]),
        separated_vector_cores=c["separated_vector_cores"], sources=dict(data.get("sources", {})),
        default_precision_mode=str(data.get("default_precision_mode", ATC_DEFAULT_PRECISION)),
        efficiency=Efficiency(**{k: float(v) for k, v in data.get("efficiency", {}).items()}),
        calibration=dict(data.get("calibration", {})), fidelity=dict(data.get("fidelity", {})),
        description=str(data.get("description", "")), path=label)


Problem = tuple[str, str]  # (message, hint)


def _raise_first(problems: list[Problem]) -> None:
    if problems:
        raise ProfileError(problems[0][0], hint=problems[0][1])


def _field_problems(data: Mapping[str, Any], label: str) -> list[Problem]:
    """Every bad field, in file order: unknown, missing, or not what it must be."""
    problems = _unknown(data, set(_TOP) | set(_SECTIONS) | _OPTIONAL, "", label)
    problems += [p for key, check in _TOP.items() for p in _check(data, key, key, check, label)]
    problems += [p for key, check in _OPTIONAL_CHECKS.items() if key in data
                 for p in _check(data, key, key, check, label)]
    if "efficiency" in data:  # optional, and so is each of its fields
        efficiency = data["efficiency"]
        if not isinstance(efficiency, dict):
            problems.append(_bad(label, "efficiency", "must be an object with fields cube, vector, memory", efficiency))
        else:
            problems += _unknown(efficiency, set(_EFFICIENCY), "efficiency.", label)
            problems += [p for key, check in _EFFICIENCY.items() if key in efficiency
                         for p in _check(efficiency, key, f"efficiency.{key}", check, label)]
    for section, fields in _SECTIONS.items():
        if not isinstance(data.get(section), dict):
            problems.append(_bad(label, section, "must be an object with fields " + ", ".join(fields),
                                 data.get(section, "nothing")))
            continue
        problems += _unknown(data[section], set(fields), section + ".", label)
        problems += [p for key, check in fields.items()
                     for p in _check(data[section], key, f"{section}.{key}", check, label)]
    classes = data["vector"].get("class_cycles") if isinstance(data.get("vector"), dict) else None
    if isinstance(data.get("vector"), dict) and "class_cycles" in data["vector"]:
        if not isinstance(classes, dict):
            problems.append(_bad(label, "vector.class_cycles", "must be an object", classes))
        else:
            problems += _unknown(classes, set(VECTOR_CLASSES), "vector.class_cycles.", label)
            problems += [p for key in VECTOR_CLASSES
                         for p in _check(classes, key, f"vector.class_cycles.{key}", _pos_int, label)]
    sources = data.get("sources", {})
    if not isinstance(sources, dict) or not all(isinstance(s, str) for s in sources.values()):
        problems.append(_bad(label, "sources", "must be an object of field -> source text", sources))
    return problems


def _check(section: Mapping[str, Any], key: str, path: str, check: Check, label: str) -> list[Problem]:
    if key not in section:
        return [(f"hardware profile '{label}': field '{path}' is missing.", _HINT)]
    problem = check(section[key])
    return [_bad(label, path, problem, section[key])] if problem else []


def _unknown(section: Mapping[str, Any], known: set[str], prefix: str, label: str) -> list[Problem]:
    hint = f"Known fields here: {', '.join(prefix + k for k in sorted(known))}."
    return [(f"hardware profile '{label}': unknown field '{prefix}{key}'.", hint)
            for key in sorted(set(section) - known)]


def _bad(label: str, path: str, problem: str, value: Any) -> Problem:
    return f"hardware profile '{label}': field '{path}' {problem}, got {value!r}.", _HINT


def _fit_problems(p: HardwareProfile, label: str) -> list[Problem]:
    """Each buffer must hold at least one double-buffered fractal block, or no tiling exists."""
    block = p.cube_m * p.cube_k * 2 * 2  # one fp16 fractal, double-buffered
    needs = {"buffers_bytes.l0a": (p.buffers.l0a, p.cube_m * p.cube_k * 2 * 2),
             "buffers_bytes.l0b": (p.buffers.l0b, p.cube_k * p.cube_n * 2 * 2),
             "buffers_bytes.l0c": (p.buffers.l0c, p.cube_m * p.cube_n * 4 * 2),
             "buffers_bytes.l1": (p.buffers.l1, 2 * block),
             "buffers_bytes.ub": (p.buffers.ub, 4 * p.vector_bytes_per_cycle)}
    return [_bad(label, path, f"must hold at least one double-buffered block ({need} bytes)", have)
            for path, (have, need) in needs.items() if have < need]
