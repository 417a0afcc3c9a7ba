"""Locate and load the shared benchmark data (read-only, outside the repository).

The data live next to the repository in ``../shared/datasets`` and
``../shared/benchmarks``; the environment variables ``SYNTHDP_DATA_DIR`` and
``SYNTHDP_BENCHMARKS_DIR`` override those locations.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pandas as pd

from synthdp.errors import InputError
from synthdp.schema import Schema, read_json

logger = logging.getLogger(__name__)

DATA_DIR_ENV = "SYNTHDP_DATA_DIR"
BENCHMARKS_DIR_ENV = "SYNTHDP_BENCHMARKS_DIR"
#: Integer-coded benchmark tables, each ``<name>.csv`` with a public ``<name>-domain.json``.
CODED_DATASETS = ("adult", "nltcs", "acs", "br2000")
WORKLOADS_FILE = "adult-workloads.json"

_REPO_ROOT = Path(__file__).resolve().parent.parent


def _shared_dir(env: str, default: Path) -> Path:
    """``$env`` if set, else ``default``; an error naming the variable when the directory is absent."""
    path = Path(os.environ[env]) if os.environ.get(env) else default
    if not path.is_dir():
        raise InputError(
            f"data directory {str(path)!r} does not exist; set the environment variable {env} to its location"
        )
    return path


def data_dir() -> Path:
    """Directory of the benchmark datasets (``$SYNTHDP_DATA_DIR`` or ``<repo>/../shared/datasets``)."""
    return _shared_dir(DATA_DIR_ENV, _REPO_ROOT.parent / "shared" / "datasets")


def benchmarks_dir() -> Path:
    """Directory of the benchmark workloads (``$SYNTHDP_BENCHMARKS_DIR`` or ``<repo>/../shared/benchmarks``)."""
    return _shared_dir(BENCHMARKS_DIR_ENV, _REPO_ROOT.parent / "shared" / "benchmarks")


def load_coded(name: str) -> tuple[pd.DataFrame, Schema]:
    """An integer-coded benchmark table and its public schema (from ``<name>-domain.json``).

    ``name`` is one of :data:`CODED_DATASETS`. The columns are checked to be
    those of the domain file, in its order.
    """
    if name not in CODED_DATASETS:
        raise InputError(f"unknown dataset {name!r}; choose one of {list(CODED_DATASETS)}")
    root = data_dir()
    schema = Schema.from_domain_file(root / f"{name}-domain.json")
    df = pd.read_csv(root / f"{name}.csv")
    if tuple(map(str, df.columns)) != schema.names:
        raise InputError(f"{name}.csv has columns {list(df.columns)}, but its domain file lists {list(schema.names)}")
    logger.info("loaded %s: %d rows x %d columns", name, *df.shape)
    return df, schema


def load_workload(key: str | os.PathLike) -> list[tuple[str, ...]]:
    """A workload as a list of attribute-name tuples.

    ``key`` is a key of ``adult-workloads.json`` in :func:`benchmarks_dir`
    (``"adult_3way_64"``, ``"adult_5way_64"``) or the path of a JSON file
    holding a list of attribute lists.
    """
    if Path(key).suffix == ".json" or Path(key).is_file():
        path = Path(key)
        data = read_json(path)
    else:
        path = benchmarks_dir() / WORKLOADS_FILE
        workloads = read_json(path)
        if key not in workloads:
            raise InputError(f"unknown workload {key!r}; {path} holds {sorted(workloads)}, or pass a JSON file path")
        data = workloads[key]
    if not isinstance(data, list) or not all(
        isinstance(t, list) and t and all(isinstance(a, str) for a in t) for t in data
    ):
        raise InputError(f"workload {str(key)!r} in {path} must be a list of lists of attribute names")
    return [tuple(t) for t in data]

