"""Shared fixtures: the shared benchmark data (skipped cleanly when absent) and the demo table."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def shared_data_dir():
    """The shared datasets folder, or skip the test with the reason."""
    from datasets import data_dir
    from synthdp.errors import SynthDPError

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
    from datasets.demo import demo_dataframe, demo_schema

    return demo_dataframe(), demo_schema()
