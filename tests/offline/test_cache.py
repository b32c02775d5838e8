"""The compile cache: a second compile is a hit with the same outputs and snapshots; anything that changes
the compile misses; a bad or mislabelled entry is dropped, never trusted; two processes can share it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import ge_core
from ge_core import compiler
from ge_core.config import CompileConfig
from ge_core.offline import cache as cache_module
from ge_core.offline.cache import CompileCache, Costs
from ge_core.samples import sample_bytes

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache(tmp_path: Path) -> CompileCache:
    return CompileCache(tmp_path / "cache")


def test_the_second_compile_is_a_hit_with_equal_outputs_and_snapshots(cache: CompileCache) -> None:
    first = ge_core.compile(sample_bytes("residual_block"), cache=cache)
    second = ge_core.compile(sample_bytes("residual_block"), cache=cache)
    assert first.report["cache"]["hit"] is False and second.report["cache"]["hit"] is True
    assert first.report["cache"]["key"] == second.report["cache"]["key"]
    assert second.report["cache"]["load_seconds"] > 0
    feeds = ge_core.random_feeds(first.input_graph, seed=1)
    a, b = first.run(feeds), second.run(feeds)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert [r.snapshot.to_text() for r in second.records if r.snapshot is not None] == \
           [r.snapshot.to_text() for r in first.records if r.snapshot is not None]


@pytest.mark.parametrize("change", ["config", "hardware", "model"])
def test_anything_that_changes_the_compile_misses(cache: CompileCache, change: str) -> None:
    ge_core.compile(sample_bytes("conv_bn_relu"), cache=cache)
    if change == "model":
        again = ge_core.compile(sample_bytes("residual_block"), cache=cache)
    else:
        options = {"opt_level": "O1"} if change == "config" else {"hardware": "ascend310"}
        again = ge_core.compile(sample_bytes("conv_bn_relu"), CompileConfig(**options), cache=cache)  # type: ignore[arg-type]
    assert again.report["cache"]["hit"] is False


def test_a_corrupted_entry_is_dropped_and_compiled_again(cache: CompileCache) -> None:
    key = ge_core.compile(sample_bytes("conv_bn_relu"), cache=cache).report["cache"]["key"]
    entry = cache.path(key)
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0xFF
    entry.write_bytes(bytes(data))
    again = ge_core.compile(sample_bytes("conv_bn_relu"), cache=cache)
    assert again.report["cache"]["hit"] is False and cache.path(key).is_file()  # rewritten whole
    assert ge_core.compile(sample_bytes("conv_bn_relu"), cache=cache).report["cache"]["hit"] is True


def test_an_entry_holds_the_compiled_weights_not_the_models_again(cache: CompileCache) -> None:
    """The caller's graph holds the model's own constants (the key pins its content): the entry names them."""
    graph = ge_core.load_onnx(sample_bytes("resnet50"))
    weights = sum(a.nbytes for a in graph.constants.values())
    key = ge_core.compile(graph, cache=cache).report["cache"]["key"]
    assert cache.path(key).stat().st_size < 1.5 * weights  # the folded weights, once; not the originals too
    assert cache.get(key, source=graph) is not None
    assert cache.get(key) is None  # without the model it cannot be read (and is not trusted)


def test_an_entry_under_another_key_is_not_trusted(cache: CompileCache) -> None:
    a = ge_core.compile(sample_bytes("conv_bn_relu"), cache=cache).report["cache"]["key"]
    b = ge_core.compile(sample_bytes("mlp"), input_shapes="x:2,64", cache=cache).report["cache"]["key"]
    os.replace(cache.path(a), cache.path(b))  # conv_bn_relu's entry now answers to mlp's key
    assert cache.get(b) is None and not cache.path(b).exists()


def test_the_least_recently_used_entries_are_evicted(tmp_path: Path) -> None:
    small = CompileCache(tmp_path / "cache", max_bytes=1)  # room for nothing but the newest
    ge_core.compile(sample_bytes("conv_bn_relu"), cache=small)
    ge_core.compile(sample_bytes("residual_block"), cache=small)
    assert len(list(small.folder.glob("*.gem"))) <= 1


def test_two_processes_compiling_the_same_model_at_once_both_succeed(tmp_path: Path) -> None:
    code = ("import sys, ge_core\nfrom ge_core.offline.cache import CompileCache\nfrom ge_core.samples import "
            "sample_bytes\nc = ge_core.compile(sample_bytes('densenet121'), cache=CompileCache(sys.argv[1]))\n"
            "print(c.report['cache']['key'], c.plan.kernels)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "cache")], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    results = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in results]
    assert results[0][0] == results[1][0]
    again = ge_core.compile(sample_bytes("densenet121"), cache=CompileCache(tmp_path / "cache"))
    assert again.report["cache"] == {**again.report["cache"], "hit": True, "key": results[0][0].split()[0]}
    assert not list((tmp_path / "cache").glob(".*partial"))


def test_a_hit_rebuilds_the_pass_snapshots_only_when_asked(cache: CompileCache) -> None:
    first = ge_core.compile(sample_bytes("conv_bn_relu"), cache=cache)
    with_them = ge_core.compile(sample_bytes("conv_bn_relu"), cache=cache)
    cache.snapshots = False
    without = ge_core.compile(sample_bytes("conv_bn_relu"), cache=cache)
    assert with_them.report["cache"]["hit"] and without.report["cache"]["hit"]
    assert [r.snapshot is not None for r in with_them.records] == [r.snapshot is not None for r in first.records]
    assert any(r.snapshot is not None for r in first.records) and all(r.snapshot is None for r in without.records)
    assert str(with_them.records[-1].snapshot) == str(first.records[-1].snapshot)
    assert without.report["passes"] == with_them.report["passes"]  # the records themselves are all there


@pytest.fixture
def judging(tmp_path: Path) -> CompileCache:
    return CompileCache(tmp_path / "judged", snapshots=False, keep_all=False)


def _hits_pay(monkeypatch: pytest.MonkeyPatch, pays: bool) -> None:
    """Every hit judged to pay, or none: what the tests check must not hang on timings."""
    monkeypatch.setattr(cache_module, "PAYS_BELOW", 1e9 if pays else 0.0)


@pytest.mark.parametrize("source", ["graph", "bytes"])
def test_an_entry_that_does_not_pay_is_not_kept_nor_its_weights_hashed_again(
        judging: CompileCache, monkeypatch: pytest.MonkeyPatch, source: str) -> None:
    _hits_pay(monkeypatch, False)
    model = sample_bytes("residual_block") if source == "bytes" else ge_core.load_onnx(sample_bytes("residual_block"))
    first = ge_core.compile(model, cache=judging)
    assert first.report["cache"]["kept"] is False and "to compile it" in first.report["cache"]["why"]
    assert not list(judging.folder.glob("*.gem")) and len(list(judging.folder.glob("*.cost"))) == 1
    monkeypatch.setattr(cache_module, "content_digest", lambda source: pytest.fail("the weights were hashed"))
    again = ge_core.compile(model, cache=judging)
    assert again.report["cache"] == {**first.report["cache"], "key": None}  # skipped, for the same reason
    assert again.graph.to_text() == first.graph.to_text()


def test_a_hit_on_onnx_bytes_skips_their_import(cache: CompileCache, monkeypatch: pytest.MonkeyPatch) -> None:
    first = ge_core.compile(sample_bytes("residual_block"), cache=cache)
    monkeypatch.setattr(compiler, "load_onnx", lambda *args: pytest.fail("the model was imported"))
    again = ge_core.compile(sample_bytes("residual_block"), cache=cache)
    assert again.report["cache"]["hit"] is True
    assert again.input_graph.to_text() == first.input_graph.to_text()
    assert again.graph.to_text() == first.graph.to_text()


def test_an_entry_that_pays_is_kept_and_hit(judging: CompileCache, monkeypatch: pytest.MonkeyPatch) -> None:
    _hits_pay(monkeypatch, True)
    first = ge_core.compile(sample_bytes("residual_block"), cache=judging)
    again = ge_core.compile(sample_bytes("residual_block"), cache=judging)
    assert first.report["cache"]["kept"] is True and "why" not in first.report["cache"]
    assert again.report["cache"]["hit"] is True and again.report["cache"]["key"] == first.report["cache"]["key"]


def test_models_differing_only_in_weights_share_a_verdict(judging: CompileCache,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    _hits_pay(monkeypatch, False)
    graph = ge_core.load_onnx(sample_bytes("residual_block"))
    ge_core.compile(graph, cache=judging)
    other = graph.copy()
    name, weights = next(iter(other.constants.items()))
    other.constants[name] = weights + 1
    assert ge_core.compile(other, cache=judging).report["cache"]["key"] is None  # judged already: not looked up


def test_a_hit_in_another_mode_is_judged_on_that_hit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI stores without loading snapshots; the web page's first hit, which loads them, is timed and
    judged (here: it does not pay), so its next compile skips the cache while the CLI's still hits."""
    _hits_pay(monkeypatch, True)
    plain = CompileCache(tmp_path, snapshots=False, keep_all=False)
    ge_core.compile(sample_bytes("residual_block"), cache=plain)
    _hits_pay(monkeypatch, False)
    page = CompileCache(tmp_path, snapshots=True, keep_all=False)
    first = ge_core.compile(sample_bytes("residual_block"), cache=page)
    assert first.report["cache"]["hit"] is True and any(r.snapshot is not None for r in first.records)
    assert ge_core.compile(sample_bytes("residual_block"), cache=page).report["cache"]["key"] is None
    _hits_pay(monkeypatch, True)
    assert ge_core.compile(sample_bytes("residual_block"), cache=plain).report["cache"]["hit"] is True


