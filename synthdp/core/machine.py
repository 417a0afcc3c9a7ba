"""What the machine and this process say about themselves: public facts, never read from the data.

Linux exposes memory sizes in ``/proc`` files as ``Field:   <kibibytes> kB`` lines; :func:`proc_bytes` reads one.
The plan uses the machine's memory to refuse a run that cannot fit before any private step; the benchmarks use
the process's peak.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os


def proc_bytes(path: str | os.PathLike, field: str) -> int | None:
    """The size a ``/proc`` file gives for ``field`` (e.g. ``MemTotal`` in ``/proc/meminfo``), in bytes.

    None when the file or the field is missing (other systems).
    """
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def machine_memory() -> int | None:
    """The machine's physical memory in bytes (public), or None when the system does not say."""
    return proc_bytes("/proc/meminfo", "MemTotal")


@functools.cache
def _libc_trim():
    """glibc's ``malloc_trim``, or None on other C libraries and systems."""
    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name), "malloc_trim") if name else None
    except (OSError, AttributeError):
        return None


def return_freed_memory() -> None:
    """Hand the memory this process has freed back to the system (glibc: ``malloc_trim(0)``; a no-op elsewhere).

    A run frees many arrays of a few hundred kilobytes to a few megabytes between its steps; glibc keeps them in
    its heap for reuse, where they add up (700 MB of a 300,000-row run's 1.3 GB between two steps) and count in
    the process's resident size.  Called between steps, it changes no value, only the peak.
    """
    trim = _libc_trim()
    if trim is not None:
        trim(0)
