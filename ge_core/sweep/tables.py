"""A sweep's results as the Compare page's tables: one model's configurations side by side (the columns
and deltas of ge_core.viz.compare's metrics table), and a model x config grid of one metric (a heat map)."""

from __future__ import annotations

import pandas as pd

from ge_core.errors import UsageError, quote
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
