"""The Dynamic shapes page's sections (app_pages/dynamic.py): a sequence of requests of varying size through
each dynamic-shape strategy.

    model = dynamic_model(choice)                  # the picked model (a BERT-style layer if it has no symbolic dim)
    settings = pick_settings(model)                # the dim that varies and the sizes (widgets kept in the address)
    play = play_or_stop(model, settings, config)   # every strategy, cold and warm; a refusal stops the page

The play itself is ge_core.play_requests (ge_core/session/playback.py), cached per model and settings: the
page only draws what it returns.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import altair as alt
import pandas as pd
import streamlit as st

import ge_core
from ge_core.errors import GEError
from ge_core.samples import get_sample, sample_bytes
from workbench_ui import address
from workbench_ui.loading import load_model
from workbench_ui.model_picker import ModelChoice
from workbench_ui.session import WorkbenchConfig

FALLBACK_SAMPLE = "transformer_encoder"  # a BERT-style encoder layer whose sequence length is symbolic
DEFAULT_HARDWARE = "ascend910"
SETTINGS = {"requests": 12, "distinct": 4, "low": 16, "high": 256, "seed": 0}  # address parameter -> default
LIMITS = {"requests": (1, 64), "distinct": (1, 64), "low": (1, 4096), "high": (1, 4096), "seed": (0, 10_000)}
Plays = list[tuple[ge_core.Playback, ge_core.Playback]]  # per strategy: cold start, warm start


@dataclass(frozen=True)
class DynamicModel:
    """The model to play: its graph with the symbolic dims left unknown, and the shapes its spec gives them."""

    key: str
    title: str
    graph: ge_core.Graph
    defaults: dict[str, tuple[int, ...]]


@dataclass(frozen=True)
class Play:
    """Requests of `sizes` (along `symbol`) through every strategy: per strategy a cold and a warm start."""

    title: str
    symbol: str
    sizes: list[int]
    config: ge_core.CompileConfig
    plays: Plays


def dynamic_model(choice: ModelChoice) -> DynamicModel:
    """The picked model with its symbolic dims left unknown, or the BERT-style sample when it has none."""
    load = load_model(choice, "")
    graph = load.result.graph if load.result is not None and load.result.ok else None
    if graph is not None and ge_core.dynamic_symbols(graph):
        return DynamicModel(choice.key, choice.title, graph,
                            dict(ge_core.parse_input_shapes(choice.default_spec or None)))
    st.info(f"{choice.title} has no symbolic dims to vary: this page plays the BERT-style encoder layer "
            f"`{FALLBACK_SAMPLE}` instead. Pick a model with symbolic dims in the sidebar to play it.")
    sample = get_sample(FALLBACK_SAMPLE)
    return DynamicModel(choice.key, sample.title, ge_core.load_onnx(sample_bytes(FALLBACK_SAMPLE)),
                        dict(ge_core.parse_input_shapes(sample.input_shapes)))


def play_or_stop(model: DynamicModel, settings: dict[str, int | str], config: WorkbenchConfig) -> Play:
    """The requests played through every strategy; sizes out of order, or a size the model refuses, are
    said on the page, which stops there."""
    symbol = str(settings["symbol"])
    values = {k: int(v) for k, v in settings.items() if k != "symbol"}
    if values["low"] > values["high"]:
        st.error(f"The smallest size ({values['low']}) is above the largest ({values['high']}).")
        st.stop()
    sizes = ge_core.request_sizes(values["requests"], values["low"], values["high"], values["seed"],
                                  values["distinct"])
    compile_config = replace(config.settings, hardware=config.settings.hardware or DEFAULT_HARDWARE, verify=False)
    try:
        with st.spinner(f"Playing {len(sizes)} requests through {len(ge_core.DYNAMIC_STRATEGIES)} strategies…"):
            plays = _plays(model.key, model.title, symbol, tuple(sizes), values["low"], values["high"],
                           json.dumps(compile_config.to_json()), model.graph, model.defaults)
    except GEError as err:
        st.error(f"{model.title} refused a request: {err}")
        st.caption("Lower the largest size to what the model takes (position embeddings, for instance).")
        st.stop()
    return Play(model.title, symbol, sizes, compile_config, plays)


def play_caption(play: Play) -> str:
    return (f"{play.title}, {play.config.opt_level} on {play.config.hardware}; sizes: "
            f"{', '.join(map(str, play.sizes))}. Every compile is timed without per-pass verification.")


def pick_settings(model: DynamicModel) -> dict[str, int | str]:
    """The dim that varies (`symbol`) and the sizes' settings, read from and written back to the address (so
    a view can be shared). The defaults fit the model: the largest size is one its shapes take."""
    symbols = ge_core.dynamic_symbols(model.graph)
    params = st.query_params
    default_symbol = next((s for s in symbols if "seq" in s), symbols[-1])
    wanted = params.get("dim", default_symbol)
    columns = st.columns(6)
    symbol = columns[0].selectbox("Dim that varies", symbols, index=symbols.index(wanted) if wanted in symbols else
                                  symbols.index(default_symbol))
    defaults = model_defaults(model, symbol)
    chosen: dict[str, int | str] = {"symbol": symbol}
    labels = {"requests": "Requests", "distinct": "Distinct sizes", "low": "Smallest", "high": "Largest",
              "seed": "Seed"}
    for column, (name, default) in zip(columns[1:], defaults.items(), strict=True):
        low, high = LIMITS[name]
        try:
            start = min(max(int(params.get(name, default)), low), high)
        except ValueError:
            start = default
        chosen[name] = int(column.number_input(labels[name], low, high, start, step=1))
    if defaults["high"] < SETTINGS["high"]:
        st.caption(f"The largest size defaults to {defaults['high']}: the largest `{symbol}` "
                   f"{model.title} takes (its shapes stop adding up above it, e.g. at a position-embedding table).")
    address.write("dim", symbol, default_symbol)  # defaults stay out of the address (no history entry of their own)
    for name, default in defaults.items():
        address.write(name, chosen[name], default)
    return chosen


def model_defaults(model: DynamicModel, symbol: str) -> dict[str, int]:
    """SETTINGS, with the largest size lowered to the largest the model takes along `symbol` (and the
    smallest kept below it)."""
    largest = _largest_size(model.key, symbol, SETTINGS["high"], model.graph, model.defaults)
    if largest is None or largest >= SETTINGS["high"]:
        return dict(SETTINGS)
    return {**SETTINGS, "high": largest, "low": min(SETTINGS["low"], largest)}


@st.cache_data(max_entries=32, show_spinner=False)
def _largest_size(model_key: str, symbol: str, up_to: int, _graph: ge_core.Graph,
                  _defaults: dict[str, tuple[int, ...]]) -> int | None:
    return ge_core.DynamicAxis.of_graph(_graph, symbol, _defaults).largest_size(_graph, up_to)


@st.cache_data(max_entries=8, show_spinner=False)
def _plays(model_key: str, title: str, symbol: str, sizes: tuple[int, ...], low: int, high: int, config_json: str,
           _graph: ge_core.Graph, _defaults: dict[str, tuple[int, ...]]) -> Plays:
    """Each strategy twice over one fresh compile cache: a cold start, then a warm one (a second server
    start). Keyed by the model's key, the sizes and the config; the graph and its default shapes go with it."""
    config = ge_core.CompileConfig.from_json(config_json)
    axis = ge_core.DynamicAxis.of_graph(_graph, symbol, _defaults)
    plays: Plays = []
    with tempfile.TemporaryDirectory(prefix="ge_dynamic_") as folder:
        for strategy in ge_core.DYNAMIC_STRATEGIES:
            cold, warm = (ge_core.play_requests(_graph, axis, sizes, strategy, config, Path(folder), low=low,
                                                high=high) for _ in range(2))
            plays.append((cold, warm))
    return plays


