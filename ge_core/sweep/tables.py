"""A sweep's results as the Compare page's tables: one model's configurations side by side (the columns
and deltas of ge_core.viz.compare's metrics table), a model x config grid of one metric (a heat map, also
in long form for its marks), the rows a filter keeps, latency against arena bytes with the Pareto front,
and what the Graph page needs to open one row."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ge_core.config import CompileConfig
from ge_core.errors import UsageError, quote
from ge_core.sweep.plan import SAMPLE_PREFIX
from ge_core.viz.compare import METRICS


def metrics_table(results: pd.DataFrame, model: str, hardware: str | None = None) -> pd.DataFrame:
    """One row per configuration of `model` (on `hardware`, or every hardware when None) with the Compare
    page's metrics and `<metric>_delta` against the first configuration on the same hardware."""
    rows = results[results["model"] == model]
    if hardware is not None:
        rows = rows[rows["hardware"] == hardware]
    if rows.empty:
        known = sorted(results["model"].unique()) if hardware is None else \
            sorted(results[results["hardware"] == hardware]["model"].unique())
        raise UsageError(f"the sweep has no rows for model {quote(model)}"
                         + (f" on {quote(hardware)}." if hardware is not None else "."),
                         hint=f"Its models: {', '.join(known) or 'none'}.")
    table = rows[["config_name", "config_key", "hardware", "status", "error", *METRICS]].reset_index(drop=True)
    table = table.rename(columns={"config_name": "config", "config_key": "key"})
    for metric in METRICS:
        first = table.groupby("hardware", sort=False)[metric].transform("first").astype("Float64")
        table[f"{metric}_delta"] = table[metric].astype("Float64") - first
    return table


def metric_grid(results: pd.DataFrame, metric: str, hardware: str | None = None) -> pd.DataFrame:
    """Models (rows) x configurations (columns) of one metric, in sweep order; a cell without an "ok" row
    is empty. With several hardware profiles and none chosen, the columns are "config @ hardware"."""
    if metric not in METRICS:
        raise UsageError(f"unknown sweep metric {quote(metric)}.", hint=f"Known metrics: {', '.join(METRICS)}.")
    every = results if hardware is None else results[results["hardware"] == hardware]
    several = hardware is None and results["hardware"].nunique() > 1
    every = every.assign(column=every["config_name"] + " @ " + every["hardware"] if several else every["config_name"])
    ok = every[every["status"] == "ok"]
    grid = ok.pivot_table(index="model", columns="column", values=metric, aggfunc="first", sort=False)
    grid = grid.reindex(index=every["model"].unique(), columns=every["column"].unique())
    grid.index.name, grid.columns.name = "model", None
    return grid.astype("Float64")


def filter_results(results: pd.DataFrame, *, statuses: Collection[str] | None = None,
                   models: Collection[str] | None = None, configs: Collection[str] | None = None,
                   hardware: Collection[str] | None = None) -> pd.DataFrame:
    """The rows whose status, model, config name and hardware are among those given (None: any)."""
    keep = pd.Series(True, index=results.index)
    for column, wanted in (("status", statuses), ("model", models), ("config_name", configs),
                           ("hardware", hardware)):
        if wanted is not None:
            keep &= results[column].isin(list(wanted))
    return results[keep].reset_index(drop=True)


def grid_cells(results: pd.DataFrame, metric: str, hardware: str | None = None) -> pd.DataFrame:
    """metric_grid in long form, one row per (model, column) in grid order: `value` (missing without an "ok"
    row), the `config_name` and `hardware` the cell stands for (what a click opens), and the cell's
    `status` (`ok` when any of its rows is, else its first row's) with that row's `error`."""
    grid = metric_grid(results, metric, hardware)
    every = results if hardware is None else results[results["hardware"] == hardware]
    several = hardware is None and results["hardware"].nunique() > 1
    every = every.assign(column=every["config_name"] + " @ " + every["hardware"] if several else every["config_name"],
                         ok=every["status"] == "ok")
    first = every.sort_values("ok", ascending=False, kind="stable").drop_duplicates(["model", "column"])
    cells = grid.reset_index().melt(id_vars="model", var_name="column", value_name="value")
    cells = cells.merge(first[["model", "column", "config_name", "hardware", "status", "error"]],
                        on=["model", "column"], how="left")
    return cells.astype({"value": "Float64"})


