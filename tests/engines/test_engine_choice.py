"""The engine of a run, asked of the engine: what it is built from, and what it needs (no test of its name)."""

from __future__ import annotations

import pytest

from synthdp.api import generate_synthetic
from synthdp.config import SynthesisConfig
from synthdp.core.errors import InputError
from synthdp.engines import counting_engine
from synthdp.engines.dask import DaskEngine
from synthdp.engines.pandas import PandasEngine
from synthdp.files.sources import ReadOptions


@pytest.mark.parametrize("engine, scheduler, built", [
    ("pandas", None, PandasEngine(options=ReadOptions(missing=("?",), text=("person",)))),
    ("dask", "tcp://127.0.0.1:8786",
     DaskEngine(scheduler="tcp://127.0.0.1:8786", options=ReadOptions(missing=("?",), text=("person",)))),
])
def test_the_engine_of_a_run_reads_as_the_options_say(engine, scheduler, built):
    """The missing tokens and the privacy unit's column as text, on the scheduler given (the engine that has one)."""
    config = SynthesisConfig(epsilon=1.0, engine=engine, scheduler=scheduler, missing=["?"], privacy_unit="person",
                             max_rows_per_unit=2)
    assert counting_engine(config) == built


def test_without_a_unit_the_reader_keeps_no_column_as_text():
    assert counting_engine(SynthesisConfig(epsilon=1.0)).options == ReadOptions()


def test_an_engine_that_reads_the_rows_where_it_counts_needs_a_public_schema(tmp_path):
    """Refused before any private step: nothing is read off the data to build a schema on workers."""
    assert DaskEngine.needs_public_schema and not PandasEngine.needs_public_schema
    (tmp_path / "in.csv").write_text("a,b\n1,2\n3,0\n")
    with pytest.raises(InputError, match=r"engine='dask' needs a public schema \(schema= a Schema"):
        generate_synthetic(str(tmp_path / "in.csv"), "marginals:1", epsilon=1.0, delta=1e-6, engine="dask",
                           progress=False)
