"""The import layering of DESIGN.md, read from the code's own imports (function-level ones included,
`if TYPE_CHECKING:` ones excluded):

- no cycle between ge_core's packages (a subpackage, or a module at the package root, is one unit);
- no unit imports a unit of a higher layer (LAYERS below, lowest first);
- the UI goes through one door: workbench_ui imports only ge_core's public modules, the pages (app_pages/)
  and app.py only workbench_ui;
- the UI uses Streamlit's public API only (no `streamlit.runtime`, no `_private` names);
- ge_core never imports streamlit.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# DESIGN.md's order, lowest first. Units in one layer may import each other (never in a cycle).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "version"),
    ("ir",),
    ("ops",),  # every op's facts and reference kernel (numpy only)
    ("kernels",),  # optional compiled fast paths, registered by op type (numba)
    ("frontend",),
    ("runtime",),  # the interpreter, executors and the ONNX backend: below the passes that run graphs
    ("hardware", "memory"),
    ("passes",),
    ("config",),
    ("offline",),  # the .gem format and the compile cache: what the compiler saves, loads and looks up
    ("compiler",),
    ("sim", "samples"),
    ("session",),  # GE's Session: compiles through the cache, dynamic shapes, runs on the simulator
    # sweep: models x configs on Dask (compiler, sim, samples below; the Compare tables from viz beside it)
    ("viz", "debugging", "cli", "sweep", "__main__"),
    ("dynamo",),  # the torch.compile backend: captures (frontend), compiles (compiler), runs or simulates (sim)
    ("ge_core",),  # the public API (ge_core/__init__.py) stands above everything it exports
)
PUBLIC_DOOR = {"ge_core", "ge_core.viz", "ge_core.debugging", "ge_core.samples", "ge_core.errors", "ge_core.config",
               "ge_core.sweep"}
RANK = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}


@dataclass(frozen=True)
class Import:
    file: str  # relative to the repository
    line: int
    module: str  # the imported module's dotted name

    def __str__(self) -> str:
        return f"{self.file}:{self.line} imports {self.module}"


def module_name(path: Path, root: Path = REPO) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, root: Path = REPO) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_only.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        rel = str(path.relative_to(root))
        if isinstance(node, ast.Import):
            yield from (Import(rel, node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against this module's package
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            yield Import(rel, node.lineno, base)
            for alias in node.names:  # `from ge_core import viz` imports the subpackage ge_core.viz
                candidate = f"{base}.{alias.name}"
                if (root / Path(*candidate.split("."))).is_dir():
                    yield Import(rel, node.lineno, candidate)


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def python_files(folder: str) -> list[Path]:
    return sorted((REPO / folder).rglob("*.py"))


def library_edges() -> dict[tuple[str, str], list[Import]]:
    edges: dict[tuple[str, str], list[Import]] = {}
    for path in python_files("ge_core"):
        source = unit_of(module_name(path))
        for imp in imports_of(path):
            if imp.module.split(".")[0] != "ge_core":
                continue
            target = unit_of(imp.module)
            if target != source:
                edges.setdefault((source, target), []).append(imp)
    return edges


def test_every_unit_has_a_layer() -> None:
    units = {unit_of(module_name(p)) for p in python_files("ge_core")}
    assert units - set(RANK) == set(), "give the new package a layer in LAYERS (and in DESIGN.md)"


def test_no_unit_imports_a_higher_layer() -> None:
    upward = [f"{source} -> {target}: {imp}" for (source, target), imps in library_edges().items()
              if RANK.get(target, -1) > RANK.get(source, -1) for imp in imps]
    assert upward == []


def test_no_cycle_between_packages() -> None:
    graph: dict[str, set[str]] = {}
    for source, target in library_edges():
        graph.setdefault(source, set()).add(target)
    cycles = list(_cycles(graph))
    assert cycles == [], "\n".join(" -> ".join(c) for c in cycles)


def _cycles(graph: dict[str, set[str]]) -> Iterator[list[str]]:
    """One cycle per strongly connected component with more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    yield from found


