"""ge_core.viz.pass_table: the Passes page's tables, one row per pass record / fusion candidate."""

from __future__ import annotations

import ge_core
from ge_core.samples.registry import sample_bytes
from ge_core.viz.pass_table import PASS_COLUMNS, decision_table, pass_table


def test_pass_table_has_one_row_per_record_in_order() -> None:
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"), opt_level="O3")
    table = pass_table(compiled.records)
    assert list(table.columns) == PASS_COLUMNS
    assert table["pass"].tolist() == [r.name for r in compiled.records]
    assert (table["Δ nodes"] == table["nodes after"] - table["nodes before"]).all()
    fusion = [r for r in compiled.records if r.decisions]
    assert fusion and all("of" in table.loc[r.index - 1, "fusions"] for r in fusion)
    assert pass_table([]).empty and list(pass_table([]).columns) == PASS_COLUMNS


def test_decision_table_lists_every_candidate() -> None:
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"), opt_level="O3")
    decisions = [d for r in compiled.records for d in r.decisions]
    table = decision_table(decisions)
    assert len(table) == len(decisions)
    assert table["fused"].tolist() == [d.accepted for d in decisions]
    assert all(table["reason"])
