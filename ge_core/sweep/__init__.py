"""Sweeps: many models x many CompileConfigs x hardware profiles on Dask distributed, one row per task.

    import ge_core
    rows = ge_core.sweep(["sample:mlp", "models/"], "O1,O3", hardware=["ascend910", "ascend310"],
                         workers=2, out="results.parquet")            # or scheduler="tcp://HOST:8786"
    ge_core.sweep.load_results("results.parquet")                       # the same rows, later
    ge_core.sweep.metrics_table(rows, "sample:mlp", "ascend910")        # the Compare page's table

plan.py crosses models, configs and hardware into Tasks; task.py runs one on a worker (in a forked child:
isolate.py); runner.py submits them to Dask and writes rows as they come (results.py); tables.py shapes
rows for the Compare page. `import ge_core` does not import this package (nor dask) until it is used.
"""

import sys
import types
from typing import Any

import pandas as pd

from ge_core.sweep.plan import ModelRef, NamedConfig, Task, named_configs, plan_tasks, read_configs
from ge_core.sweep.results import COLUMNS, STATUSES, ResultsStore, load_results, read_results
from ge_core.sweep.runner import Progress, SweepError, sweep
from ge_core.sweep.tables import (
    GraphTarget,
    filter_results,
    graph_target,
    grid_cells,
    metric_grid,
    metrics_table,
    pareto_points,
)
from ge_core.sweep.task import NUMERIC_TOLERANCE, execute_task, run_task

__all__ = ["COLUMNS", "NUMERIC_TOLERANCE", "STATUSES", "GraphTarget", "ModelRef", "NamedConfig", "Progress",
           "ResultsStore", "SweepError", "Task", "execute_task", "filter_results", "graph_target", "grid_cells",
           "load_results", "metric_grid", "metrics_table", "named_configs", "pareto_points", "plan_tasks",
           "read_configs", "read_results", "run_task", "sweep"]


class _CallableModule(types.ModuleType):
    """DESIGN's contract is the call `ge_core.sweep(models, configs, ...)`, and `ge_core.sweep` is also this
    package (load_results, metrics_table ...): once imported, Python binds the name to the module, so the
    module itself must be callable."""

    def __call__(self, *args: Any, **kwargs: Any) -> pd.DataFrame:
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
