"""docs/architecture.md is written from the layering test's table: its layer table must equal LAYERS, and
it must describe every package and root module of ge_core (and the UI beside it), so the page cannot drift."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_layering import LAYERS, module_name, python_files, unit_of

ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
OWNERS_HEADING = "## What each unit owns"


def section(heading: str) -> str:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert heading in text, f"docs/architecture.md lost its section {heading!r}"
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


def layer_table() -> tuple[tuple[str, ...], ...]:
    """The first column of the Layers section's table, a row per layer: its units, comma-separated."""
    rows = [line for line in section("## Layers").splitlines() if line.startswith("|")]
    cells = [row.strip("|").split("|")[0] for row in rows[2:]]  # past the header and the |---| line
    return tuple(tuple(unit.strip().strip("`") for unit in cell.split(",")) for cell in cells)


def test_the_layer_table_is_the_layering_tests() -> None:
    assert layer_table() == LAYERS, "docs/architecture.md's Layers table must list tests/test_layering.py's LAYERS"


def test_every_unit_of_ge_core_is_described() -> None:
    owners = section(OWNERS_HEADING)
    described = set(re.findall(r"^- \*\*`([^`]+)`\*\*", owners, re.MULTILINE))
    units = {unit_of(module_name(path)) for path in python_files("ge_core")}
    assert units - described == set(), "describe each new package in docs/architecture.md"
    assert described - units - {"workbench_ui/", "app_pages/", "app.py"} == set(), "a package described is gone"
    assert {"workbench_ui/", "app_pages/", "app.py"} <= described
