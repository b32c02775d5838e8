"""GE's fusion_result.json (ATC's --export_compile_stat, the session option export_compile_stat): per session
and graph, per fusion pass, how often its pattern matched and how often the fusion took effect.

GE's writer (hicann/ge, compiler/engines/nn_engine/fusion/common/fusion_statistic/fusion_statistic_writer.cc)
writes, with nlohmann::json (keys sorted) at indent 4, counts as strings, a section only when it has passes:

    {"session_and_graph_id_<session>_<graph>": {
        "graph_fusion": {"<Pass>": {"effect_times": "1", "match_times": "2"}},
        "ub_fusion": {"<Pass>": {"effect_times": "1", "match_times": "1", "repository_hit_times": "0"}}}}

and appends each later graph's object to the same file. Older CANN versions wrote one object per graph with
the id as a field, `{"graph_fusion": {...}, "session_and_graph_id": "0_0", "ub_fusion": {...}}`, either
alone, as a list `[{...},{...}]` or one object after the other `{...}{...}`, and UB passes without
repository_hit_times. All of these are read; tests/debugging/ge_fusion holds one real file of each.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ge_core.errors import ModelError, ResourceLimitError, quote

MAX_BYTES = 32 * 2**20  # GE's files are kilobytes; a graph with thousands of passes is still far below this
KEY_PREFIX = "session_and_graph_id"
SECTIONS = {"graph_fusion": "graph", "ub_fusion": "ub"}
FRAME_COLUMNS = ["session_and_graph_id", "kind", "pass", "match_times", "effect_times", "repository_hit_times"]
COMPARE_COLUMNS = ["kind", "pass", "ge_match", "ge_effect", "our_match", "our_effect", "present"]


@dataclass(frozen=True)
class PassCounts:
    kind: str  # "graph" or "ub"
    name: str
    match_times: int
    effect_times: int
    repository_hit_times: int | None = None  # UB passes only, and only in newer files


@dataclass(frozen=True)
class GraphFusion:
    """The counts of one graph's compile. `session_and_graph_id` is GE's "<session>_<graph>"."""

    session_and_graph_id: str
    passes: tuple[PassCounts, ...]

    def of_kind(self, kind: str) -> tuple[PassCounts, ...]:
        return tuple(p for p in self.passes if p.kind == kind)


@dataclass(frozen=True)
class FusionResult:
    name: str
    graphs: tuple[GraphFusion, ...]
    layout: str  # "keyed" (GE's current writer) or "records" (one object per graph, older versions)


def read_fusion_result_file(path: str | Path) -> FusionResult:
    file = Path(path)
    size = file.stat().st_size
    if size > MAX_BYTES:
        raise ResourceLimitError(f"{quote(file.name)} is {size / 2**20:,.1f} MB: GE's fusion_result.json is a few "
                                 f"kilobytes, and more than {MAX_BYTES // 2**20} MB is not read.")
    return read_fusion_result(file.read_bytes(), file.name)


def read_fusion_result(data: bytes | str, name: str = "fusion_result.json") -> FusionResult:
    """Read any of GE's layouts; a file of another kind is refused with what was expected."""
    if len(data) > MAX_BYTES:
        raise ResourceLimitError(f"{quote(name)} is {len(data) / 2**20:,.1f} MB, more than the "
                                 f"{MAX_BYTES // 2**20} MB a fusion_result.json may have here.")
    text = data.decode("utf-8-sig", "replace") if isinstance(data, bytes) else data
    documents = list(_documents(text, name))
    graphs: list[GraphFusion] = []
    layouts: set[str] = set()
    for document in documents:
        for item in document if isinstance(document, list) else [document]:
            layout, found = _graphs_of(item, name)
            layouts.add(layout)
            graphs += found
    if not graphs:
        raise ModelError(f"{quote(name)} holds no fusion counts: GE's fusion_result.json has "
                         f"'{KEY_PREFIX}_<session>_<graph>' keys, or objects with 'graph_fusion' / 'ub_fusion'.",
                         hint="Write it with atc --export_compile_stat=1 (or the session option of that name).")
    return FusionResult(name, tuple(graphs), "keyed" if layouts == {"keyed"} else "records")


def fusion_result_from_dict(document: Mapping[str, Any], name: str = "ours") -> FusionResult:
    """The same reading for an object already in memory (our own compile's `fusion_result(records)`)."""
    layout, graphs = _graphs_of(document, name)
    return FusionResult(name, tuple(graphs), layout)