def test_a_hit_reads_neither_the_snapshots_nor_the_imported_graph_it_does_not_need(cache: CompileCache) -> None:
    """The entry names the imported graph (the key pins it) and keeps the snapshots apart: a load without
    them reads neither, so a broken snapshot member only fails a load that wants it."""
    graph = ge_core.load_onnx(sample_bytes("residual_block"))
    key = ge_core.compile(graph, cache=cache).report["cache"]["key"]
    with zipfile.ZipFile(cache.path(key)) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    assert json.loads(members["model.json"])["input_graph"] == "known"
    members["snapshots.json"] = members["snapshots.json"][:-1] + b" "
    with zipfile.ZipFile(cache.path(key), "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    cache.snapshots = False
    assert ge_core.compile(graph, cache=cache).report["cache"]["hit"] is True
    cache.snapshots = True
    assert ge_core.compile(graph, cache=cache).report["cache"]["hit"] is False


def test_a_hit_slower_than_judged_turns_the_verdict() -> None:
    costs = Costs(compile_seconds=1.0, key_seconds=0.1, load_seconds={"no_snapshots": 0.2})
    assert costs.add_hit("no_snapshots", 0.8) is False and costs.load_seconds["no_snapshots"] == 0.2  # not slower
    assert costs.add_hit("no_snapshots", 2.0) is True and costs.pays("no_snapshots") is False  # averaged: 1.1
    assert costs.add_hit("snapshots", 0.3) is True and costs.pays("snapshots") is True  # a first hit in a mode
