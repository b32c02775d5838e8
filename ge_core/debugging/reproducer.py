"""A reproducer: one zip that replays a workbench session with the existing command line.

    model.onnx      the model bytes exactly as the workbench imported them
    config.json     the CompileConfig (CompileConfig.to_json(): opt level, input shapes, passes switched off,
                    memory ...), plus the seed, what happened and the commands (`--config config.json`)
    switches.txt    the passes switched off, as a GE fusion switch file (`CsePass:off`)
    inputs.npz      the inputs the Debug page used (when the model got far enough to make them)
    README.txt      the exact commands, and the exit codes the workbench expects from them

With the Debug page's numeric bisection, config.json keeps it too (its tolerance, its finding, the worst
error per pass) and a `bisect` command replays it: exit 3 when a pass drifted beyond the tolerance.

Built in memory: nothing is written to a path anybody chose.
"""

from __future__ import annotations

import io
import json
import shlex
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ge_core.config import CompileConfig
from ge_core.debugging.bisect import BisectResult
from ge_core.debugging.failures import Failure
from ge_core.runtime.npz import npz_bytes

MODEL = "model.onnx"
CONFIG = "config.json"
SWITCHES = "switches.txt"
INPUTS = "inputs.npz"
README = "README.txt"
EXIT_OK, EXIT_REFUSED = 0, 3  # the CLI's contract (DESIGN.md)
REPRODUCER_KEYS = ("seed", "outcome", "commands", "bisection")  # what config.json holds beside the CompileConfig


@dataclass(frozen=True)
class ReplayCommand:
    """One command to run in the unzipped folder, and the exit code the workbench's outcome implies."""

    argv: tuple[str, ...]  # after `python3 -m ge_core`
    expected_exit: int
    why: str

    @property
    def shell(self) -> str:
        return shlex.join(["python3", "-m", "ge_core", *self.argv])


def replay_commands(config: CompileConfig, has_inputs: bool, failure: Failure | None = None,
                    bisection: BisectResult | None = None) -> list[ReplayCommand]:
    """inspect, compile (with verification) and run under the config.json, with their expected exit codes;
    with a bisection, `bisect` at its tolerance too. The opt level and input shapes are spelled out, so a
    reader sees them in the command."""
    shape = ["--input-shape", config.input_shapes] if config.input_shapes else []
    settings = [*shape, "--opt-level", str(config.opt_level), "--config", CONFIG]
    failed = failure.phase if failure is not None and not failure.bug else None
    refused_at_load = failed == "load"
    compile_exit = EXIT_REFUSED if failed in ("load", "compile") else EXIT_OK
    run_exit = EXIT_REFUSED if failed is not None else EXIT_OK
    feeds = ["--inputs", INPUTS] if has_inputs else []
    commands = [
        ReplayCommand(("inspect", MODEL, *shape), EXIT_REFUSED if refused_at_load else EXIT_OK,
                      "the summary and the legality check"),
        ReplayCommand(("compile", MODEL, *settings, "--verify", "--dump-dir", "dumps", "--report", "report.json"),
                      compile_exit, "the pass pipeline as the workbench ran it; the graph after every pass lands "
                                    "in dumps/"),
        ReplayCommand(("run", MODEL, *settings, *feeds, "--outputs", "outputs.npz"), run_exit,
                      "runs the compiled model on the CPU executor"),
    ]
    if bisection is not None:
        commands.append(ReplayCommand(
            ("bisect", MODEL, *settings, *feeds, "--tolerance", f"{bisection.tolerance:g}"),
            EXIT_REFUSED if bisection.first_bad is not None else EXIT_OK,
            "numeric bisection: the graph after every pass against the imported one, on the same inputs"))
    return commands


def reproducer_zip(model: bytes, config: CompileConfig | None = None, *,
                   feeds: Mapping[str, np.ndarray] | None = None, seed: int = 0, failure: Failure | None = None,
                   bisection: BisectResult | None = None, **options: Any) -> bytes:
    """The zip's bytes (see the module docstring). Without a config, keyword `options` build one, as
    for ge_core.compile (opt_level, input_shapes, disabled ...)."""
    config = config if config is not None else CompileConfig.build(**options)
    commands = replay_commands(config, feeds is not None, failure, bisection)
    record = {**config.to_json(), "seed": seed, "outcome": _outcome(failure),
              "commands": [{"command": c.shell, "expected_exit": c.expected_exit} for c in commands]}
    if bisection is not None:
        record["bisection"] = bisection.to_json()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(MODEL, model)
        archive.writestr(CONFIG, json.dumps(record, indent=2) + "\n")
        archive.writestr(SWITCHES, _switch_file(config.disabled_passes))
        if feeds is not None:
            archive.writestr(INPUTS, npz_bytes(feeds))
        archive.writestr(README, _readme(commands, failure, bisection))
    return buffer.getvalue()


def _outcome(failure: Failure | None) -> dict[str, object]:
    if failure is None:
        return {"ok": True}
    return {"ok": False, "phase": failure.phase, "pass": failure.pass_name, "stage": failure.stage,
            "nodes": list(failure.nodes), "headline": failure.headline, "bug": failure.bug}


def _switch_file(disabled: Iterable[str]) -> str:
    lines = ["# GE fusion switch file: one 'PassName:off' line per pass switched off in the workbench"]
    return "\n".join([*lines, *(f"{name}:off" for name in sorted(disabled))]) + "\n"


def _readme(commands: list[ReplayCommand], failure: Failure | None, bisection: BisectResult | None) -> str:
    lines = ["GE Workbench reproducer", "", *_what_happened(failure, bisection), "",
             "Replay it from this folder (any folder works), once GE Workbench is installed as its README says:",
             "`python3 -m pip install -e .` in its checkout, in the environment whose python3 runs these:", ""]
    for c in commands:
        lines += [f"  # {c.why} (expected exit code {c.expected_exit})", f"  {c.shell}", ""]
    lines += ["Exit codes: 0 success, 2 bad usage, 3 model refused, or for bisect an output drifted beyond the",
              "tolerance (a short paragraph on stderr names the node, tensor or pass; add --debug for a traceback).",
              "",
              f"{CONFIG} holds the compile configuration as data (ge_core.CompileConfig.from_file reads it);",
              f"{SWITCHES} lists the passes switched off as a GE fusion switch file."]
    return "\n".join(lines) + "\n"


def _what_happened(failure: Failure | None, bisection: BisectResult | None) -> list[str]:
    finding = bisection.finding() if bisection is not None else None
    if failure is not None:
        return [f"What happened: {failure.headline}"]
    if bisection is None:
        return ["Everything worked in the workbench."]
    if finding is None:
        return ["Import, compile and run worked in the workbench, and the numeric bisection found every pass",
                f"within its tolerance {bisection.tolerance:.1e}."]
    return ["Import, compile and run worked in the workbench, but the numeric bisection found a drift",
            f"(tolerance {bisection.tolerance:.1e}): {finding}"]
