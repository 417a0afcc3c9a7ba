"""Where the shared benchmark data are: folders only, nothing is read here.

Without an explicit folder it is read from ``SYNTHDP_DATA_DIR`` /
``SYNTHDP_BENCHMARKS_DIR``, and without those it is ``../shared/datasets`` /
``../shared/benchmarks`` seen from the working directory (a checkout run from
its root, with the shared folder beside it), and without those the user cache
that :func:`synthdp.datasets.fetch` downloads the public tables into.  Nothing
is located relative to the installed files.
"""

from __future__ import annotations

import os
from pathlib import Path

from synthdp.core.errors import InputError
from synthdp.datasets.fetch import cache_dir

DATA_DIR_ENV = "SYNTHDP_DATA_DIR"
BENCHMARKS_DIR_ENV = "SYNTHDP_BENCHMARKS_DIR"


def _shared_dir(given: str | Path | None, env: str, leaf: str) -> Path:
    """``given``, else ``$env``, else ``../shared/<leaf>``, else (datasets) the fetch cache; an error saying how."""
    if given is not None:
        path = Path(given).expanduser()
    elif os.environ.get(env):
        path = Path(os.environ[env]).expanduser()
    else:
        path = Path.cwd().parent / "shared" / leaf
        if not path.is_dir() and leaf == "datasets" and cache_dir().is_dir():
            path = cache_dir()
    if not path.is_dir():
        fetch = ("; or download the public tables with synthdp.datasets.fetch(name) (e.g. 'nltcs')"
                 if leaf == "datasets" else "")
        raise InputError(f"data directory {str(path)!r} does not exist; pass its location (data_home=...) "
                         f"or set the environment variable {env}{fetch}")
    return path


def data_dir(data_home: str | Path | None = None) -> Path:
    """Folder of the benchmark datasets: ``data_home``, ``$SYNTHDP_DATA_DIR``, or ``../shared/datasets``."""
    return _shared_dir(data_home, DATA_DIR_ENV, "datasets")


def benchmarks_dir(data_home: str | Path | None = None) -> Path:
    """Folder of the benchmark workloads: ``data_home``, ``$SYNTHDP_BENCHMARKS_DIR``, or ``../shared/benchmarks``."""
    return _shared_dir(data_home, BENCHMARKS_DIR_ENV, "benchmarks")
