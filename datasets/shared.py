"""Locate and load the shared benchmark data (read-only, never copied into the package).

As scikit-learn's loaders take ``data_home``, every function here takes the
folder as an argument; without one it is read from ``SYNTHDP_DATA_DIR`` /
``SYNTHDP_BENCHMARKS_DIR``, and without those it is ``../shared/datasets`` /
``../shared/benchmarks`` seen from the working directory (a checkout run from
its root, with the shared folder beside it), and without those the user cache
that :func:`synthdp.datasets.fetch` downloads the public tables into.  Nothing
is located relative to the installed files.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pandas as pd

from synthdp.core.errors import InputError
from synthdp.core.schema import Schema, read_json

logger = logging.getLogger(__name__)

DATA_DIR_ENV = "SYNTHDP_DATA_DIR"
BENCHMARKS_DIR_ENV = "SYNTHDP_BENCHMARKS_DIR"
#: Integer-coded benchmark tables, each ``<name>.csv`` with a public ``<name>-domain.json``.
CODED_DATASETS = ("adult", "nltcs", "acs", "br2000")
WORKLOADS_FILE = "adult-workloads.json"



def _shared_dir(given: str | Path | None, env: str, leaf: str) -> Path:
    """``given``, else ``$env``, else ``../shared/<leaf>``, else (datasets) the fetch cache; an error saying how."""
    from synthdp.datasets.fetch import cache_dir

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


def load_coded(name: str, *, data_home: str | Path | None = None) -> tuple[pd.DataFrame, Schema]:
    """An integer-coded benchmark table and its public schema (from ``<name>-domain.json``).

    ``name`` is one of :data:`CODED_DATASETS`. The columns are checked to be
    those of the domain file, in its order; ``data_home`` as in :func:`data_dir`.
    """
    if name not in CODED_DATASETS:
        raise InputError(f"unknown dataset {name!r}; choose one of {list(CODED_DATASETS)}")
    root = data_dir(data_home)
    if not (root / f"{name}.csv").is_file():
        raise InputError(f"{name}.csv is not in {str(root)!r}; download it with synthdp.datasets.fetch({name!r}), "
                         f"or set {DATA_DIR_ENV} to a folder holding it")
    schema = Schema.from_domain_file(root / f"{name}-domain.json")
    df = pd.read_csv(root / f"{name}.csv")
    if tuple(map(str, df.columns)) != schema.names:
        raise InputError(f"{name}.csv has columns {list(df.columns)}, but its domain file lists {list(schema.names)}")
    logger.info("loaded %s: %d rows x %d columns", name, *df.shape)
    return df, schema


def load_workload(key: str | os.PathLike, *, data_home: str | Path | None = None) -> list[tuple[str, ...]]:
    """A workload as a list of attribute-name tuples.

    ``key`` is a key of ``adult-workloads.json`` in :func:`benchmarks_dir`
    (``"adult_3way_64"``, ``"adult_5way_64"``) or the path of a JSON file
    holding a list of attribute lists.
    """
    if Path(key).suffix == ".json" or Path(key).is_file():
        path = Path(key)
        data = read_json(path)
    else:
        path = benchmarks_dir(data_home) / WORKLOADS_FILE
        workloads = read_json(path)
        if key not in workloads:
            raise InputError(f"unknown workload {key!r}; {path} holds {sorted(workloads)}, or pass a JSON file path")
        data = workloads[key]
    if not isinstance(data, list) or not all(
        isinstance(t, list) and t and all(isinstance(a, str) for a in t) for t in data
    ):
        raise InputError(f"workload {str(key)!r} in {path} must be a list of lists of attribute names")
    return [tuple(t) for t in data]

