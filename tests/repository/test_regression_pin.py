"""Regression pin: a handful of seeded runs whose decisions and released table must not change.

Refactors must be behaviour-preserving: the same seed gives the same release, the same rows and the same table.
Each case pins three hashes (the first 16 hex digits of a SHA-256), so that a failure says *what* changed:

* ``release``: what the algorithm decided and paid for, the release report (``report.to_dict()`` as sorted JSON:
  the measurements chosen, their noise scales, the ledger, the learned domains, the plan; the diagnostics, which
  hold timings, are left out);
* ``cells``: how many synthetic rows fall in each cell of the released domain (the table encoded back with the
  run's schema, counted per distinct row): the records the model drew;
* ``table``: the table's bytes as CSV, with the values drawn inside numeric cells.

A change of ``table`` alone is "the same release and rows, values drawn differently inside their cells"; of
``cells`` and ``table``, "the same release, rows drawn differently" (e.g. a dependency that changes float
summation order or a sort's tie order); of ``release``, a change of what was measured or paid.  The test
dependencies are locked (``requirements/test.lock``), so a fresh machine runs under the versions these were
pinned with; ``make test-latest`` runs them against the newest versions instead.

When a change *intends* to change outputs, re-pin: run this file, copy the line printed in the failure message
into that case's ``PINS`` entry, and say why in the commit.
"""

from __future__ import annotations

import hashlib
import json
from typing import NamedTuple

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp.core.encoding import Encoder
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

#: case -> (release, cells, table): see the module docstring.  Re-pin here, one line per case.
PINS = {
    "game-pure-marginals": ('3629ce61c4b62c99', '42b945923136ec9e', 'b6688ecfc9aafb8d'),
    "game-zcdp-parities": ('d44bb1ebc9e155ac', '48d1880858da19ea', 'd4edfa89c236c671'),
    "measure-pure-marginals": ('aa1fbedbe00403e3', 'bd60de1c0835d37c', '9624661b25f798ee'),
    "measure-zcdp-conjunctions": ('08b60bbfafc5800b', 'b6feddd23560a263', '771f2d7b39052c34'),
    "measure-zcdp-learned-domain": ('8aec0a8ef59eb113', '026be7b4f9336eac', '1976c36239a71d8e'),
    "measure-zcdp-marginals": ('85682553651e6efe', '4d24973907390bd5', '86a8a7d8f323b50f'),
    "measure-zcdp-privtree": ('7868237637f3ca5d', 'f02481178cbccd39', '08c6e95192f90735'),
    "measure-zcdp-units": ('e20dd386dd967de7', 'b16ec3bd5fc281f5', '3da3efe809fd3c7f'),
    "measure-zcdp-wide": ('18741fe8a162dc2d', 'd91c68ba753927be', 'e8a1651a4f7cfe17'),
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


class Pin(NamedTuple):
    """The three hashes of a case (see the module docstring)."""

    release: str
    cells: str
    table: str


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _pin(case: dict) -> Pin:
    kwargs = dict(case)
    df, schema = _table(kwargs.pop("table", "demo"))
    schema = kwargs.pop("schema", schema)
    if schema is None:
        df = df[kwargs["categorical"]]
    res = synthdp.generate_synthetic(df, schema=schema, random_state=7, progress=False, **kwargs)
    codes = Encoder(res.schema).encode(res.data)
    rows, counts = np.unique(codes, axis=0, return_counts=True)
    return Pin(release=_sha(json.dumps(res.report.to_dict(), sort_keys=True, default=repr)),
               cells=_sha(json.dumps([[*map(int, r), int(c)] for r, c in zip(rows, counts)])),
               table=_sha(res.data.to_csv(index=False)))


def what_changed(got: Pin, pinned: Pin) -> str:
    """The failure's first words: which of the three parts moved, in the order a reader should look."""
    if got.release != pinned.release:
        return "the release changed (what was measured, its noise scales, the ledger, the learned domains or the plan)"
    if got.cells != pinned.cells:
        return ("the same release, rows drawn differently (the model's sampling: float summation order, a sort's "
                "tie order, the random stream)")
    return "the same release and rows per cell, values drawn differently inside their cells"


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_seed_same_release_rows_and_table(name):
    got, pinned = _pin(CASES[name]), Pin(*PINS[name])
    assert got == pinned, (
        f"case {name!r}: {what_changed(got, pinned)}.  If the change is intended, re-pin with one line in "
        f"tests/repository/test_regression_pin.py PINS:\n    \"{name}\": {tuple(got)!r},")


def test_the_message_names_the_part_that_changed():
    pinned = Pin("r", "c", "t")
    assert what_changed(Pin("x", "y", "z"), pinned).startswith("the release changed")
    assert what_changed(Pin("r", "y", "z"), pinned).startswith("the same release, rows drawn differently")
    assert what_changed(Pin("r", "c", "z"), pinned).startswith("the same release and rows per cell")