def strategy_table(plays: Plays) -> pd.DataFrame:
    rows = []
    for cold, warm in plays:
        rows.append({"strategy": ge_core.DYNAMIC_STRATEGY_TITLES[cold.strategy], "compiles": cold.compiles,
                     "compile s": round(cold.compile_seconds, 3), "run-time decisions": cold.decisions,
                     "decision s": round(cold.decision_seconds, 3),
                     "first response, cold s": round(cold.first_response_seconds, 3),
                     "first response, warm start s": round(warm.first_response_seconds, 3),
                     "warm start: cache hits": warm.cache_hits, "warm start: compiles": warm.compiles,
                     "warm request ms": round(cold.warm_request_seconds * 1e3, 1),
                     "mean simulated µs": round(cold.mean_simulated_us, 1)})
    return pd.DataFrame(rows)


def request_table(plays: Plays) -> pd.DataFrame:
    """One row per request of the cold start: its size, the size it ran at, its time and simulated latency."""
    rows = [{"strategy": ge_core.DYNAMIC_STRATEGY_TITLES[cold.strategy], "request": r.index + 1, "size": r.size,
             "ran at": r.model_size, "request ms": r.seconds * 1e3, "simulated µs": r.simulated_us,
             "compile ms": r.compile_seconds * 1e3, "decision ms": r.decision_seconds * 1e3}
            for cold, _ in plays for r in cold.requests]
    return pd.DataFrame(rows)


