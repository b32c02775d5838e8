"""The flags every verb shares, as argparse parent parsers, and what they build: the model source and ONE
CompileConfig (`config_from_args`), so no verb spells the configuration again.

    model_options()     MODEL, --input-shape, --debug                                   (every verb)
                        MODEL: an .onnx file, sample:NAME, a .gem (run/compile/profile; --gear picks
                        a gear of one compiled with gears), or
                        model.py:FUNCTION, a PyTorch model (this runs the file's code: trusted files only)
    compile_options()   --config, --opt-level, --fusion-switch-file, --verify, --hardware,
                        --precision-mode and the memory-planning switches               (run, compile, profile)
    add_tables_option() --tables DIR: the UI's tables as CSV files                      (compile)

A flag left out takes the --config file's value, else the verb's default (`run` compiles at O0, the others
at O3); a flag given overrides the file.
"""

from __future__ import annotations

import argparse
import sys
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ge_core.compiler import CompiledModel, load_gear
from ge_core.compiler import compile as ge_compile
from ge_core.config import PRECISION_MODES, CompileConfig
from ge_core.debugging.reproducer import REPRODUCER_KEYS
from ge_core.errors import UsageError, quote
from ge_core.frontend.ge.dump_files import import_ge_dump, looks_like_ge_dump
from ge_core.frontend.input_shapes import format_input_shapes
from ge_core.frontend.onnx import ImportResult, Source, import_onnx, load_onnx
from ge_core.frontend.torch.factory import graph_from_factory, is_factory_spec
from ge_core.ir.graph import Graph
from ge_core.memory.order import MEMORY_ORDERS
from ge_core.memory.planners import STRATEGIES
from ge_core.offline.cache import CompileCache
from ge_core.samples import get_sample, sample_bytes
from ge_core.samples.ge_dumps import dump_file_name


def model_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("model", help="an .onnx file, sample:NAME for a bundled sample, or model.py:FUNCTION for a "
                                      "PyTorch model (FUNCTION returns (module, example_inputs[, dynamic_shapes])). "
                                      "This runs the file's code: give trusted local files only")
    common.add_argument("--input-shape", "--input_shape", dest="input_shape", default="",
                        help='ATC-style shapes for symbolic dims: "x:1,3,640,640;mask:1,128"')
    common.add_argument("--debug", action="store_true", help="print tracebacks")
    return common


def compile_options() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("compile configuration")
    group.add_argument("--config", help="a CompileConfig JSON file (CompileConfig.to_json(), or a reproducer's "
                                        "config.json); flags given as well override it")
    group.add_argument("--opt-level", "--oo_level", dest="opt_level",
                       help="O0 (as imported), O1 (cleanups) or O3 (all passes); run defaults to O0, the rest to O3")
    group.add_argument("--fusion-switch-file", "--fusion_switch_file", dest="switch_file",
                       help="turn passes off by name: lines 'PassName:off', or GE's JSON switch file")
    group.add_argument("--verify", action="store_true", default=None, help="run graph.verify() after every pass")
    group.add_argument("--hardware", help="lower for this NPU (ascend310, ascend310p, ascend910, ascend910b or a "
                                          "profile .json): formats, TransData, tiling; profile and run --backend npu "
                                          "default to ascend910")
    group.add_argument("--precision-mode", "--precision_mode", dest="precision_mode",
                       help=f"ATC precision mode for the NPU: {', '.join(PRECISION_MODES)} (default: the "
                            "hardware profile's, ATC's force_fp16)")
    memory = parent.add_argument_group("memory planning")
    memory.add_argument("--disable-reuse-memory", "--disable_reuse_memory", dest="memory_reuse",
                        action="store_const", const=False,
                        help="give every activation its own bytes (ge.exec.disableReuseMemory)")
    memory.add_argument("--memory-strategy", dest="memory_strategy",
                        help=f"auto (smallest arena of all, default) or one of: {', '.join(STRATEGIES)}")
    memory.add_argument("--memory-alignment", dest="memory_alignment", type=int,
                        help="bytes every offset is aligned to (512)")
    memory.add_argument("--copy-concat", dest="memory_no_copy_concat", action="store_const", const=False,
                        help="make every Concat copy its inputs (no continuous-memory, no-task Concat)")
    memory.add_argument("--memory-order", dest="memory_order", choices=MEMORY_ORDERS,
                        help="graph (the order the passes left, default) or memory_aware (a topological order "
                             "with a lower peak, when one is found)")
    cache = parent.add_argument_group("compile cache")
    cache.add_argument("--cache-dir", help="keep compiled models here and load them instead of compiling again "
                                           "(default: GE_CACHE_DIR, else ~/.cache/ge_workbench)")
    cache.add_argument("--no-cache", action="store_true", help="compile without reading or writing the cache")
    return parent


