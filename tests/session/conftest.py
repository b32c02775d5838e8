"""A BERT-style encoder layer whose sequence length is symbolic, and feeds for it at any length."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import ge_core
from ge_core.samples import sample_bytes

RANGE = "hidden:1,1~512,64;mask:1,1~512"
UNKNOWN = "hidden:1,-1,64;mask:1,-1"
Feeds = dict[str, np.ndarray]


@pytest.fixture(scope="session")
def encoder() -> ge_core.Graph:
    return ge_core.load_onnx(sample_bytes("transformer_encoder"))


def encoder_feeds(length: int, seed: int = 0) -> Feeds:
    rng = np.random.default_rng(seed)
    return {"hidden": rng.standard_normal((1, length, 64)).astype(np.float32),
            "mask": (rng.random((1, length)) > 0.2).astype(np.float32)}


@pytest.fixture
def feeds() -> Callable[[int], Feeds]:
    return encoder_feeds


def static_outputs(length: int, feeds: Feeds, **options: object) -> dict[str, np.ndarray]:
    """What a static compile of the encoder at `length` gives (the oracle of every strategy)."""
    graph = ge_core.load_onnx(sample_bytes("transformer_encoder"), f"hidden:1,{length},64;mask:1,{length}")
    return ge_core.compile(graph, ge_core.CompileConfig(opt_level="O3", **options)).run(feeds)  # type: ignore[arg-type]
