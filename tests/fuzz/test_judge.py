"""The fuzzer's judge flags every kind of bad outcome (so a clean fuzz run means something)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz.runner import judge_reply, tree

SECRET = b"GE-FUZZ-SECRET:" + bytes(range(200, 248))


def _reply(code: int = 3, out: str = "", err: str = "ge_core run: refused.", growth: int = 0) -> dict[str, object]:
    return {"code": code, "out": out, "err": err, "peak_growth_bytes": growth, "seconds": 0.1}


@pytest.mark.parametrize(("reply", "words"), [
    ("hang", "hang"),
    ("crash", "crash"),
    (_reply(code=1, err="ge_core run: internal error (KeyError)"), "exit 1"),
    (_reply(err="ge_core run: bad\nTraceback (most recent call last):"), "traceback"),
    (_reply(err="something else"), "does not start with"),
    (_reply(err="ge_core run: node 'a\nge_core run: OK' failed"), "looks like the CLI's own"),
    (_reply(code=0, out="y\nge_core run: done: float32[2]", err=""), "looks like the CLI's own"),
    (_reply(growth=3 << 30), "memory grew"),
    (_reply(out=SECRET[10:30].decode("latin-1")), "secret"),
])
def test_the_judge_flags_it(reply: dict[str, object] | str, words: str) -> None:
    findings = judge_reply("run", reply, SECRET)
    assert any(words in f for f in findings), findings


def test_a_clean_refusal_and_a_clean_success_pass() -> None:
    assert judge_reply("run", _reply(), SECRET) == []
    assert judge_reply("run", _reply(code=0, out="y: float32[2]  min 0", err=""), SECRET) == []


def test_the_tree_sees_a_file_written_outside_the_dump_folder(tmp_path: Path) -> None:
    (tmp_path / "dumps").mkdir()
    before = tree(tmp_path, [tmp_path / "dumps"])
    (tmp_path / "dumps" / "ok.txt").write_text("fine")
    assert tree(tmp_path, [tmp_path / "dumps"]) == before
    (tmp_path / "escaped.txt").write_text("not fine")
    assert tree(tmp_path, [tmp_path / "dumps"]) != before
