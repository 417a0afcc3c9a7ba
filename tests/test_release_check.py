"""The release's self-check (docs/privacy.md §10.8): columns that come back mostly missing, with a single value
or piled in an end cell are named in a warning and in the report; read from the released table alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthdp import generate_synthetic
from synthdp.core.schema import Attribute, Schema
from synthdp.release_check import ReleaseWarning, check_release

RUN = dict(epsilon=1.0, delta=1e-6, random_state=0, progress=False)


def crafted() -> tuple[pd.DataFrame, Schema]:
    """Columns built to trip each check once, and columns at the thresholds that must not."""
    n = 100
    schema = Schema((
        Attribute("gone", "categorical", categories=("a", "b"), missing=True),       # 51% missing
        Attribute("half", "categorical", categories=("a", "b"), missing=True),       # 50% missing: not reported
        Attribute("one", "categorical", categories=("a", "b")),                      # a single value
        Attribute("low", "numeric", bounds=(0.0, 10.0), bins=5),                     # 51% in [0, 2)
        Attribute("high", "numeric", bounds=(0.0, 10.0), bins=5),                    # 51% in [8, 10]
        Attribute("even", "numeric", bounds=(0.0, 10.0), bins=5),                    # 50% in [0, 2): not reported
    ))
    spread = np.linspace(2.5, 7.5, n)
    df = pd.DataFrame({
        "gone": [None] * 51 + ["a", "b"] * 24 + ["a"],
        "half": [None] * 50 + ["a", "b"] * 25,
        "one": ["b"] * n,
        "low": np.r_[np.linspace(0.1, 1.9, 51), spread[51:]],
        "high": np.r_[np.linspace(8.1, 9.9, 51), spread[51:]],
        "even": np.r_[np.linspace(0.1, 1.9, 50), spread[50:]],
    })
    return df, schema


def test_each_check_names_its_column_and_the_thresholds_are_strict():
    df, schema = crafted()
    found = {(f.column, f.problem) for f in check_release(df, schema)}
    assert found == {("gone", "missing"), ("one", "single"), ("low", "piled"), ("high", "piled")}
    texts = {f.column: f.text for f in check_release(df, schema)}
    assert "51% missing" in texts["gone"] and "constant: every present value is b" in texts["one"]
    assert "lowest cell 0-2" in texts["low"] and "highest cell 8-10" in texts["high"]


def test_the_remedy_for_a_mostly_missing_column_fits_where_its_domain_came_from():
    schema = Schema((Attribute("learned", "categorical", categories=("a",), missing=True, origin="learned"),
                     Attribute("public", "categorical", categories=("a",), missing=True),
                     Attribute("cells", "numeric", bounds=(0.0, 10.0), cuts=(5.0,), missing=True, origin="learned")))
    df = pd.DataFrame({"learned": [None] * 60 + ["a"] * 40, "public": [None] * 60 + ["a"] * 40,
                       "cells": [None] * 60 + [1.0] * 40})
    texts = {f.column: f.text for f in check_release(df, schema)}
    assert "few of its values were held by enough rows to be learned" in texts["learned"]
    assert "if the real column is not mostly missing, raise epsilon" in texts["public"]
    assert "if the real column is not mostly missing, raise epsilon" in texts["cells"]  # learned cells, not categories


def test_a_numeric_column_in_one_cell_reads_constant_only_when_its_values_are_one():
    schema = Schema((Attribute("x", "numeric", bounds=(0.0, 10.0), bins=5),))
    one_value = check_release(pd.DataFrame({"x": np.full(20, 3.0)}), schema)
    one_cell = check_release(pd.DataFrame({"x": np.linspace(2.1, 3.9, 20)}), schema)
    assert [f.text.split(";")[0] for f in one_value] == ["column 'x' comes back constant: every present value is 3.0"]
    assert [f.text.split(";")[0] for f in one_cell] == ["column 'x' comes back with a single cell (2-4) of its 5 cells"]


def test_the_remedy_for_a_column_in_one_cell_fits_where_its_bounds_and_cells_came_from():
    """Public bounds were told to give public bounds (one value, one cell, or piled in an end cell): the remedy names
    what the owner can still change."""
    schema = Schema((Attribute("learned", "numeric", bounds=(0.0, 10.0), cuts=(5.0,), origin="learned", clip=True),
                     Attribute("cells", "numeric", bounds=(0.0, 10.0), cuts=(5.0,), origin="learned"),
                     Attribute("public", "numeric", bounds=(0.0, 10.0), bins=2)))
    df = pd.DataFrame({c: np.full(20, 3.0) for c in ("learned", "cells", "public")})
    texts = {f.column: f.text for f in check_release(df, schema, learned_bounds=("learned",))}
    assert texts["learned"].endswith("; give it public bounds or cuts, or drop the column")
    assert texts["cells"].endswith("; its cells were learned inside its public bounds: give it public cuts, raise "
                                   "epsilon, or drop the column")
    assert texts["public"].endswith("; its bounds and cells are public: raise epsilon, or drop the column")
    df, schema = crafted()
    piled = {learned: {f.column: f.text for f in check_release(df, schema, learned_bounds=learned)}["low"]
             for learned in ((), ("low",))}
    assert piled[()].endswith("if that is not the real data's shape, give it public cuts, or raise epsilon")
    assert piled[("low",)].endswith("give it public bounds (legal or physical limits)")


def test_a_point_mass_in_an_end_cell_is_not_reported_as_piled():
    """A zero-inflated amount whose zeros are a cell of their own (docs/privacy.md §11.2) comes back with most of
    its values in the lowest cell, all equal: the data's shape, not a pile from bounds learned on too few rows."""
    schema = Schema((Attribute("amount", "numeric", bounds=(0.0, 100.0), cuts=(1.0, 50.0, 75.0)),))
    zeros = pd.DataFrame({"amount": np.r_[np.zeros(90), np.linspace(2.0, 99.0, 10)]})
    assert check_release(zeros, schema) == []
    spread = pd.DataFrame({"amount": np.r_[np.linspace(0.0, 0.9, 90), np.linspace(2.0, 99.0, 10)]})
    assert [f.problem for f in check_release(spread, schema)] == ["piled"]


