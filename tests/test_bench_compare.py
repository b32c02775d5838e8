"""bench/compare_versions.py reads bench_executor.py's report: the O3 geomean and each model's O3 ratio."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

REPORT = """\
onnx 1.23.2, onnxruntime 1.32.0, numpy 2.4.6; numpy BLAS: OpenBLAS SkylakeX kernels, 2 threads; ORT threads 2
| model | nodes (O3) | ONNX Runtime ms | ge_core ms | ratio | ge_core O3 ms | O3 ratio | max rel. error |
|---|---:|---:|---:|---:|---:|---:|---:|
| squeezenet | 66 (39) | 2.82 | 7.02 | 2.51x | 6.11 | 2.06x | 1.4e-06 |
| bert_encoder_torch | 199 (41) | 0.51 | 2.39 | 4.86x | 0.93 | 1.90x | 2.8e-07 |

as loaded: geomean ratio 3.49x (target <= 1.8x); models with ORT >= 5 ms over 2.5x: none
O3: geomean ratio 1.98x (target <= 1.8x); models with ORT >= 5 ms over 2.5x: none
"""


def _module() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "bench" / "compare_versions.py"
    spec = importlib.util.spec_from_file_location("compare_versions", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reads_the_o3_geomean_and_each_models_o3_ratio() -> None:
    geomean, ratios = _module().parse(REPORT)
    assert geomean == 1.98
    assert ratios == {"squeezenet": 2.06, "bert_encoder_torch": 1.90}


def test_a_report_without_a_geomean_is_refused_with_its_tail() -> None:
    with pytest.raises(ValueError, match="no O3 geomean"):
        _module().parse(REPORT.replace("O3: geomean", "O3 geomean"))