def add_tables_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tables", metavar="DIR",
                        help="write the UI's tables as CSV files here: passes, fusion decisions and summary, the "
                             "memory timeline, rectangles and tensors alive at the peak, and with --hardware the "
                             "simulated per-op, per-unit and roofline tables")


GEM_SUFFIX = ".gem"
_MEMORY_FLAGS = {"memory_reuse": "reuse", "memory_strategy": "strategy", "memory_alignment": "alignment",
                 "memory_no_copy_concat": "no_copy_concat", "memory_order": "order"}
_CONFIG_FLAGS = ("opt_level", "verify", "hardware", "precision_mode")


def config_from_args(args: argparse.Namespace, *, default_opt_level: str = "O3",
                     default_hardware: str | None = None) -> CompileConfig:
    """The one CompileConfig the flags describe (see the module docstring for the precedence)."""
    if args.config:
        base = CompileConfig.from_file(args.config, ignore=REPRODUCER_KEYS)
    else:
        base = CompileConfig(opt_level=default_opt_level)
    given: dict[str, Any] = {f: getattr(args, f) for f in _CONFIG_FLAGS if getattr(args, f) is not None}
    if base.hardware is None and "hardware" not in given and default_hardware is not None:
        given["hardware"] = default_hardware
    memory = {field: getattr(args, flag) for flag, field in _MEMORY_FLAGS.items() if getattr(args, flag) is not None}
    shapes = input_shapes_of(args)
    if shapes:
        given["input_shapes"] = shapes
    config = replace(base, memory=replace(base.memory, **memory), **given) if memory else replace(base, **given)
    return CompileConfig.from_switch_file(args.switch_file, config) if args.switch_file else config


def compiled_from_args(args: argparse.Namespace, *, default_opt_level: str = "O3",
                       default_hardware: str | None = None) -> CompiledModel:
    """An offline model (MODEL ending in .gem) as it was saved, else MODEL compiled under the flags' config,
    through the compile cache unless --no-cache."""
    if str(args.model).endswith(GEM_SUFFIX) and not str(args.model).startswith("sample:"):
        given = [f"--{f.replace('_', '-')}" for f in (*_CONFIG_FLAGS, *_MEMORY_FLAGS, "config", "switch_file")
                 if getattr(args, f, None) is not None] + (["--input-shape"] if args.input_shape else [])
        if given:
            raise UsageError(f"{quote(args.model)} is an offline model, compiled already; {', '.join(given)} "
                             "cannot change it.", hint="Run it without compile options, or compile the .onnx again.")
        if not Path(args.model).is_file():
            raise UsageError(f"offline model {quote(args.model)} not found.")
        return _offline_model(args)
    if getattr(args, "gear", None) is not None:
        raise UsageError(f"--gear picks a gear of an offline model (.gem); {quote(args.model)} is not one.",
                         hint="Compile it with --dynamic-dims or --dynamic-batch-size and --output M.gem first.")
    config = config_from_args(args, default_opt_level=default_opt_level, default_hardware=default_hardware)
    return ge_compile(source_of(args), config, cache=cache_of(args))


def _offline_model(args: argparse.Namespace) -> CompiledModel:
    """The .gem MODEL; with gears, the gear --gear names, else the one of --inputs' shapes, else the first
    (then said on stderr, with how to pick another)."""
    inputs, gear = getattr(args, "inputs", None), getattr(args, "gear", None)
    shapes = npz_shapes(inputs) if inputs else None
    compiled, gears, index = load_gear(args.model, shapes=shapes, gear=gear)
    if gears is not None:
        print(f"gear {gears.value_text(index)} ({format_input_shapes(gears.shapes[index])}) of {args.model}, which "
              f"has {gears.listing()}")
        if shapes is None and gear is None and len(gears.shapes) > 1:
            print("note: the first gear, with seeded random inputs; --gear or --inputs pick another.", file=sys.stderr)
    return compiled