def _documents(text: str, name: str) -> Iterator[Any]:
    """The JSON values in `text`: one, or several written one after the other (GE appended them)."""
    decoder = json.JSONDecoder()
    position, length = 0, len(text)
    while True:
        while position < length and (text[position].isspace() or text[position] == ","):
            position += 1
        if position >= length:
            return
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as err:
            raise ModelError(f"{quote(name)} is not valid JSON at line {err.lineno}, column {err.colno}: {err.msg}.",
                             hint="Upload the fusion_result.json GE wrote, unedited.") from None
        yield value


def _graphs_of(item: Any, name: str) -> tuple[str, list[GraphFusion]]:
    if not isinstance(item, dict):
        raise ModelError(f"{quote(name)}: expected a JSON object per graph, found {type(item).__name__}.")
    if KEY_PREFIX in item or any(section in item for section in SECTIONS):
        graph_id = str(item.get(KEY_PREFIX, "0_0"))
        return "records", [GraphFusion(graph_id, _passes(item, f"{name}: {KEY_PREFIX} {graph_id}"))]
    graphs = [GraphFusion(key[len(KEY_PREFIX) + 1:], _passes(value, f"{name}: {key}"))
              for key, value in item.items() if key.startswith(KEY_PREFIX + "_") and isinstance(value, dict)]
    return "keyed", graphs


def _passes(graph: Mapping[str, Any], where: str) -> tuple[PassCounts, ...]:
    passes = []
    for section, kind in SECTIONS.items():
        entries = graph.get(section) or {}
        if not isinstance(entries, dict):
            raise ModelError(f"{where}: '{section}' should map pass names to counts.")
        for pass_name, counts in entries.items():
            field = f"{where}.{section}.{pass_name}"
            if not isinstance(counts, dict):
                raise ModelError(f"{field}: expected {{'match_times': ..., 'effect_times': ...}}.")
            hits = counts.get("repository_hit_times")
            passes.append(PassCounts(kind, str(pass_name), _count(counts.get("match_times", 0), field, "match_times"),
                                     _count(counts.get("effect_times", 0), field, "effect_times"),
                                     None if hits is None else _count(hits, field, "repository_hit_times")))
    return tuple(passes)


def _count(value: Any, field: str, key: str) -> int:
    """GE writes counts as strings ("3"); numbers are taken too. Anything else names the field."""
    try:
        count = int(str(value).strip())
    except ValueError:
        raise ModelError(f"{field}.{key} is {value!r}, not a count.") from None
    if count < 0:
        raise ModelError(f"{field}.{key} is {count}: a count cannot be negative.")
    return count


def fusion_result_frame(result: FusionResult) -> pd.DataFrame:
    """One row per graph and pass (FRAME_COLUMNS), in the file's order."""
    rows = [{"session_and_graph_id": g.session_and_graph_id, "kind": p.kind, "pass": p.name,
             "match_times": p.match_times, "effect_times": p.effect_times,
             "repository_hit_times": p.repository_hit_times} for g in result.graphs for p in g.passes]
    return pd.DataFrame(rows, columns=FRAME_COLUMNS)


def compare_fusion_results(ge: GraphFusion, ours: GraphFusion | None) -> pd.DataFrame:
    """GE's counts beside ours, pass by pass (COMPARE_COLUMNS): the passes both ran first, by kind and name,
    then GE's only, then ours only. A count a side does not have is missing (NA), not 0."""
    mine = {(p.kind, p.name): p for p in (ours.passes if ours is not None else ())}
    theirs = {(p.kind, p.name): p for p in ge.passes}
    rows = []
    for key in sorted(set(theirs) | set(mine), key=lambda k: (k not in mine or k not in theirs, k not in theirs, k)):
        g, o = theirs.get(key), mine.get(key)
        rows.append({"kind": key[0], "pass": key[1], "ge_match": g.match_times if g else None,
                     "ge_effect": g.effect_times if g else None, "our_match": o.match_times if o else None,
                     "our_effect": o.effect_times if o else None,
                     "present": "both" if g and o else "GE only" if g else "ours only"})
    frame = pd.DataFrame(rows, columns=COMPARE_COLUMNS)
    for column in ("ge_match", "ge_effect", "our_match", "our_effect"):
        frame[column] = frame[column].astype("Int64")
    return frame
