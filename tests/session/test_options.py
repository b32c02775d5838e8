"""Session options: GE's names mapped onto CompileConfig; unknown names and bad values refused clearly."""

from __future__ import annotations

import pytest

import ge_core
from ge_core.errors import UsageError
from ge_core.session import KNOWN_OPTIONS, SessionOptions


def test_ge_options_map_onto_one_compile_config() -> None:
    options = SessionOptions.parse({"ge.oo.level": "O1", "ge.exec.disableReuseMemory": "1",
                                    "ge.exec.precision_mode": "allow_fp32_to_fp16", "ge.socVersion": "Ascend910B3"})
    assert options.config == ge_core.CompileConfig(opt_level="O1", precision_mode="allow_fp32_to_fp16",
                                                   hardware="ascend910b", memory=ge_core.MemoryConfig(reuse=False))
    assert options.fusion_mode == "offline" and options.gears == ()


def test_an_unknown_option_is_refused_listing_every_known_one() -> None:
    with pytest.raises(UsageError) as err:
        ge_core.Session({"ge.oo.levle": "O3"})
    text = str(err.value)
    assert "'ge.oo.levle'" in text
    assert all(name in text for name in KNOWN_OPTIONS)


@pytest.mark.parametrize(("options", "named"), [
    ({"ge.oo.level": "O7"}, "ge.oo.level"),
    ({"ge.socVersion": "Ascend999"}, "ge.socVersion"),
    ({"ge.exec.precision_mode": "fp8"}, "ge.exec.precision_mode"),
    ({"ge.exec.disableReuseMemory": "maybe"}, "ge.exec.disableReuseMemory"),
    ({"ge.fusionMode": "sometimes"}, "ge.fusionMode"),
    ({"ge.inputShape": "x:1,abc"}, "ge.inputShape"),
    ({"ge.inputShape": "x:1,9~3"}, "ge.inputShape"),
    ({"ge.inputShape": "x:1,-1", "ge.dynamicDims": "16,16;32,32"}, "ge.dynamicDims"),
    ({"ge.inputShape": "x:1,16", "ge.dynamicDims": "16"}, "ge.dynamicDims"),
    ({"ge.dynamicBatchSize": "1,2"}, "ge.dynamicBatchSize"),
    ({"ge.inputShape": "x:-1,3", "ge.dynamicBatchSize": "1,0"}, "ge.dynamicBatchSize"),
    ({"ge.inputShape": "x:-1,3", "ge.dynamicBatchSize": "1,2", "ge.dynamicDims": "1;2"}, "ge.dynamicDims"),
    ({"ge.inputShape": "x:-1,3", "ge.dynamicBatchSize": "1,2", "ge.fusionMode": "online"}, "online"),
])
def test_a_bad_value_is_refused_naming_its_option(options: dict[str, str], named: str) -> None:
    with pytest.raises(UsageError, match=named):
        ge_core.Session(options)


def test_gears_fill_the_unknown_dims_in_order() -> None:
    options = SessionOptions.parse({"ge.inputShape": "a:1,-1;b:-1,4", "ge.dynamicDims": "16,2;64,8"})
    assert options.gears == ({"a": (1, 16), "b": (2, 4)}, {"a": (1, 64), "b": (8, 4)})
    batch = SessionOptions.parse({"ge.inputShape": "a:-1,3;b:-1", "ge.dynamicBatchSize": "1,4"})
    assert batch.gears == ({"a": (1, 3), "b": (1,)}, {"a": (4, 3), "b": (4,)})
    assert (options.gear_option, batch.gear_option) == ("dynamic_dims", "dynamic_batch_size")  # ATC's names
