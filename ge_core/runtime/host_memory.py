"""glibc's malloc set to keep freed activation buffers for the next run instead of handing them back.

numpy allocates every activation with malloc, and the interpreter frees each one after its last use. By
default glibc serves a block of 128 KB or more with a fresh mmap (it raises that bar to the largest block
freed so far, up to 32 MB) and gives the top of its heap back to the OS once twice that bar is free there.
A run allocates and frees the same megabytes again and again, so each run got fresh pages: one page fault
per 4 KB on first touch, zero-filled by the kernel. Measured (`perf stat -e page-faults`, a loop of runs of
ocr_det_db_paddle at 320x320 after three warm-ups): ~3,600 faults (14 MB) a run and 23-28 ms a run by
default; with blocks below 32 MB served from the heap and 64 MB of free heap kept, no faults after the
warm-ups and 15-17 ms a run. A depthwise conv alone with its padding went 6.3 -> 0.5 ms.

Both thresholds are set together: setting either one turns glibc's sliding bar off, and each alone was
slower than the default (mmap bar alone 43 ms a run, trim threshold alone 47-50 ms). The cost is the
process keeping up to 64 MB of freed memory per malloc arena (32, 64 and 128 MB kept the same faults away
on ocr_det_db_paddle, resnet50 and densenet121). Nothing changes where the C library is not
glibc, or where the user's environment already sets either threshold (`MALLOC_MMAP_THRESHOLD_`,
`MALLOC_TRIM_THRESHOLD_`, or `GLIBC_TUNABLES`): their choice stands.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import platform

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 32 << 20  # glibc's largest accepted mmap threshold on 64-bit (HEAP_MAX_SIZE / 2)
TRIM_THRESHOLD_BYTES = 64 << 20
USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")


@functools.cache
def keep_freed_host_memory() -> bool:
    """Set glibc's mmap and trim thresholds once per process; True when they were set."""
    if any(name in os.environ for name in USER_SETTINGS):
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    path = ctypes.util.find_library("c")
    if path is None:
        return False
    libc = ctypes.CDLL(path)
    if not hasattr(libc, "mallopt"):
        return False
    # mallopt returns 1 on success; glibc refuses an mmap threshold above HEAP_MAX_SIZE / 2.
    mmap_set = libc.mallopt(M_MMAP_THRESHOLD, ctypes.c_int(MMAP_THRESHOLD_BYTES)) == 1
    trim_set = libc.mallopt(M_TRIM_THRESHOLD, ctypes.c_int(TRIM_THRESHOLD_BYTES)) == 1
    return mmap_set and trim_set
