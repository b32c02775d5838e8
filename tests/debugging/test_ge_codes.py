"""GE's error-code and Status tables: every row is GE's, sourced; codes and numbers are explained, also the
ones GE's table lacks (from the code's shape)."""

from __future__ import annotations

import json

import pytest

from ge_core.debugging.ge_codes import DATA, error_codes, explain_code, explain_status, is_code


def test_every_row_of_the_code_table_is_sourced_and_well_formed() -> None:
    rows = json.loads((DATA / "ge_error_codes.json").read_text())["codes"]
    assert len(rows) > 400
    assert len({r["code"] for r in rows}) == len(rows)
    for row in rows:
        assert is_code(row["code"]), row["code"]
        assert row["message"] and row["source"], row["code"]
        assert row["source"].startswith(("Ascend/metadef@", "hicann/runtime@")), row["code"]


def test_the_plain_words_are_ours_and_only_for_codes_that_exist_or_have_a_family() -> None:
    plain = json.loads((DATA / "ge_error_plain.json").read_text())
    assert "Not GE's text" in plain["about"]
    for code, words in plain["codes"].items():
        assert is_code(code) and words["plain"] and words["advice"], code
        assert code in error_codes() or code[:2] in plain["families"], f"{code}: neither GE's nor a known family"
    assert all(len(key) == 2 and key[0] == "E" for key in plain["families"])


def test_a_code_in_ges_table_keeps_ges_words_beside_ours() -> None:
    e40021 = explain_code("E40021")
    assert e40021.known and e40021.module == "TEFusion Errors"
    assert e40021.message == "Failed to compile Op [%s]. (oppath: [%s], optype: [%s])"  # GE's template, verbatim
    assert "Python stack" in e40021.ge_solution and "oppath" in e40021.plain
    assert e40021.what_to_do == e40021.advice and e40021.source.startswith("Ascend/metadef@649f6cc7")


@pytest.mark.parametrize(("code", "module", "inner"), [
    ("EE9999", "RTS Errors", True),  # the runtime's inner error: not a row of GE's table, yet common
    ("E39999", "AI CPU Errors", True),
    ("EI9999", "HCCL Errors", True),
])
def test_an_inner_code_is_explained_from_its_shape(code: str, module: str, inner: bool) -> None:
    explained = explain_code(code)
    assert not explained.known and explained.inner is inner and explained.module == module
    assert explained.plain and explained.what_to_do


def test_an_unknown_module_character_says_so() -> None:
    explained = explain_code("EX0001")
    assert not explained.known and "not in GE's table" in explained.plain


@pytest.mark.parametrize("value", [4294967295, -1, "0xFFFFFFFF", "4294967295"])
def test_the_failed_status_in_all_its_spellings(value: int | str) -> None:
    status = explain_status(value)
    assert status is not None and status.name == "FAILED" and status.signed == -1 and status.hex == "0xFFFFFFFF"


def test_status_numbers_are_those_ges_header_comments_give() -> None:
    # ge_inner_error_codes.h writes the number beside some definitions: "// 1343225856", "// 1343242243"
    memalloc = explain_status(1343225856)
    assert memalloc is not None and memalloc.name == "MEMALLOC_FAILED"
    exists = explain_status(1343242243)
    assert exists is not None and exists.desc == "Graph ID already exist."
    build = explain_status(1343266819)  # seen in a real plog as ErrorNo: 1343266819(Graph manager build graph failed.)
    assert build is not None and build.desc == "Graph manager build graph failed."
    assert explain_status(507011) is None  # a runtime / ACL code, not a GE Status
    assert explain_status("abc") is None
