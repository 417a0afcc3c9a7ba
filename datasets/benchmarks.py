"""Load the benchmark tables and workloads (read-only, never copied into the package).

As scikit-learn's loaders take ``data_home``, every function here takes the
folder as an argument; without one it is found by :mod:`synthdp.datasets.locations`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pandas as pd

from synthdp.core.errors import InputError
from synthdp.core.schema import Schema, read_json
from synthdp.datasets.locations import DATA_DIR_ENV, benchmarks_dir, data_dir

logger = logging.getLogger(__name__)

#: Integer-coded benchmark tables, each ``<name>.csv`` with a public ``<name>-domain.json``.
CODED_DATASETS = ("adult", "nltcs", "acs", "br2000")
WORKLOADS_FILE = "adult-workloads.json"


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

