"""Drives mutants through `inspect`, `run` and `compile O3 --dump-dir` and judges every outcome.

A mutant passes when each command exits 0, 2 or 3 with no traceback, within its time, with bounded memory,
writes nothing outside its dump folder and outputs file, prints no line that could pass for one of the
CLI's own (a forged `ge_core ...:` line), and no byte of the planted secret shows up anywhere it wrote.

    python -m tests.fuzz.runner --cases 2000 [--seed 0]      # locally: thousands, with a summary table
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import selectors
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tests.fuzz.mutations import make_mutant

REPO = Path(__file__).resolve().parents[2]
COMMAND_SECONDS = 60.0
MAX_GROWTH_BYTES = 1 << 30
VERBS = ("inspect", "run", "compile")


@dataclass
class Outcome:
    seed: int
    mutation: str
    codes: dict[str, int] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)


class Worker:
    """A tests.fuzz.worker process; restarted after a hang or a crash."""

    def __init__(self, cache_dir: Path | None = None) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.cache_dir = cache_dir  # the CLI's compile cache: inside the fuzz folder, never the user's

    def run(self, argv: list[str], cwd: Path, timeout: float = COMMAND_SECONDS) -> dict[str, object] | str:
        """The command's reply, or "hang" / "crash"."""
        if self.proc is None or self.proc.poll() is not None:
            env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
            if self.cache_dir is not None:
                env["GE_CACHE_DIR"] = str(self.cache_dir)
            self.proc = subprocess.Popen([sys.executable, "-m", "tests.fuzz.worker"], cwd=REPO, env=env, text=True,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"argv": argv, "cwd": str(cwd)}) + "\n")
        self.proc.stdin.flush()
        with selectors.DefaultSelector() as selector:
            selector.register(self.proc.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout)
        if not ready:
            self.close()
            return "hang"
        line = self.proc.stdout.readline()
        if not line:
            self.close()
            return "crash"
        reply: dict[str, object] = json.loads(line)
        return reply

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def commands(model: Path) -> dict[str, list[str]]:
    return {"inspect": ["inspect", str(model)],
            "run": ["run", str(model), "--outputs", "outputs.npz"],
            "compile": ["compile", str(model), "--opt-level", "O3", "--dump-dir", "dumps"]}


def judge_reply(verb: str, reply: dict[str, object] | str, secret: bytes) -> list[str]:
    if isinstance(reply, str):
        return [f"{verb}: {reply}"]
    findings = []
    code, out, err = reply["code"], str(reply["out"]), str(reply["err"])
    if code not in (0, 2, 3):
        findings.append(f"{verb}: exit {code}: {err[-300:]!r}")
    if "Traceback" in err or "Traceback" in out:
        findings.append(f"{verb}: traceback printed")
    lines = err.splitlines()
    if code in (2, 3) and not (lines and lines[0].startswith(f"ge_core {verb}: ")):
        findings.append(f"{verb}: the refusal does not start with 'ge_core {verb}:'")
    forged = [ln for ln in (lines[1:] + out.splitlines()) if ln.startswith("ge_core ")]
    if forged:
        findings.append(f"{verb}: a line that looks like the CLI's own: {forged[0][:80]!r}")
    if int(str(reply["peak_growth_bytes"])) > MAX_GROWTH_BYTES:
        findings.append(f"{verb}: memory grew by {int(str(reply['peak_growth_bytes'])) >> 20} MiB")
    text = out + err
    if _leaks(secret, text.encode("utf-8", "surrogateescape")) or _leaks(secret, text.encode("latin-1", "replace")):
        findings.append(f"{verb}: the secret appears in what it printed")
    return findings


def _leaks(secret: bytes, blob: bytes) -> bool:
    return any(secret[i:i + 8] in blob for i in range(0, len(secret) - 7, 4))


def tree(folder: Path, skip: Iterable[Path] = ()) -> dict[str, tuple[int, int]]:
    """path -> (size, mtime) of everything under `folder` except the `skip` subtrees (links not followed)."""
    skipped = [s.resolve() for s in skip]
    listing = {}
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        dirs[:] = [d for d in dirs if (here / d).resolve() not in skipped and not (here / d).is_symlink()]
        for name in files + [d for d in os.listdir(here) if (here / d).is_symlink()]:
            path = here / name
            if path.resolve() in skipped:
                continue
            info = path.lstat()
            listing[str(path.relative_to(folder))] = (info.st_size, int(info.st_mtime_ns))
    return listing


def run_case(worker: Worker, seed: int, root: Path, secret_path: Path, secret: bytes) -> Outcome:
    case = root / f"case_{seed}"
    case.mkdir()
    mutant = make_mutant(seed, case, secret_path)
    model = case / "model.onnx"
    model.write_bytes(mutant.data)
    outcome = Outcome(seed, mutant.name)
    written = [case / "dumps", case / "outputs.npz", root / "compile_cache"]  # what the commands may write
    before = tree(root, written)
    cached_before = set((root / "compile_cache").glob("*"))
    for verb, argv in commands(model).items():
        reply = worker.run(argv, case)
        outcome.codes[verb] = reply["code"] if isinstance(reply, dict) else -9  # type: ignore[assignment]
        outcome.findings += judge_reply(verb, reply, secret)
    if tree(root, written) != before:
        outcome.findings.append("files changed outside the dump folder and outputs file")
    new_cache = [p for p in (root / "compile_cache").glob("*") if p not in cached_before]
    for path in [p for p in (case / "dumps").rglob("*") if p.is_file()] + [case / "outputs.npz", *new_cache]:
        if path.is_file() and _leaks(secret, path.read_bytes()):
            outcome.findings.append(f"the secret appears in {path.relative_to(case)}")
    shutil.rmtree(case, ignore_errors=True)
    return outcome


def run_cases(seeds: Iterable[int]) -> list[Outcome]:
    with tempfile.TemporaryDirectory(prefix="ge_fuzz_") as tmp:
        root = Path(tmp)
        worker = Worker(root / "compile_cache")
        secret = b"GE-FUZZ-SECRET:" + secrets.token_bytes(48)
        secret_path = root / "secret.bin"
        secret_path.write_bytes(secret)
        try:
            return [run_case(worker, seed, root, secret_path, secret) for seed in seeds]
        finally:
            worker.close()


def summary(outcomes: list[Outcome]) -> str:
    by_code = Counter((verb, code) for o in outcomes for verb, code in o.codes.items())
    lines = [f"{len(outcomes)} mutants, {sum(bool(o.findings) for o in outcomes)} with findings",
             "| verb | exit 0 | exit 2 | exit 3 | other |", "|---|---:|---:|---:|---:|"]
    for verb in VERBS:
        other = sum(n for (v, c), n in by_code.items() if v == verb and c not in (0, 2, 3))
        lines.append(f"| {verb} | {by_code[(verb, 0)]} | {by_code[(verb, 2)]} | {by_code[(verb, 3)]} | {other} |")
    mutations = Counter(name for o in outcomes for name in o.mutation.split("+"))
    lines.append("mutations: " + ", ".join(f"{n} {c}" for n, c in sorted(mutations.items())))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    outcomes = run_cases(range(args.seed, args.seed + args.cases))
    for o in outcomes:
        for finding in o.findings:
            print(f"seed {o.seed} ({o.mutation}): {finding}")
    print(summary(outcomes))


if __name__ == "__main__":
    main()
