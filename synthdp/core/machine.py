"""What the machine and this process say about themselves: public facts, never read from the data.

Linux exposes memory sizes in ``/proc`` files as ``Field:   <kibibytes> kB`` lines; :func:`proc_bytes` reads one.
The plan uses the machine's memory to refuse a run that cannot fit before any private step; the benchmarks use
the process's peak.
"""

from __future__ import annotations

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