def pareto_points(results: pd.DataFrame, model: str | None = None) -> pd.DataFrame:
    """Simulated latency against arena bytes, one point per "ok" (config, hardware) with both numbers: of
    `model`, or (None) aggregated over models as the geometric mean of the models that have every point
    (so each point averages the same models). `on_front` marks the points no other point beats on both."""
    ok = results[(results["status"] == "ok") & results["simulated_us"].notna() & results["arena_bytes"].notna()]
    columns = ["config_name", "hardware", "simulated_us", "arena_bytes"]
    if model is not None:
        points = ok[ok["model"] == model][columns].astype({"arena_bytes": "float64"}).assign(models=1)
    else:
        per_model = {m: set(zip(g["config_name"], g["hardware"], strict=True)) for m, g in ok.groupby("model")}
        every = set().union(*per_model.values())
        common = [m for m, have in per_model.items() if have == every]
        shared = ok[ok["model"].isin(common)].astype({"arena_bytes": "float64"})
        points = shared.groupby(["config_name", "hardware"], sort=False).agg(
            simulated_us=("simulated_us", _geomean), arena_bytes=("arena_bytes", _geomean),
            models=("model", "nunique")).reset_index()
    points = points.reset_index(drop=True)
    return points.assign(on_front=_front(points))


def _geomean(values: pd.Series) -> float:
    return float(np.exp(np.log(values.astype("float64")).mean()))


def _front(points: pd.DataFrame) -> list[bool]:
    """Not dominated: no other point is at most as slow and as large, and better in one of them."""
    pairs = list(zip(points["simulated_us"], points["arena_bytes"], strict=True))
    return [not any(u <= us and b <= bytes_ and (u < us or b < bytes_) for u, b in pairs) for us, bytes_ in pairs]


@dataclass(frozen=True)
class GraphTarget:
    """What the Graph page needs to open one sweep row: the sample (None for a model that is a file path,
    which must be uploaded), the sidebar's opt level, passes switched off and hardware ("" for none), and in
    words each setting of the row's config the sidebar does not take."""

    model: str
    sample: str | None
    opt_level: str
    disabled_passes: tuple[str, ...]
    hardware: str
    not_applied: tuple[str, ...]


def graph_target(results: pd.DataFrame, model: str, config_name: str, hardware: str) -> GraphTarget:
    """The Graph page's settings for the row of (model, config name, hardware)."""
    found = results[(results["model"] == model) & (results["config_name"] == config_name)
                    & (results["hardware"] == hardware)]
    if found.empty:
        raise UsageError(f"the sweep has no row for model {quote(model)}, config {quote(config_name)} on "
                         f"{quote(hardware or 'no hardware')}.")
    config = CompileConfig.from_json(str(found.iloc[0]["config"]))
    default = CompileConfig()
    not_applied = []
    if config.pipeline is not None:
        not_applied.append(f"its own pass pipeline ({', '.join(config.pipeline)})")
    if config.precision_mode != default.precision_mode:
        not_applied.append(f"precision mode {quote(config.precision_mode)}")
    if config.memory != default.memory:
        not_applied.append(f"memory settings {config.memory.to_json()}")
    sample = model.removeprefix(SAMPLE_PREFIX) if model.startswith(SAMPLE_PREFIX) else None
    return GraphTarget(model, sample, str(config.opt_level), tuple(sorted(config.disabled_passes)), hardware,
                       tuple(not_applied))
