"""Playing requests through the strategies (the bench's and the page's engine)."""

from __future__ import annotations

import pytest

import ge_core
from ge_core.errors import UsageError
from ge_core.session import DynamicAxis, default_gears, play, request_sizes

CONFIG = ge_core.CompileConfig(hardware="ascend910")


def test_request_sizes_are_seeded_and_drawn_from_the_distinct_pool() -> None:
    sizes = request_sizes(40, 16, 512, seed=3, distinct=5)
    assert sizes == request_sizes(40, 16, 512, seed=3, distinct=5)
    assert len(set(sizes)) <= 5 and all(16 <= s <= 512 for s in sizes)
    assert default_gears(16, 100) == [16, 32, 64, 100]


def test_the_axis_names_the_varying_dims_and_fixes_the_rest(encoder: ge_core.Graph) -> None:
    axis = DynamicAxis.of_graph(encoder, "seq")
    assert axis.shapes(40) == {"hidden": (1, 40, 64), "mask": (1, 40)}
    assert axis.spec() == "hidden:1,-1,64;mask:1,-1"
    assert axis.spec(16, 512) == "hidden:1,16~512,64;mask:1,16~512"
    assert axis.gear_dims([16, 32]) == "16,16;32,32"
    with pytest.raises(UsageError, match=r"'batch' is not a symbolic dim.*seq"):
        DynamicAxis.of_graph(encoder, "batch")


def test_each_strategy_counts_what_it_compiled(encoder: ge_core.Graph) -> None:
    axis = DynamicAxis.of_graph(encoder, "seq")
    sizes = [20, 40, 20, 33]
    static = play(encoder, axis, sizes, "static", CONFIG)
    assert static.compiles == 4  # every change of length rebuilds the static graph
    gears = play(encoder, axis, sizes, "gears", CONFIG, low=16, high=64)
    assert gears.compiles == 3 and [r.model_size for r in gears.requests] == [32, 64, 32, 64]
    ranged = play(encoder, axis, sizes, "range", CONFIG)
    assert ranged.compiles == 3 and ranged.requests[2].compile_seconds == 0
    online = play(encoder, axis, sizes, "online", CONFIG)
    assert (online.compiles, online.decisions) == (1, 3)
    assert all(r.simulated_us > 0 for p in (static, gears, ranged, online) for r in p.requests)
    assert gears.mean_simulated_us > ranged.mean_simulated_us  # padding costs NPU time
