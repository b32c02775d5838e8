"""GE's error codes (E40021, EZ9999, ...) and Status numbers (ret:4294967295, ErrorNo: 1343266819), explained.

Three data files, loaded once (stdlib json):

- data/ge_error_codes.json: GE's own table (code, message template, possible cause, solution), verbatim,
  each row with its source (Ascend/metadef's error_manager/error_code.json, Apache-2.0; scripts/ge_tables.py
  rebuilds it);
- data/ge_status_codes.json: GE's Status numbers from its headers (same repository);
- data/ge_error_plain.json: the workbench's own plain words and advice, kept apart from GE's text.

A code GE's table lacks is still explained from its shape: the level letter, the module letter (what GE's
table says that module is) and whether its number is an inner one (9000-9999).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
LEVELS = {"E": "error", "W": "warning", "I": "information"}
WORKBENCH_WORDS = "GE Workbench's paraphrase (data/ge_error_plain.json), not GE's text"


@dataclass(frozen=True)
class ErrorCode:
    """One row of GE's table, GE's words throughout."""

    code: str
    module: str  # GE's errClass: "GE Errors", "TEFusion Errors", ...
    title: str
    message: str  # the template, %s for each argument
    cause: str
    solution: str
    source: str


@dataclass(frozen=True)
class CodeExplanation:
    """What a code means: GE's row when GE's table has it, and the workbench's plain words."""

    code: str
    level: str  # error / warning / information
    module: str
    inner: bool  # numbers 9000-9999 are inner errors
    known: bool  # GE's table has the code
    title: str
    message: str  # GE's template, "" when unknown
    ge_cause: str
    ge_solution: str
    plain: str  # the workbench's words: what it means
    advice: str  # the workbench's words: what to do
    source: str  # where GE's part comes from
    plain_basis: str  # where the plain words come from

    @property
    def what_to_do(self) -> str:
        return self.advice or self.ge_solution or "Read the messages after it in the chain: they name the cause."


@dataclass(frozen=True)
class StatusExplanation:
    """A GE Status number as GE's headers name it. `value` is the unsigned 32-bit word GE logs."""

    value: int
    name: str
    desc: str
    module: str
    source: str

    @property
    def signed(self) -> int:
        return self.value - (1 << 32) if self.value >= 1 << 31 else self.value

    @property
    def hex(self) -> str:
        return f"0x{self.value:08X}"

    def __str__(self) -> str:
        name = f"{self.name}: {self.desc}" if self.name else self.desc
        return f"{self.value} ({self.signed}, {self.hex}) = {name}"


def _load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


@functools.cache
def error_codes() -> dict[str, ErrorCode]:
    """GE's table, by code."""
    rows = _load("ge_error_codes.json")["codes"]
    return {r["code"]: ErrorCode(r["code"], r["module"], r["title"], r["message"], r["cause"], r["solution"],
                                 r["source"]) for r in rows}


@functools.cache
def _plain() -> dict[str, Any]:
    loaded: dict[str, Any] = _load("ge_error_plain.json")
    return loaded


@functools.cache
def _statuses() -> dict[int, dict[str, Any]]:
    return {int(r["value"]): r for r in _load("ge_status_codes.json")["statuses"]}


def is_code(text: str) -> bool:
    """`text` has a GE error code's shape: E/W/I, a module character, four digits."""
    return (len(text) == 6 and text[0] in LEVELS and (text[1].isdigit() or "A" <= text[1] <= "Z")
            and text[2:].isdigit())


@functools.cache
def explain_code(code: str) -> CodeExplanation:
    """GE's row for `code` and the workbench's words; a code GE's table lacks is explained from its shape."""
    code = code.strip().upper()
    row = error_codes().get(code)
    words = _plain()["codes"].get(code, {})
    family = _family(code)
    inner = code[2:].isdigit() and 9000 <= int(code[2:]) <= 9999
    plain = words.get("plain") or _shape_words(code, family, inner, row)
    basis = WORKBENCH_WORDS if words or family else ""
    if row is not None:
        return CodeExplanation(code, LEVELS.get(code[:1], "error"), row.module or family.get("module", ""), inner,
                               True, row.title, row.message, row.cause, row.solution, plain, words.get("advice", ""),
                               row.source, basis)
    return CodeExplanation(code, LEVELS.get(code[:1], "error"), family.get("module", ""), inner, False, "", "", "",
                           "", plain, words.get("advice", ""), _plain()["code_rule"]["source"], basis)


def _family(code: str) -> dict[str, str]:
    """The module character's family: the workbench's words and the modules GE's table files under it."""
    key = code[:2] if code[:1] == "E" and not code[1].isdigit() else "E" + code[1]
    words = _plain()["families"].get(key)
    modules = sorted({c.module for c in error_codes().values() if c.code[1] == code[1] and c.module})
    if words is None and not modules:
        return {}
    return {"plain": (words or {}).get("plain", ""), "module": ", ".join(modules[:3])}


def _shape_words(code: str, family: dict[str, str], inner: bool, row: ErrorCode | None) -> str:
    parts = []
    if family.get("plain"):
        parts.append(f"Module: {family['plain']}")
    if inner:
        parts.append("An inner error of that module: the code says only where; the messages after it say what.")
    elif row is not None and row.title:
        parts.append(f"GE's title: {row.title.replace('_', ' ')}.")
    return " ".join(parts) or f"{code} is not in GE's table and its module character is unknown."


def explain_status(value: int | str) -> StatusExplanation | None:
    """A `ret:` / `ErrorNo:` value as GE names it (4294967295, -1 and 0xFFFFFFFF are all FAILED); None for a
    number that is not a GE Status (a runtime or ACL code, say)."""
    try:
        number = int(str(value).strip(), 0)
    except ValueError:
        return None
    number &= 0xFFFFFFFF
    row = _statuses().get(number)
    if row is None:
        return None
    return StatusExplanation(number, row["name"], row["desc"], row["module"], row["source"])
