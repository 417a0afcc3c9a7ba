"""Shared fixtures: the shared benchmark data (skipped cleanly when absent) and the demo table."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The suite runs from any working directory: the shared data sit beside this checkout.
_SHARED = Path(__file__).resolve().parents[1].parent / "shared"
os.environ.setdefault("SYNTHDP_DATA_DIR", str(_SHARED / "datasets"))
os.environ.setdefault("SYNTHDP_BENCHMARKS_DIR", str(_SHARED / "benchmarks"))


@pytest.fixture(scope="session")
def shared_data_dir():
    """The shared datasets folder, or skip the test with the reason."""
    from synthdp.datasets import data_dir
    from synthdp.core.errors import SynthDPError

    try:
        path = data_dir()
    except SynthDPError as exc:
        pytest.skip(str(exc))
    if not path.is_dir():
        pytest.skip(f"shared datasets not found at {path}; set SYNTHDP_DATA_DIR")
    return path


@pytest.fixture(scope="session")
def demo():
    """The embedded demo table and its public schema."""
    from synthdp.datasets.demo import demo_dataframe, demo_schema

    return demo_dataframe(), demo_schema()
