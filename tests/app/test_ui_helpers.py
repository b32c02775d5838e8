"""workbench_ui helpers that need no running app: upload import, markdown escaping, text capping."""

from __future__ import annotations

import ast
import collections.abc
import importlib
import inspect
import re
import textwrap
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ge_core.errors import ModelError, UsageError
from ge_core.frontend import load_onnx
from ge_core.frontend.summary import ModelSummary
from ge_core.samples.registry import DEFAULT_SAMPLE, sample_bytes
from ge_core.viz import diff_graphs
from tests.app.models import tiny_model
from workbench_ui.graph_views import constants_note
from workbench_ui.loading import import_model_bytes, symbolic_inputs
from workbench_ui.navigation import PAGES, ROOT
from workbench_ui.session import draw_sidebar
from workbench_ui.text import code_span, head_lines, md_escape, problems_markdown, shape_advice, web_words


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


def test_every_page_keeps_its_address_and_has_its_file() -> None:
    """The addresses links and bookmarks use (`/Graph?sample=...`): a page's file may move, its address not."""
    assert [p.url_path for p in PAGES] == ["Model", "Graph", "Passes", "Debug", "Fusion", "Memory", "Profile",
                                           "Compare", "Dynamic"]
    assert all(p.title.startswith(p.url_path) for p in PAGES)  # `/Dynamic` for "Dynamic shapes"
    assert all((ROOT / p.path).is_file() and p.path.startswith("app_pages/") for p in PAGES)


def test_no_pages_folder_starts_streamlits_legacy_multipage_mode() -> None:
    """A `pages/` folder next to app.py makes Streamlit run a fresh server's first address without app.py (its
    own menu of that folder, no shared sidebar) until some session calls st.navigation: the pages live in
    app_pages/, and every run goes through the router."""
    assert not (ROOT / "pages").exists()
    assert sorted(p.name for p in (ROOT / "app_pages").glob("*.py")) == sorted(Path(p.path).name for p in PAGES)


def test_the_sidebar_never_reruns_or_stops_the_script() -> None:
    """The router draws the sidebar before st.navigation (workbench_ui.router): a rerun or a stop from there, on
    a session's first run, would lose the page the address names."""
    modules = ("model_picker", "shapes", "hardware_picker", "persist")
    sources = [(ROOT / "workbench_ui" / f"{name}.py").read_text() for name in modules]
    sources.append(inspect.getsource(draw_sidebar))
    assert [s for s in sources if re.search(r"\bst\.(rerun|stop|switch_page)\(", s)] == []


def test_no_cached_function_draws() -> None:
    """A function under st.cache_data / st.cache_resource that draws (itself, or through a callback it is
    given, such as a progress bar's) breaks every later page that hits the cache: Streamlit replays what it
    drew (CacheReplayClosureError). So its body never names `st`, and it takes no callback returning None."""
    cached = dict(cached_functions())
    assert "workbench_ui.shared_cache.shared_cache" in cached  # the search finds them
    assert [name for name, func in cached.items() if names_st(func) or drawing_callbacks(func)] == []


def cached_functions() -> Iterator[tuple[str, Callable[..., Any]]]:
    """(qualified name, undecorated function) of each st.cache_* function defined in workbench_ui."""
    for path in sorted((ROOT / "workbench_ui").glob("*.py")):
        module = importlib.import_module(f"workbench_ui.{path.stem}")
        for name, obj in vars(module).items():
            func = getattr(obj, "__wrapped__", None)
            if func is not None and hasattr(obj, "clear") and getattr(obj, "__module__", "") == module.__name__:
                yield f"{module.__name__}.{name}", func


def names_st(func: Callable[..., Any]) -> bool:
    body = ast.parse(textwrap.dedent(inspect.getsource(func))).body[0]
    assert isinstance(body, ast.FunctionDef)
    return any(isinstance(n, ast.Name) and n.id == "st" for stmt in body.body for n in ast.walk(stmt))


def drawing_callbacks(func: Callable[..., Any]) -> list[str]:
    """Parameters typed as callables returning None (aliases such as Progress resolved)."""
    return [arg for arg, hint in typing.get_type_hints(func).items() if arg != "return"
            and typing.get_origin(hint) is collections.abc.Callable and typing.get_args(hint)[-1] in (None, type(None))]


def test_web_words_speak_of_the_sidebar_not_of_cli_flags() -> None:
    assert web_words('Pass --input-shape "x:1,3" (or feed --inputs).') == (
        'Type "x:1,3" in the sidebar\'s Input shapes box.')
    assert web_words("Fix the model, or set its symbolic dims with --input-shape.") == (
        "Fix the model, or set its symbolic dims in the sidebar's Input shapes box.")
    said = web_words("--input-shape gives input 'x' 2 dims [1, 2], but the model declares 3")
    assert "--" not in said and said.startswith("The input-shape spec gives input 'x'")


def test_shape_problems_say_what_to_do_for_their_kind() -> None:
    mismatch = ["node 'y' (MatMul) with inputs [[1,3,4], [5,6]]: inner dimensions differ: [1, 3, 4] @ [5, 6]"]
    (advice,) = shape_advice(mismatch)
    assert "Re-export it from its framework" in advice and "Input shapes box" in advice
    (advice,) = shape_advice(["graph input 'x' has no shape; give one with --input-shape"])
    assert "give it one in the sidebar's Input shapes box" in advice
    summary = ModelSummary("m", "", {"": 17}, [], [], 2, {"MatMul": 1}, 0, 0, problems=mismatch)
    assert "**What to do:** The shapes the model declares do not fit together" in problems_markdown(summary)


def test_a_pass_that_only_drops_constants_says_so() -> None:
    before = load_onnx(sample_bytes(DEFAULT_SAMPLE))
    after = before.copy()
    name = sorted(after.constants)[0]
    del after.constants[name]
    note = constants_note(diff_graphs(before, after), before, after, "PrunePass")
    assert note.startswith("PrunePass changed no node: it dropped 1 constant (")
    assert code_span(name) in note and "not boxes on the canvas" in note
    assert constants_note(diff_graphs(before, before), before, before, "CsePass") == ""


def test_the_vendored_canvas_page_carries_the_current_shim() -> None:
    """shim.js is copied into static/model_explorer/canvas.html by `python3 -m workbench_ui.canvas.vendor`:
    an edit of shim.js not vendored would never reach the browser."""
    from workbench_ui.canvas.serving import BUNDLE_DIR, ENTRY
    from workbench_ui.canvas.vendor import SHIM

    page = (BUNDLE_DIR / ENTRY).read_text()
    assert f"<head><script>\n{SHIM.read_text()}</script>" in page
    assert "fonts.gstatic.com" not in page and '<base href="canvas.html">' in page