def test_the_ui_reaches_the_library_through_the_public_door() -> None:
    wrong = [str(imp) for path in python_files("workbench_ui") for imp in imports_of(path)
             if imp.module.split(".")[0] == "ge_core" and imp.module not in PUBLIC_DOOR]
    assert wrong == [], f"workbench_ui may import only {sorted(PUBLIC_DOOR)}"


@pytest.mark.parametrize("path", [REPO / "app.py", *python_files("app_pages")], ids=lambda p: p.name)
def test_pages_and_the_router_use_only_workbench_ui(path: Path) -> None:
    wrong = [str(imp) for imp in imports_of(path) if imp.module.split(".")[0] == "ge_core"]
    assert wrong == []


# Streamlit's documented modules; anything else under `streamlit.` is its implementation and changes without notice.
STREAMLIT_PUBLIC = {"streamlit", "streamlit.column_config", "streamlit.components.v1", "streamlit.components.v2",
                    "streamlit.errors", "streamlit.testing.v1"}
# (file, module): private imports kept on purpose, with the reason.
STREAMLIT_PRIVATE_KEPT = {
    # The canvas's graph files (megabytes) go to Streamlit's media storage and are fetched by URL, not sent
    # through the page's websocket; Streamlit has no public call that stores bytes and returns their URL.
    ("workbench_ui/canvas/component.py", "streamlit.runtime"),
}


def streamlit_names(path: Path) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of everything `path` imports from streamlit: modules, and names taken from them."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "streamlit")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "streamlit":
            yield from ((node.lineno, f"{node.module}.{a.name}") for a in node.names)


def is_private_streamlit(name: str) -> bool:
    """A `_name` anywhere, or a module outside STREAMLIT_PUBLIC (`streamlit.runtime`, `from streamlit import
    runtime`); a name taken from a public module (`from streamlit import column_config`) is public."""
    if any(part.startswith("_") for part in name.split(".")):
        return True
    if name in STREAMLIT_PUBLIC:
        return False
    parent = name.rpartition(".")[0]
    return parent not in STREAMLIT_PUBLIC or importlib.util.find_spec(name) is not None


def kept_on_purpose(path: Path, name: str) -> bool:
    file = path.relative_to(REPO).as_posix()
    return any(file == kept and name.startswith(module) for kept, module in STREAMLIT_PRIVATE_KEPT)


def test_the_ui_uses_only_streamlits_public_api() -> None:
    ui = [REPO / "app.py", *python_files("app_pages"), *python_files("workbench_ui")]
    wrong = [f"{path.relative_to(REPO)}:{line} imports {name}" for path in ui for line, name in streamlit_names(path)
             if is_private_streamlit(name) and not kept_on_purpose(path, name)]
    assert wrong == [], "use Streamlit's documented API (st.*): its internals change between releases"


def test_the_private_streamlit_check_tells_public_from_private() -> None:
    assert not is_private_streamlit("streamlit") and not is_private_streamlit("streamlit.column_config")
    assert not is_private_streamlit("streamlit.components.v2.component")
    assert is_private_streamlit("streamlit.runtime")  # `from streamlit import runtime`
    assert is_private_streamlit("streamlit.runtime.scriptrunner.get_script_run_ctx")
    assert is_private_streamlit("streamlit._private")


def test_ge_core_never_imports_streamlit() -> None:
    wrong = [str(imp) for path in python_files("ge_core") for imp in imports_of(path)
             if imp.module.split(".")[0] == "streamlit"]
    assert wrong == []


def test_the_reader_sees_function_level_imports_and_skips_type_checking_ones(tmp_path: Path) -> None:
    (tmp_path / "ge_core" / "viz").mkdir(parents=True)
    probe = tmp_path / "ge_core" / "probe.py"
    probe.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import ge_core.cli\n"
                     "def f():\n    from ge_core.compiler import compile\n    from . import viz\n")
    found = {imp.module for imp in imports_of(probe, tmp_path)}
    assert {"ge_core.compiler", "ge_core.viz"} <= found and "ge_core.cli" not in found
