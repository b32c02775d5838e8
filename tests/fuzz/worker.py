"""The fuzzer's worker: runs `python -m ge_core` commands in one long-lived process, under a memory limit.

One JSON request per line on stdin ({"argv": [...], "cwd": "..."}), one JSON reply per line on the
original stdout ({"code", "out", "err", "peak_growth_bytes", "seconds"}). File descriptors 1 and 2 are
pointed at /dev/null so nothing a native library prints can corrupt the replies; the command's own
stdout and stderr are captured. The parent kills and restarts the worker on a hang or a crash.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import sys
import threading
import time
import traceback

PAGE = os.sysconf("SC_PAGE_SIZE")


class PeakRss:
    """The highest resident set size seen while a command runs (sampled every few milliseconds)."""

    def __init__(self) -> None:
        self.peak = self.base = _rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, _rss())


def _rss() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * PAGE


def serve() -> None:
    limit = int(os.environ.get("GE_FUZZ_MEMORY_BYTES", str(6 << 30)))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    from ge_core.cli.main import main

    for line in sys.stdin:
        request = json.loads(line)
        os.chdir(request["cwd"])
        out, err = io.StringIO(), io.StringIO()
        start = time.perf_counter()
        with PeakRss() as rss, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(request["argv"])
            except SystemExit as exc:  # argparse's usage errors
                code = exc.code if isinstance(exc.code, int) else 2
            except BaseException:  # main() let something through: that is a finding
                code = -1
                err.write(traceback.format_exc())
        reply = {"code": code, "out": out.getvalue(), "err": err.getvalue(),
                 "peak_growth_bytes": rss.peak - rss.base, "seconds": time.perf_counter() - start}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    serve()
