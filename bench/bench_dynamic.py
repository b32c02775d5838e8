"""Dynamic shapes: a BERT-style encoder served at seeded sequence lengths, per strategy, and the cache speedup.

    python bench/bench_dynamic.py [--sample transformer_encoder] [--requests 32] [--distinct 12]
                                  [--low 16] [--high 512] [--seed 0] [--hardware ascend910] [--blas-threads 1]

The requests (lengths drawn from `--distinct` seeded values in low..high, `--requests` of them) go through
ge_core.Session four ways (ge_core/session/playback.py): a static graph rebuilt for each new length (no
cache), gears (doubling from low to high, compiled at build; requests zero-padded up to their gear), a
range (a compile per distinct length on first use, through the compile cache) and online fusion (one
compile for the range; UB fusion and tiling decided per new length at run time). Per strategy: compiles,
compile seconds, the run-time decisions, first response (build included) and the median warm request (no
compile or decision), and the mean simulated NPU latency. "warm start" plays the same requests again in a
new Session over the same cache (a second server start). Then the cache-hit speedup per --cache-models
sample: compiled into an empty cache, then again (a hit), best of --repeat.

BLAS runs on one thread by default: a shared machine makes a two-thread GEMM wait for its slower half.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import ge_core
from ge_core.frontend.input_shapes import parse_input_shapes
from ge_core.offline.cache import CompileCache
from ge_core.runtime.blas_threads import set_blas_threads
from ge_core.samples.registry import get_sample, sample_bytes
from ge_core.session.playback import STRATEGIES, STRATEGY_TITLES, DynamicAxis, Playback, play, request_sizes, symbols


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", default="transformer_encoder")
    parser.add_argument("--symbol", help="the symbolic dim that varies (default: the first containing 'seq')")
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--distinct", type=int, default=12)
    parser.add_argument("--low", type=int, default=16)
    parser.add_argument("--high", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hardware", default="ascend910")
    parser.add_argument("--repeat", type=int, default=5, help="cache speedup: best of N")
    parser.add_argument("--blas-threads", type=int, default=1)
    parser.add_argument("--cache-models", default="transformer_encoder,bert_encoder_torch,resnet50",
                        help="the samples whose cache-hit speedup is measured (default shapes)")
    args = parser.parse_args()
    ge_core.tune_process()  # the settings the CLI and the app run with (runtime/process.py)
    set_blas_threads(args.blas_threads)

    sample = get_sample(args.sample)
    graph = ge_core.load_onnx(sample_bytes(args.sample))
    names = symbols(graph)
    symbol = args.symbol or next((s for s in names if "seq" in s), names[-1])
    axis = DynamicAxis.of_graph(graph, symbol, parse_input_shapes(sample.input_shapes))
    sizes = request_sizes(args.requests, args.low, args.high, args.seed, args.distinct)
    config = ge_core.CompileConfig(opt_level="O3", hardware=args.hardware)
    print(f"{args.sample}, '{symbol}' in {args.low}..{args.high}: {len(sizes)} requests, {len(set(sizes))} distinct "
          f"lengths (seed {args.seed}), O3 on {args.hardware}, ge_core {ge_core.__version__}")
    print(f"lengths: {', '.join(map(str, sizes))}\n")
    print("| strategy | compiles | compile s | decisions | decision s | first response s | warm request ms "
          "| warm start: cache hits | warm start: compiles | warm start: first response s | mean simulated us |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for strategy in STRATEGIES:
            cold, warm = (play(graph, axis, sizes, strategy, config, Path(folder), low=args.low, high=args.high,
                               seed=args.seed) for _ in range(2))
            print(_row(cold, warm))
    print("\n| model (default shapes, O3) | first compile ms | second compile (cache hit) ms | speedup |")
    print("|---|---:|---:|---:|")
    for name in args.cache_models.split(","):
        print(_cache_speedup(name, config, args.repeat))


def _row(cold: Playback, warm: Playback) -> str:
    return (f"| {STRATEGY_TITLES[cold.strategy]} | {cold.compiles} | {cold.compile_seconds:.3f} | {cold.decisions} "
            f"| {cold.decision_seconds:.3f} | {cold.first_response_seconds:.3f} "
            f"| {cold.warm_request_seconds * 1e3:.1f} | {warm.cache_hits} | {warm.compiles} "
            f"| {warm.first_response_seconds:.3f} | {cold.mean_simulated_us:.1f} |")


def _cache_speedup(name: str, config: ge_core.CompileConfig, repeat: int) -> str:
    """One compile into an empty cache, then the same again (a hit: loaded, not compiled), best of `repeat`."""
    graph = ge_core.load_onnx(sample_bytes(name), get_sample(name).input_shapes or None)
    firsts: list[float] = []
    seconds: list[float] = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as folder:
            cache = CompileCache(Path(folder))
            for times in (firsts, seconds):
                start = time.perf_counter()
                compiled = ge_core.compile(graph, config, cache=cache)
                times.append(time.perf_counter() - start)
            assert compiled.cache["hit"], "the second compile should load from the cache"
    first, second = min(firsts), min(seconds)
    return f"| {name} | {first * 1e3:.1f} | {second * 1e3:.1f} | {first / second:.1f}x |"


if __name__ == "__main__":
    main()