def npz_shapes(path: str) -> dict[str, tuple[int, ...]]:
    """The shape of every array of an .npz (feeds), read from the .npy headers: no array is loaded."""
    if not Path(path).is_file():
        raise UsageError(f"inputs file {quote(path)} not found.")
    try:
        with zipfile.ZipFile(path) as archive:
            shapes = {}
            for info in archive.infolist():
                with archive.open(info) as member:
                    version = np.lib.format.read_magic(member)
                    header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                        np.lib.format.read_array_header_2_0
                    shapes[info.filename.removesuffix(".npy")] = tuple(int(d) for d in header(member)[0])
            return shapes
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise UsageError(f"inputs file {quote(path)} is not a readable .npz ({exc}).",
                         hint="Write it with numpy.savez(path, input_name=array, ...).") from None


def cache_of(args: argparse.Namespace) -> CompileCache | None:
    if args.no_cache:
        return None
    cache = CompileCache(Path(args.cache_dir)) if args.cache_dir else CompileCache.default()
    cache.snapshots = bool(getattr(args, "dump_dir", None))  # only the per-pass dumps read them
    return cache


def source_of(args: argparse.Namespace) -> Source | Graph:
    """MODEL as compile takes it: ONNX bytes or a path, or for model.py:FUNCTION the from_torch graph."""
    model = str(args.model)
    if is_factory_spec(model) and not model.startswith("sample:"):
        if args.input_shape:
            raise UsageError(f"--input-shape does not apply to the PyTorch model {quote(model)}: its shapes are "
                             "its example inputs'.", hint="Return other example inputs, or dynamic_shapes as "
                                                          "a third item, from the function.")
        return graph_from_factory(model)
    if model.startswith("sample:"):
        if get_sample(model.removeprefix("sample:")).kind == "ge_dump":
            raise UsageError(f"{quote(model)} is a GE graph dump: `inspect` and the pages show it; it is not "
                             "compiled again.", hint="Compile the model it was dumped from instead.")
        return sample_bytes(model.removeprefix("sample:"))
    if looks_like_ge_dump(model) and not model.endswith(".onnx"):
        raise UsageError(f"{quote(model)} is a GE graph dump: `inspect` shows it; it is not compiled again.",
                         hint="Compile the .onnx model it was dumped from instead.")
    path = Path(model)
    if not path.is_file():
        raise UsageError(f"model file '{model}' not found.",
                         hint="Give a path to an .onnx file, sample:NAME (docs/cli.md lists the samples) or "
                              "model.py:FUNCTION (a PyTorch model).")
    return str(path)


def imported_of(args: argparse.Namespace) -> ImportResult:
    """MODEL imported for `inspect` (a PyTorch model is converted whole, or refused with every problem; a GE
    graph dump file, folder or zip shows its last stage)."""
    dump = ge_dump_of(str(args.model))
    if dump is not None:
        return dump
    source = source_of(args)
    return ImportResult(source) if isinstance(source, Graph) else import_onnx(source, input_shapes_of(args) or None)


def ge_dump_of(model: str) -> ImportResult | None:
    """MODEL read as GE graph dump when it is one (sample:NAME of kind ge_dump, a ge_proto/ge_onnx file, a
    folder or a .zip), else None."""
    if model.startswith("sample:"):
        sample = get_sample(model.removeprefix("sample:"))
        if sample.kind != "ge_dump":
            return None
        return import_ge_dump(sample.read_bytes(), dump_file_name(sample.name))
    if looks_like_ge_dump(model):
        if not Path(model).exists():
            raise UsageError(f"GE dump {quote(model)} not found.")
        return import_ge_dump(model)
    return None


def graph_of(args: argparse.Namespace) -> Graph:
    """MODEL as a verified Graph, its symbolic dims left symbolic (the Session's input)."""
    source = source_of(args)
    return source if isinstance(source, Graph) else load_onnx(source)


def input_shapes_of(args: argparse.Namespace) -> str:
    """--input-shape, else a sample's own default shapes for its symbolic dims ("" for none)."""
    if args.input_shape:
        return str(args.input_shape)
    if str(args.model).startswith("sample:"):
        return get_sample(str(args.model).removeprefix("sample:")).input_shapes or ""
    return ""


def value_stats(value: np.ndarray) -> str:
    if value.size == 0 or value.dtype.kind not in "biuf":
        return ""
    v = value.astype(np.float64)
    return f"min {v.min():.6g}  max {v.max():.6g}  mean {v.mean():.6g}"