def unnamed_garbage(data: pd.DataFrame, schema: Schema, warnings: list[str]) -> list[str]:
    """The columns of a synthetic table that are mostly empty, constant or outside their released bounds and that
    no warning names (computed here independently of the self-check)."""
    bad = []
    for attr in schema.attributes:
        values = data[attr.name]
        present = values.dropna()
        empty = values.isna().mean() > 0.5
        constant = present.nunique() <= 1
        outside = attr.kind == "numeric" and pd.api.types.is_numeric_dtype(present) and bool(
            ((present < attr.bounds[0]) | (present > attr.bounds[1])).any())
        if (empty or constant or outside) and not any(repr(attr.name) in w for w in warnings):
            bad.append(attr.name)
    return bad


def small_table(n: int, seed: int = 0) -> pd.DataFrame:
    """A small table of the issue's shape: skewed numbers, a text column with many rare values."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "price": np.round(rng.lognormal(11, 0.6, n), 0), "rooms": rng.integers(1, 8, n).astype(float),
        "area": np.round(rng.lognormal(4, 0.4, n), 1), "year": rng.integers(1900, 2020, n).astype(float),
        "lat": rng.normal(37.5, 0.3, n), "city": rng.choice([f"town-{i}" for i in range(60)], n),
        "kind": rng.choice(["house", "flat"], n),
    })


NUMERIC = ["price", "rooms", "area", "year", "lat"]


@pytest.mark.parametrize("route", ["public", "learned-categories", "learned-bounds"])
def test_no_column_comes_back_empty_constant_or_out_of_range_unnamed(route):
    df = small_table(344 if route != "learned-bounds" else 2500)
    public_bounds = {"price": (0.0, 1e6), "rooms": (1, 8), "area": (0.0, 300.0), "year": (1900, 2020),
                     "lat": (30.0, 45.0)}
    categories = {"city": sorted(df["city"].unique()), "kind": ["flat", "house"]}
    options = {"public": dict(bounds=public_bounds, categories=categories),
               "learned-categories": dict(bounds=public_bounds),
               "learned-bounds": dict(learn_bounds=NUMERIC)}[route]
    with pytest.warns(ReleaseWarning) if route != "public" else _nothing():
        result = generate_synthetic(df, "marginals:2", **options, **RUN)
    assert unnamed_garbage(result.data, result.schema, result.report.warnings) == []
    assert all(f.text in result.report.warnings for f in check_release(result.data, result.schema))


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
