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

import pytest

import synthdp
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
}

#: case -> (sha256 of the table as CSV, sha256 of the release report), first 16 hex digits each.
#: Re-pin here, one line per case.
PINS = {
    "game-pure-marginals": ("b6688ecfc9aafb8d", "24244df1e0f418fa"),
    "game-zcdp-parities": ("d4edfa89c236c671", "6b04d123e7b1826c"),
    "measure-zcdp-conjunctions": ("3ac8f07ef64dbf76", "99954176d2ff5956"),
    "measure-zcdp-learned-domain": ("230372eca8b93223", "5a39f4fc7e8d877b"),
    "measure-zcdp-marginals": ("8c890fc64b194fde", "fbbf2a30776ea0e4"),
}

N_ROWS = 300


def _hashes(case: dict) -> tuple[str, str]:
    kwargs = dict(case)
    df = demo_dataframe(n=N_ROWS, seed=3)
    schema = kwargs.pop("schema", demo_schema())
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
