"""Files Model Explorer opens: canvas_json ("Download graph JSON") and the dumps' .me.json, read by Model
Explorer's own JSON loader.

The loader is JavaScript in its web app (model_explorer/web_app/main-*.js): a `.json` file goes to the
built-in JSON adapter, which parses it and hands it to one function that accepts a GraphCollection
(`label` + `graphs`), an adapter's list, or a list of graphs, else says "Unsupported JSON format". The
tests below cut that function (and the one calling it for a file) out of the installed bundle and run them
with node on our files; then check the graphs against the Python dataclasses. A new bundle that renames
or reshapes them fails `loader_js` loudly, not silently."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import dacite
import pytest

import ge_core
from ge_core.debugging.dump import CANVAS_SUFFIX, write_dumps
from ge_core.errors import UsageError
from ge_core.samples.registry import sample_bytes
from ge_core.viz import canvas_json
from ge_core.viz.canvas_export import OVERLAYS_KEY, record_stem

model_explorer = pytest.importorskip("model_explorer")
from model_explorer import graph_builder  # noqa: E402  (after the skip: a UI dependency)

NODE = shutil.which("node")
WEB_APP = Path(model_explorer.__file__).parent / "web_app"
ERROR = '{error:"Unsupported JSON format"}}'


def _function_around(bundle: str, marker: str, end: str) -> str:
    """The minified `function name(a,b){...}` holding `marker`, up to the first `end` after it."""
    at = bundle.index(marker)
    start = bundle.rindex("function ", 0, at)
    return bundle[start:bundle.index(end, at) + len(end)]


@cache
def loader_js() -> str:
    """Model Explorer's JSON-file loader as a node script: `fromFile(name, json)` returns what the app
    would load, `{graphCollections}` or `{error}`."""
    bundle = next(WEB_APP.glob("main-*.js")).read_text(encoding="utf-8")
    accept = _function_around(bundle, ERROR, ERROR)  # collection / adapter list / graph list, or an error
    from_file = _function_around(bundle, ".modelTopology==null?", "}}")  # a file: tfjs model, or the above
    names = [re.match(r"function ([\w$]+)\(", f).group(1) for f in (accept, from_file)]  # type: ignore[union-attr]
    called = set(re.findall(r"(?<![\w$.])([A-Za-z_$][\w$]*)\(", accept + from_file)) - {*names, "function"}
    stubs = "".join(f"function {c}(){{throw new Error('not our format: {c}')}}\n" for c in sorted(called))
    return f"{stubs}{accept}\n{from_file}\nconst fromFile = {names[1]};\n"


def open_in_model_explorer(paths: list[Path]) -> list[dict[str, Any]]:
    """What Model Explorer's loader makes of each file: the collections it would show (one node run)."""
    if NODE is None:
        pytest.skip("node is not installed: Model Explorer's loader is JavaScript")
    script = loader_js() + """
const fs = require("fs");
const results = process.argv.slice(1).map(
    path => fromFile(path.split("/").pop(), JSON.parse(fs.readFileSync(path, "utf8"))));
console.log(JSON.stringify(results));
"""
    proc = subprocess.run([NODE, "-e", script, *map(str, paths)], capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    results: list[dict[str, Any]] = json.loads(proc.stdout)
    assert all("error" not in r for r in results), [r for r in results if "error" in r]
    return results


def check_files(files: list[tuple[Path, str, ge_core.Graph]]) -> None:
    """Each (file, graph id, graph): one collection whose first graph is that graph, one item per node named
    as the node, then its fused bodies; the graphs load into the dataclasses strictly."""
    results = open_in_model_explorer([path for path, _, _ in files])
    for result, (_, graph_id, graph) in zip(results, files, strict=True):
        (collection,) = result["graphCollections"]
        data = dict(collection)
        data.pop(OVERLAYS_KEY, None)
        parsed = dacite.from_dict(graph_builder.GraphCollection, data, config=dacite.Config(strict=True))
        assert parsed.graphs[0].id == graph_id
        ops = [n.id for n in parsed.graphs[0].nodes if n.label not in ("Input", "Output")]
        assert ops == [n.name for n in graph.nodes]
        fused = {f"{graph_id}/{n.name}" for n in graph.nodes if n.body is not None}
        assert fused <= {g.id for g in parsed.graphs}


@pytest.fixture(scope="module")
def compiled() -> ge_core.CompiledModel:
    return ge_core.compile(sample_bytes("conv_bn_relu"), opt_level="O3")


def test_the_loader_refuses_what_it_should() -> None:
    """The cut-out loader is the real one: a JSON it does not know gets its error."""
    if NODE is None:
        pytest.skip("node is not installed")
    script = loader_js() + "console.log(JSON.stringify(fromFile('x.json', {nodes: []})));"
    out = subprocess.run([NODE, "-e", script], capture_output=True, text=True, timeout=60, check=True).stdout
    assert json.loads(out) == {"error": "Unsupported JSON format"}


def test_the_download_json_of_the_final_graph_opens_in_model_explorer(compiled: ge_core.CompiledModel,
                                                                       tmp_path: Path) -> None:
    path = tmp_path / "final.json"
    path.write_text(json.dumps(canvas_json(compiled)), encoding="utf-8")
    check_files([(path, "final", compiled.graph)])


def test_the_download_json_of_every_pass_opens_in_model_explorer(compiled: ge_core.CompiledModel,
                                                                 tmp_path: Path) -> None:
    files = []
    for i, record in enumerate(compiled.records):
        data = canvas_json(compiled, i)
        assert data["graphs"][0]["id"] == record_stem(record)
        assert data["label"].endswith(f"after {record.name}")
        path = tmp_path / f"{i}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        files.append((path, record_stem(record), record.snapshot or compiled.graph))
    check_files(files)


def test_a_record_that_does_not_exist_is_refused_with_the_known_range(compiled: ge_core.CompiledModel) -> None:
    with pytest.raises(UsageError, match=f"0 to {len(compiled.records) - 1}"):
        canvas_json(compiled, len(compiled.records))


def test_every_dump_opens_in_model_explorer(compiled: ge_core.CompiledModel, tmp_path: Path) -> None:
    files = [p for p in write_dumps(compiled, tmp_path, onnx=False) if p.name.endswith(CANVAS_SUFFIX)]
    graphs = [compiled.input_graph] + [r.snapshot or compiled.graph for r in compiled.records]
    assert len(files) == len(graphs)
    check_files([(p, p.name.removesuffix(CANVAS_SUFFIX), g) for p, g in zip(files, graphs, strict=True)])


def test_the_final_graph_json_carries_memory_and_latency(compiled: ge_core.CompiledModel) -> None:
    data = canvas_json(compiled, sim=ge_core.simulate(compiled))
    node = next(n for n in data["graphs"][0]["nodes"] if n["id"] == "relu1")
    keys = {a["key"] for a in node["attrs"]}
    assert {"memory (bytes)", "lifetime (steps)", "simulated latency (µs)", "fusion group"} <= keys
    last = canvas_json(compiled, len(compiled.records) - 1)  # the last pass's snapshot is the final graph
    assert "memory (bytes)" in last[OVERLAYS_KEY]
    early = canvas_json(compiled, 0)
    assert "memory (bytes)" not in early[OVERLAYS_KEY]  # the plan is the final graph's, not this one's
