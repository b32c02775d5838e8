"""Summary tables and number formats for the UI."""

from __future__ import annotations

from ge_core.frontend.summary import ModelSummary, TensorInfo
from ge_core.ops import REGISTRY
from ge_core.viz import format_bytes, format_count, op_table, tensor_table


def summary(histogram: dict[str, int], unsupported: dict[str, list[str]] | None = None) -> ModelSummary:
    return ModelSummary("m", "", {"": 17}, [], [], sum(histogram.values()), histogram, 0, 0,
                        unsupported or {})


def test_tensor_table_keeps_symbolic_dims_and_marks_unknown() -> None:
    frame = tensor_table([TensorInfo("x", "float32", ["batch", "64"]), TensorInfo("y", "undefined", [])])
    assert frame.to_dict("records") == [
        {"name": "x", "dtype": "float32", "dims": "[batch, 64]"},
        {"name": "y", "dtype": "?", "dims": "? (not inferred)"},
    ]
    assert list(tensor_table([]).columns) == ["name", "dtype", "dims"]


def test_op_table_sorted_by_count_with_categories() -> None:
    frame = op_table(summary({"Relu": 2, "Add": 2, "FancyOp": 5}, {"com.example::FancyOp": ["f"]}))
    assert list(frame["op"]) == ["FancyOp", "Add", "Relu"]
    relu = REGISTRY.get("Relu")
    assert relu is not None
    categories = dict(zip(frame["op"], frame["category"], strict=True))
    assert categories["FancyOp"] == "unsupported"
    assert categories["Relu"] == relu.category.value


def test_formats() -> None:
    assert [format_count(n) for n in (7, 1234, 5_600_000, 3_000_000_000)] == ["7", "1.2 k", "5.6 M", "3.0 G"]
    assert [format_bytes(n) for n in (0, 1536, 3 << 20, 5 << 30)] == ["0 B", "1.5 KiB", "3.0 MiB", "5.0 GiB"]