def request_chart(requests: pd.DataFrame, field: str, title: str, log: bool = False) -> alt.Chart:
    """One line per strategy, in the table's order; each its own dash and point shape, so a strategy whose
    line lies on another's (static and range run the same exact shapes) still shows."""
    scale = alt.Scale(type="log") if log else alt.Scale(zero=False)
    order = list(ge_core.DYNAMIC_STRATEGY_TITLES.values())
    dashes = [[1, 0], [6, 3], [2, 2], [8, 2, 2, 2]][:len(order)]
    return (alt.Chart(requests, title=title).mark_line(point=True)
            .encode(x=alt.X("request:Q", title="request"), y=alt.Y(f"{field}:Q", scale=scale),
                    color=alt.Color("strategy:N", sort=order, legend=alt.Legend(labelLimit=320)),
                    strokeDash=alt.StrokeDash("strategy:N", sort=order, scale=alt.Scale(domain=order, range=dashes)),
                    shape=alt.Shape("strategy:N", sort=order),
                    tooltip=["strategy", "request", "size", "ran at", alt.Tooltip(f"{field}:Q", format=".1f"),
                             alt.Tooltip("compile ms:Q", format=".1f"), alt.Tooltip("decision ms:Q", format=".1f")]))


def coinciding_note(requests: pd.DataFrame, field: str) -> str:
    """Which strategies' lines lie on one another in the chart of `field` ("" when none do): each keeps its
    dash and point shape, the caption says so."""
    series = {name: tuple(rows[field].round(3)) for name, rows in requests.groupby("strategy", sort=False)}
    same = [[a, b] for i, (a, va) in enumerate(series.items()) for b, vb in list(series.items())[i + 1:] if va == vb]
    if not same:
        return ""
    pairs = "; ".join(f"{a} and {b}" for a, b in same)
    return f"The same {field} request by request, so their lines lie on one another (each has its own dash): {pairs}."


def intro_text(play: Play) -> str:
    """The page's introduction, with the numbers of the play on screen."""
    title, symbol, sizes = play.title, play.symbol, play.sizes
    by = {cold.strategy: (cold, warm) for cold, warm in play.plays}
    static, gears, ranged, online = (by[s][0] for s in ge_core.DYNAMIC_STRATEGIES)
    warm_range = by["range"][1]
    return (
        "**What am I looking at?** A service gets requests whose shape changes: here "
        f"{len(sizes)} requests to {title} with `{symbol}` between {min(sizes)} and {max(sizes)} "
        f"({len(set(sizes))} distinct sizes). Compiling for a shape takes time, so the first request of a new "
        "shape can wait; the four ways GE copes with that trade compiles against latency.\n\n"
        f"- **Static**: a static graph is rebuilt whenever the shape changes: {static.compiles} compiles, "
        f"{static.compile_seconds:.2f} s of compiling.\n"
        f"- **Gears** (ATC's `--dynamic_dims`): {gears.compiles} models compiled before the first request; each "
        f"request is padded up to its gear, so the NPU computes more: {gears.mean_simulated_us:.1f} µs mean "
        f"simulated latency against {static.mean_simulated_us:.1f} µs at the exact shapes.\n"
        f"- **Range** (`1~N` dims): a compile per distinct shape on first use ({ranged.compiles}), kept in the "
        f"compile cache: a second start loaded {warm_range.cache_hits} and compiled {warm_range.compiles}.\n"
        f"- **Online fusion** (graph-autofusion): one compile for the whole range, then UB fusion and tiling "
        f"decided per new shape at run time ({online.decisions} decisions, {online.decision_seconds * 1e3:.0f} ms "
        f"in all). Flexible, but its graph keeps the shape arithmetic a static compile folds away: "
        f"{online.mean_simulated_us:.1f} µs mean simulated latency.\n\n"
        "Offline compiles are fast and stable on the shapes they know; online fusion is flexible on shapes it "
        "has never seen. The charts show every request; a spike is a request that compiled or decided."
    )
