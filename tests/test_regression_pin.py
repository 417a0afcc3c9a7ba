"""Regression pin: a handful of seeded runs whose released table and release report must not change.

Refactors (issue 29) must be behaviour-preserving: the same seed gives the same table and the same
release, byte for byte.  Each case below is pinned to (the first 16 hex digits of) the SHA-256 of its
table (as CSV) and of its release report (``report.to_dict()`` as sorted JSON; the diagnostics, which
hold timings, are left out).

When a change *intends* to change outputs, re-pin: run this file, copy the two hashes printed in the
failure message into that case's ``PINS`` entry (one line per case), and say why in the commit.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp.core.schema import Schema
from synthdp.datasets.demo import demo_dataframe, demo_schema

#: Each case: the run's keyword arguments (besides the table and schema).  Tiny tables, so the file takes seconds.
CASES = {
    "measure-zcdp-marginals": dict(query_class="marginals:2", method="measure", epsilon=1.0, delta=1e-6),
    "measure-zcdp-conjunctions": dict(query_class="conjunctions:2", method="measure", epsilon=1.0, delta=1e-6),
    "game-pure-marginals": dict(query_class="marginals:2", method="game", epsilon=1.0, rounds=6,
                                samples_per_round=8),
    "game-zcdp-parities": dict(query_class="parities:2", method="game", epsilon=1.0, delta=1e-6, rounds=6,
                               samples_per_round=8),
    "measure-zcdp-learned-domain": dict(query_class="marginals:2", method="measure", epsilon=2.0, delta=1e-6,
                                        schema=None, categorical=["region", "education"]),
    "measure-pure-marginals": dict(query_class="marginals:2", method="measure", epsilon=1.0),
    "measure-zcdp-wide": dict(table="wide", query_class="marginals:2", method="measure", epsilon=1.0, delta=1e-6),
    "measure-zcdp-privtree": dict(table="numeric", query_class="marginals:2", method="measure", epsilon=2.0,
                                  delta=1e-6),
    "measure-zcdp-units": dict(table="units", query_class="marginals:2", method="measure", epsilon=1.0,
                               delta=1e-6, privacy_unit="person", max_rows_per_unit=2),
}

#: case -> (sha256 of the table as CSV, sha256 of the release report), first 16 hex digits each.
#: Re-pin here, one line per case.
PINS = {
    "game-pure-marginals": ("b6688ecfc9aafb8d", "d663ca0cc6801a4b"),
    "game-zcdp-parities": ("d4edfa89c236c671", "2985a59ab1d3fecb"),
    "measure-zcdp-conjunctions": ("771f2d7b39052c34", "9d399a8a80981ee5"),
    "measure-zcdp-learned-domain": ("1976c36239a71d8e", "43396151b732a916"),
    "measure-zcdp-marginals": ("86a8a7d8f323b50f", "dd73d9f63d14273e"),
    "measure-pure-marginals": ("9624661b25f798ee", "aea1539bacf09dc8"),
    "measure-zcdp-privtree": ("f15d74cad2b04a0c", "72dacf4a2a454619"),
    "measure-zcdp-units": ("3da3efe809fd3c7f", "06aa2a6038b51fc6"),
    "measure-zcdp-wide": ("e8a1651a4f7cfe17", "a7b089a2488a9285"),
}

N_ROWS = 300
#: Columns of the "wide" case: past the 32 from which select-measure-estimate starts with its spanning step.
WIDE = 34


def _table(kind: str) -> tuple[pd.DataFrame, object]:
    """The case's table and schema: the demo table, a wide binary one, one with a numeric column, or persons."""
    df, schema = demo_dataframe(n=N_ROWS, seed=3), demo_schema()
    rng = np.random.default_rng(11)
    if kind == "wide":
        bits = (rng.random((N_ROWS, WIDE)) < np.linspace(0.2, 0.8, WIDE)).astype(int)
        bits[:, 1::2] ^= bits[:, ::2] & (rng.random((N_ROWS, WIDE // 2)) < 0.7)  # some pairwise structure
        wide = pd.DataFrame(bits.astype(str), columns=[f"c{i}" for i in range(WIDE)])
        return wide, Schema.from_dataframe(wide, categorical=list(wide), categories={
            c: ["0", "1"] for c in wide})
    if kind == "numeric":  # a bounded integer column, discretised by PrivTree
        df = df.assign(age=rng.integers(17, 91, N_ROWS))
        public = {a.name: list(a.categories) for a in schema.attributes}
        return df, Schema.from_dataframe(df, categorical=list(public), categories=public, bounds={"age": (17, 90)},
                                         discretise="privtree")
    if kind == "units":
        return df.assign(person=np.repeat(np.arange(N_ROWS), rng.integers(1, 4, N_ROWS))[:N_ROWS]), schema
    return df, schema


def _hashes(case: dict) -> tuple[str, str]:
    kwargs = dict(case)
    df, schema = _table(kwargs.pop("table", "demo"))
    schema = kwargs.pop("schema", schema)
    if schema is None:
        df = df[kwargs["categorical"]]
    res = synthdp.generate_synthetic(df, schema=schema, random_state=7, progress=False, **kwargs)
    table = hashlib.sha256(res.data.to_csv(index=False).encode()).hexdigest()
    release = json.dumps(res.report.to_dict(), sort_keys=True, default=repr)
    return table[:16], hashlib.sha256(release.encode()).hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_seed_same_table_and_release(name):
    got = _hashes(CASES[name])
    assert got == PINS.get(name), (
        f"case {name!r}: the seeded table or release changed.  If the change is intended, re-pin with one line "
        f"in tests/test_regression_pin.py PINS:\n    \"{name}\": (\"{got[0]}\", \"{got[1]}\"),")
