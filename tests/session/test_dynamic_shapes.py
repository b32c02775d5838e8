"""Dynamic shapes three ways: gears compiled ahead, a compile per distinct shape of a range, and online
fusion (one compile, UB fusion and tiling decided per shape) whose outputs equal a static compile's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import ge_core
from ge_core.errors import ModelError, UsageError
from ge_core.samples import sample_bytes
from tests.session.conftest import RANGE, UNKNOWN, Feeds, static_outputs


def equal(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_gears_compile_one_model_each_at_build_and_a_run_uses_the_matching_one(
        encoder: ge_core.Graph, feeds: Callable[[int], Feeds]) -> None:
    session = ge_core.Session({"ge.inputShape": UNKNOWN, "ge.dynamicDims": "16,16;64,64;128,128"})
    session.add_graph(1, encoder)
    session.build_graph(1)
    assert session.stats(1)["compiles"] == 3
    for length in (64, 16, 64):
        outputs = session.run_graph(1, feeds(length))
        record = session.last_run(1)
        assert record is not None and record.model_shapes == {"hidden": (1, length, 64), "mask": (1, length)}
        assert equal(outputs, static_outputs(length, feeds(length)))
    assert session.stats(1)["compiles"] == 3  # no run compiled anything


def test_a_shape_outside_every_gear_is_refused_listing_the_gears(encoder: ge_core.Graph,
                                                                 feeds: Callable[[int], Feeds]) -> None:
    session = ge_core.Session({"ge.inputShape": UNKNOWN, "ge.dynamicDims": "16,16;64,64"})
    session.add_graph(1, encoder)
    with pytest.raises(UsageError) as err:
        session.run_graph(1, feeds(33))
    assert "hidden:1,33,64;mask:1,33 match no gear" in str(err.value)
    assert "hidden:1,16,64;mask:1,16; hidden:1,64,64;mask:1,64" in str(err.value)


def test_batch_gears_set_the_batch_dim_of_every_input() -> None:
    bert = ge_core.load_onnx(sample_bytes("bert_encoder_torch"))
    session = ge_core.Session({"ge.inputShape": "input_ids:-1,8;attention_mask:-1,8;token_type_ids:-1,8",
                               "ge.dynamicBatchSize": "1,2"})
    session.add_graph(1, bert)
    session.build_graph(1)
    ids = np.ones((2, 8), np.int64)
    outputs = session.run_graph(1, {"input_ids": ids, "attention_mask": ids, "token_type_ids": 0 * ids})
    assert all(v.shape[0] == 2 for v in outputs.values())
    assert session.stats(1)["compiles"] == 2
    with pytest.raises(UsageError, match="match no gear"):
        session.run_graph(1, {"input_ids": ids[:1].repeat(3, 0), "attention_mask": ids[:1].repeat(3, 0),
                              "token_type_ids": 0 * ids[:1].repeat(3, 0)})


def test_a_range_compiles_once_per_distinct_shape(encoder: ge_core.Graph, feeds: Callable[[int], Feeds]) -> None:
    session = ge_core.Session({"ge.inputShape": RANGE})
    session.add_graph(1, encoder)
    assert session.build_graph(1) == 0.0  # nothing known ahead
    lengths = [16, 40, 16, 300, 40, 16, 77]
    for length in lengths:
        assert equal(session.run_graph(1, feeds(length)), static_outputs(length, feeds(length)))
    stats = session.stats(1)
    assert (stats["compiles"], stats["runs"]) == (len(set(lengths)), len(lengths))


def test_a_shape_outside_the_range_is_refused_naming_the_dim(encoder: ge_core.Graph,
                                                             feeds: Callable[[int], Feeds]) -> None:
    session = ge_core.Session({"ge.inputShape": "hidden:1,8~64,64;mask:1,8~64"})
    session.add_graph(1, encoder)
    with pytest.raises(UsageError, match="'hidden' has 65 at axis 1, outside 8~64"):
        session.run_graph(1, feeds(65))


def test_a_second_session_with_the_same_cache_loads_instead_of_compiling(
        encoder: ge_core.Graph, feeds: Callable[[int], Feeds], tmp_path: Path) -> None:
    options = {"ge.inputShape": RANGE, "ge.graph_compiler_cache_dir": str(tmp_path)}
    for expected_hits in (0, 2):
        session = ge_core.Session(options)
        session.add_graph(1, encoder)
        for length in (20, 30):
            session.run_graph(1, feeds(length))
        stats = session.stats(1)
        assert (stats["cache_hits"], stats["compiles"]) == (expected_hits, 2 - expected_hits)


def test_online_fusion_compiles_once_and_decides_each_new_shape(encoder: ge_core.Graph,
                                                                 feeds: Callable[[int], Feeds]) -> None:
    session = ge_core.Session({"ge.inputShape": RANGE, "ge.fusionMode": "online", "ge.socVersion": "Ascend910",
                               "ge.exec.precision_mode": "force_fp32"})  # exact: the static compile's numbers
    session.add_graph(1, encoder)
    session.build_graph(1)
    lengths = [16, 200, 16, 512, 200, 33]
    for length in lengths:
        outputs = session.run_graph(1, feeds(length))
        assert equal(outputs, static_outputs(length, feeds(length), hardware="ascend910"))
        record = session.last_run(1)
        assert record is not None and record.simulated_us is not None and record.simulated_us > 0
    stats = session.stats(1)
    assert stats["compiles"] == 1
    assert stats["decisions"] == len(set(lengths)) and stats["decision_seconds"] > 0


def test_online_decisions_fuse_what_the_range_compile_could_not(encoder: ge_core.Graph,
                                                                 feeds: Callable[[int], Feeds]) -> None:
    """UB fusion needs sizes: the range compile fuses no UB group, each decided shape does."""
    from ge_core.session.online import decide, range_config
    from ge_core.session.shapes import parse_shape_spec, reshape_inputs

    config = ge_core.CompileConfig(hardware="ascend910")
    range_model = ge_core.compile(reshape_inputs(encoder, parse_shape_spec(RANGE)), range_config(config))
    assert "UbFused" not in {n.op_type for n in range_model.graph.nodes}
    decided = decide(range_model, {"hidden": (1, 48, 64), "mask": (1, 48)}, config)
    assert "UbFused" in {n.op_type for n in decided.graph.nodes}
    assert decided.memory is not None and decided.report["tiling"]


def test_a_shape_the_model_cannot_take_is_refused_naming_the_node() -> None:
    bert = ge_core.load_onnx(sample_bytes("bert_encoder_torch"))
    session = ge_core.Session({"ge.inputShape": "input_ids:1,1~512;attention_mask:1,1~512;token_type_ids:1,1~512"})
    session.add_graph(1, bert)
    ids = np.ones((1, 200), np.int64)
    with pytest.raises(ModelError, match="cannot broadcast"):
        session.run_graph(1, {"input_ids": ids, "attention_mask": ids, "token_type_ids": 0 * ids})


def test_warm_up_readies_every_gear_so_the_first_request_compiles_nothing(
        encoder: ge_core.Graph, feeds: Callable[[int], Feeds]) -> None:
    session = ge_core.Session({"ge.inputShape": UNKNOWN, "ge.dynamicDims": "16,16;32,32"})
    session.add_graph(1, encoder)
    warmed = session.warm_up(1)
    assert warmed == [{"hidden": (1, 16, 64), "mask": (1, 16)}, {"hidden": (1, 32, 64), "mask": (1, 32)}]
    assert session.stats(1)["runs"] == 2
    session.run_graph(1, feeds(32))
    record = session.last_run(1)
    assert record is not None and record.compile_seconds == 0.0


def test_warm_up_of_a_range_compiles_the_shapes_given(encoder: ge_core.Graph, feeds: Callable[[int], Feeds]) -> None:
    session = ge_core.Session({"ge.inputShape": UNKNOWN})
    session.add_graph(1, encoder)
    with pytest.raises(UsageError, match="warm_up needs shapes"):
        session.warm_up(1)
    session.warm_up(1, shapes=[{"hidden": (1, 50, 64), "mask": (1, 50)}])
    compiles = session.stats(1)["compiles"]
    session.run_graph(1, feeds(50))
    assert session.stats(1)["compiles"] == compiles == 1


def test_save_writes_every_gear_into_one_offline_model(encoder: ge_core.Graph, feeds: Callable[[int], Feeds],
                                                        tmp_path: Path) -> None:
    session = ge_core.Session({"ge.inputShape": UNKNOWN, "ge.dynamicDims": "16,16;64,64"})
    session.add_graph(1, encoder)
    path = session.save(1, tmp_path / "m.gem")  # builds the gears first
    assert session.stats(1)["compiles"] == 2
    loaded = ge_core.GearedModel.load(path)
    assert [m.config.input_shapes for m in loaded.models] == ["hidden:1,16,64;mask:1,16", "hidden:1,64,64;mask:1,64"]
    assert equal(loaded.run(feeds(64)), session.run_graph(1, feeds(64)))


def test_save_writes_a_static_graph_as_one_model_and_refuses_a_range(encoder: ge_core.Graph,
                                                                     tmp_path: Path) -> None:
    static = ge_core.Session({"ge.inputShape": "hidden:1,24,64;mask:1,24"})
    static.add_graph(1, encoder)
    assert ge_core.load_compiled(static.save(1, tmp_path / "s.gem")).config.input_shapes == "hidden:1,24,64;mask:1,24"
    ranged = ge_core.Session({"ge.inputShape": RANGE, "ge.fusionMode": "online"})
    ranged.add_graph(1, encoder)
    with pytest.raises(UsageError, match="no model to save ahead"):
        ranged.save(1, tmp_path / "r.gem")
    assert ranged.stats(1)["compiles"] == 0  # refused before compiling anything
