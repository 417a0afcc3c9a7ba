"""Benchmark datasets (shared, read-only files, or downloaded by :func:`fetch`) and the self-generated demo table."""

from synthdp.datasets.adult_raw import ADULT_RAW_COLUMNS, adult_raw_schema, load_adult_raw
from synthdp.datasets.benchmarks import CODED_DATASETS, load_coded, load_workload
from synthdp.datasets.demo import demo_dataframe, demo_schema
from synthdp.datasets.fetch import cache_dir, fetch
from synthdp.datasets.locations import benchmarks_dir, data_dir

__all__ = [
    "ADULT_RAW_COLUMNS",
    "CODED_DATASETS",
    "adult_raw_schema",
    "benchmarks_dir",
    "cache_dir",
    "data_dir",
    "demo_dataframe",
    "demo_schema",
    "fetch",
    "load_adult_raw",
    "load_coded",
    "load_workload",
]
