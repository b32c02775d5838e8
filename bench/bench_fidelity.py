"""The simulator against published Ascend figures: simulated vs published latency per model, and how far off.

    python bench/bench_fidelity.py [--only resnet] [--breakdown] [--cache DIR] [--profile-dir DIR] [--write-fidelity]

For every figure of bench/fidelity_figures.py (model, chip, batch, fps, source) the model is built with seeded
random weights (bench/fidelity_models.py), compiled at O3 for the matching profile with no precision mode (so
ATC's default, force_fp16, as the figures were compiled), simulated (timing only), and compared: simulated
latency / published latency (batch / fps). The summary is the geometric mean of |ln(ratio)| (ln 1.5 = 0.405:
"within 1.5x on average") and the worst ratio, for the batch-1 rows (latencies) and apart from them the
larger-batch rows (pipelined throughput: the chip overlaps what one batch at a time cannot). `--breakdown`
prints where each model's simulated time goes, per op type; `--profile-dir` simulates on the profiles of
that folder instead of the built-in ones (a calibrated profile, say). `--write-fidelity` records each built-in
profile's batch-1 result in its JSON (`fidelity`: what the Profile page's "how far to trust this" line says).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import ge_core
from bench.fidelity_figures import FIGURES, Figure
from bench.fidelity_models import BUILDERS
from ge_core.hardware.loader import PROFILE_DIR
from ge_core.sim import SimResult, simulate

LN_1_5 = math.log(1.5)


def model_bytes(figure: Figure, cache: Path | None) -> bytes:
    path = cache / f"{figure.model}_bs{figure.batch}.onnx" if cache is not None else None
    if path is not None and path.is_file():
        return path.read_bytes()
    data = BUILDERS[figure.model](figure.batch)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return data


def simulated(figure: Figure, cache: Path | None, profile_dir: Path | None) -> SimResult:
    profile = str(profile_dir / f"{figure.profile}.json") if profile_dir is not None else figure.profile
    compiled = ge_core.compile(model_bytes(figure, cache), opt_level="O3", hardware=profile)
    return simulate(compiled, run=False)


def breakdown(result: SimResult, top: int = 8) -> str:
    by: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for op in result.ops:
        row = by[op.op_type]
        row[0] += 1
        row[1] += op.latency_us
        row[2] += op.bytes
    lines = [f"    {kind:<22} {int(n):4d} kernels {us:9.1f} us {nbytes / 1e6:8.1f} MB"
             for kind, (n, us, nbytes) in sorted(by.items(), key=lambda kv: -kv[1][1])[:top]]
    busy = ", ".join(f"{u} {v:.0f}" for u, v in result.busy_us().items() if v > 0)
    return "\n".join([*lines, f"    busy us: {busy}"])


def summary(label: str, ratios: list[float]) -> str:
    if not ratios:
        return f"{label}: none"
    logs = [abs(math.log(r)) for r in ratios]
    geo = math.exp(sum(logs) / len(logs))
    worst = max(ratios, key=lambda r: abs(math.log(r)))
    inside = sum(1 for r in ratios if 0.5 <= r <= 2.0)
    return (f"{label}: {len(ratios)} figures, geomean |ln ratio| {sum(logs) / len(logs):.3f} (x{geo:.2f}; "
            f"ln 1.5 = {LN_1_5:.3f}), worst {worst:.2f}x, {inside} of {len(ratios)} within 2x")


def fidelity_record(figures: list[Figure], ratios: list[float]) -> dict[str, object]:
    """A profile's batch-1 result on the published figures, as its JSON's `fidelity` section holds it."""
    logs = [abs(math.log(r)) for r in ratios]
    worst = max(ratios, key=lambda r: abs(math.log(r)))
    return {"profile": figures[0].profile, "chip": figures[0].chip, "figures": len(ratios),
            "models": sorted({f.model for f in figures}), "geomean_abs_ln_ratio": round(sum(logs) / len(logs), 3),
            "worst_ratio": round(worst, 2), "within_2x": sum(1 for r in ratios if 0.5 <= r <= 2.0),
            "measured_by": "bench/bench_fidelity.py", "table": "docs/fidelity.md"}


def write_fidelity(rows: list[tuple[Figure, float]]) -> None:
    """Each built-in profile's `fidelity` line (batch-1 rows only), replaced or put before its sources."""
    for profile in sorted({f.profile for f, _ in rows}):
        mine = [(f, r) for f, r in rows if f.profile == profile and f.batch == 1]
        if not mine:
            continue
        path = PROFILE_DIR / f"{profile}.json"
        lines = path.read_text(encoding="utf-8").splitlines()
        line = f'  "fidelity": {json.dumps(fidelity_record([f for f, _ in mine], [r for _, r in mine]))},'
        lines = [x for x in lines if not x.startswith('  "fidelity":')]
        lines.insert(next(i for i, x in enumerate(lines) if x.startswith('  "sources":')), line)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        json.loads(path.read_text(encoding="utf-8"))
        print(f"wrote the fidelity of {profile} into {path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="", help="figures whose model name contains this")
    parser.add_argument("--breakdown", action="store_true", help="print each model's time per op type")
    parser.add_argument("--cache", type=Path, help="keep the built ONNX files here (rebuilding BERT takes a while)")
    parser.add_argument("--profile-dir", type=Path, help="simulate on <profile>.json of this folder")
    parser.add_argument("--write-fidelity", action="store_true", help="record the result in the built-in profiles")
    args = parser.parse_args()
    print(f"ge_core simulator vs published figures; load average {os.getloadavg()[0]:.1f}\n")
    print("| model | chip | batch | published us | simulated us | ratio | kind | AIPP / small channel |")
    print("|---|---|---:|---:|---:|---:|---|---|")
    latency: list[float] = []
    throughput: list[float] = []
    rows: list[tuple[Figure, float]] = []
    for figure in FIGURES:
        if args.only not in figure.model:
            continue
        start = time.perf_counter()
        result = simulated(figure, args.cache, args.profile_dir)
        ratio = result.total_us / figure.latency_us
        (latency if figure.batch == 1 else throughput).append(ratio)
        rows.append((figure, ratio))
        kind = "latency" if figure.batch == 1 else "throughput"
        flags = " / ".join(["AIPP" if figure.aipp else "-", "small ch." if figure.small_channel else "-"])
        print(f"| {figure.model} | {figure.chip} | {figure.batch} | {figure.latency_us:,.0f} | {result.total_us:,.0f} "
              f"| {ratio:.2f}x | {kind} | {flags} |", flush=True)
        if args.breakdown:
            print(f"    ({len(result.ops)} kernels, {time.perf_counter() - start:.1f} s to build and simulate)")
            print(breakdown(result))
    print()
    print(summary("batch 1 (latency)", latency))
    print(summary("larger batches (pipelined throughput)", throughput))
    for profile in sorted({f.profile for f, _ in rows}):
        print(summary(f"batch 1 on {profile}", [r for f, r in rows if f.profile == profile and f.batch == 1]))
    if args.write_fidelity and args.profile_dir is None and not args.only:
        write_fidelity(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
