"""workbench_ui helpers that need no running app: upload import, markdown escaping, text capping."""

from __future__ import annotations

import pytest

from ge_core.errors import ModelError, UsageError
from ge_core.frontend.summary import ModelSummary
from tests.app.models import tiny_model
from workbench_ui.loading import import_model_bytes, symbolic_inputs
from workbench_ui.text import code_span, head_lines, md_escape, problems_markdown


def test_import_model_bytes_imports_an_upload() -> None:
    result = import_model_bytes(tiny_model())
    assert [n.name for n in result.graph.nodes] == ["add", "relu"]
    assert symbolic_inputs(result.graph) == {}


def test_uploaded_bytes_marked_external_are_refused() -> None:
    with pytest.raises(ModelError, match="external data"):
        import_model_bytes(tiny_model(external=True))


def test_upload_spec_errors_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        import_model_bytes(tiny_model(), "x:1,a")


def test_md_escape_neutralises_markdown() -> None:
    text = "node 'a_b*c' ($x) uses onnx::Reshape_1 :red[no] `t` <b>"
    escaped = md_escape(text)
    for special in "_*$`:[<":
        assert f"\\{special}" in escaped
    assert md_escape("two\nlines") == "two lines"
    assert code_span("a`b") == "`` a`b ``" and code_span("conv1") == "`conv1`"


def test_problems_markdown_names_every_node_and_problem() -> None:
    summary = ModelSummary("m", "", {}, [], [], 20, {}, 0, 0,
                           {"If": ["branch"], "Loop": [f"loop{i}" for i in range(15)]}, ["node 'z' (Add): bad"])
    text = problems_markdown(summary)
    assert "2 operator type(s) without a kernel, used by 16 node(s)" in text
    assert "`If` has no kernel; used by node `branch`" in text
    assert "`loop11`" in text and "`loop12`" not in text and "and 3 more" in text
    assert md_escape("node 'z' (Add): bad") in text


def test_head_lines() -> None:
    assert head_lines("a\nb\nc", 2) == ("a\nb", 1)
    assert head_lines("a", 5) == ("a", 0)
