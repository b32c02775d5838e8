"""Bad dumps are refused with a GEError that names the file and the line:column or field; sizes are checked
before anything is read; a zip's members are never extracted."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from ge_core.errors import ModelError, ResourceLimitError
from ge_core.frontend.ge.dump_files import read_dump
from ge_core.frontend.ge.reader import read_ge_file

DATA = Path(__file__).parent / "data"
HAND = DATA / "ge_proto_00000007_graph_1_PreRunAfterOptimizeSubgraph.txt"
NAME = "ge_proto_00000001_graph_1_Build.txt"


def test_a_truncated_dump_names_the_file_and_line() -> None:
    text = HAND.read_text()
    cut = text[: len(text) // 2]
    with pytest.raises(ModelError, match=rf"{NAME}' line \d+:\d+: not GE's ModelDef"):
        read_ge_file(cut.encode(), NAME)


def test_a_garbled_dump_names_the_field() -> None:
    text = HAND.read_text().replace("  op {", "  op {\n    wrong: 1", 1)
    with pytest.raises(ModelError, match=r"line 7:\d+: .*no field named \"wrong\""):
        read_ge_file(text.encode(), NAME)


def test_binary_bytes_are_not_text() -> None:
    with pytest.raises(ModelError, match="is not text: byte 2 is not UTF-8"):
        read_ge_file(b"na\xff\xfe" * 10, NAME)


def test_a_file_of_another_schema_is_refused() -> None:
    tf_pbtxt = 'node {\n  name: "a"\n  op: "Placeholder"\n}\nversions {\n  producer: 27\n}\n'
    with pytest.raises(ModelError, match=r"line 1:1: not GE's ModelDef .*\"node\""):
        read_ge_file(tf_pbtxt.encode(), NAME)
    plain_onnx = 'ir_version: 8\ngraph {\n  node {\n    op_type: "Relu"\n    name: "r"\n  }\n}\n'
    with pytest.raises(ModelError, match="without GE's 'ge:' prefix"):
        read_ge_file(plain_onnx.encode(), "ge_onnx_00000001_graph_1_Build.pbtxt")


def test_a_dump_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / NAME
    with big.open("wb") as handle:  # a sparse 2 GiB file: no disk used, nothing read
        handle.seek((2 << 30) - 1)
        handle.write(b"\0")
    with pytest.raises(ResourceLimitError, match=r"is 2.0 GiB, over the 1.0 GiB limit per dump file; it was not read"):
        read_ge_file(big)
    monkeypatch.setenv("GE_MAX_DUMP_BYTES", "100")
    with pytest.raises(ResourceLimitError, match="over the 100 B limit"):
        read_ge_file(HAND)


def test_a_zip_bomb_is_refused_unread() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"dump/{NAME}", b" " * (64 << 20))  # 64 MiB of spaces deflate ~1000x
    with pytest.raises(ResourceLimitError, match="refused as a zip bomb"):
        read_dump(buffer.getvalue(), "dump.zip")


def test_zip_members_are_read_in_memory_never_extracted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"../../etc/{NAME}", HAND.read_bytes())  # a hostile name is just a name here
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(zipfile.ZipFile, "extract", lambda *a, **k: pytest.fail("extracted"))
    monkeypatch.setattr(zipfile.ZipFile, "extractall", lambda *a, **k: pytest.fail("extracted"))
    dump = read_dump(buffer.getvalue(), "upload.zip")
    assert [s.stage for s in dump.stages()] == ["Build"] and list(tmp_path.iterdir()) == []


def test_a_folder_without_dumps_says_how_to_make_them(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ModelError, match="DUMP_GE_GRAPH=1\\|2\\|3"):
        read_dump(tmp_path)


def test_links_in_a_dump_folder_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / NAME).write_bytes(HAND.read_bytes())
    folder = tmp_path / "dump"
    folder.mkdir()
    (folder / "ge_proto_00000002_graph_1_Build.txt").symlink_to(outside / NAME)
    with pytest.raises(ModelError, match="holds no GE graph dump"):
        read_dump(folder)
