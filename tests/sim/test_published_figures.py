"""The simulator stays near published Ascend figures (bench/bench_fidelity.py has them all; docs/fidelity.md the
table): the rows whose model onnx's light models hold, simulated with no flags on the default profiles."""

from __future__ import annotations

import math

import pytest

import ge_core
from bench.fidelity_figures import FIGURES
from ge_core.samples.registry import sample_bytes

LIGHT = {"resnet50": "resnet50", "densenet121": "densenet121", "googlenet": "inception_v1", "vgg19": "vgg19"}
ROWS = [f for f in FIGURES if f.batch == 1 and f.model in LIGHT]


@pytest.fixture(scope="module")
def ratios() -> dict[str, float]:
    out = {}
    for figure in ROWS:
        compiled = ge_core.compile(sample_bytes(LIGHT[figure.model]), opt_level="O3", hardware=figure.profile)
        out[figure.key] = ge_core.simulate(compiled, run=False).total_us / figure.latency_us
    return out


def test_the_rows_cover_both_chips() -> None:
    assert len(ROWS) >= 5 and {f.profile for f in ROWS} == {"ascend310", "ascend310p"}


@pytest.mark.parametrize("key", [f.key for f in ROWS])
def test_every_batch1_latency_is_within_2x_of_the_published_one(key: str, ratios: dict[str, float]) -> None:
    assert 0.5 <= ratios[key] <= 2.0


def test_the_geomean_error_is_within_1_5x(ratios: dict[str, float]) -> None:
    mean = sum(abs(math.log(r)) for r in ratios.values()) / len(ratios)
    assert mean <= math.log(1.5)
