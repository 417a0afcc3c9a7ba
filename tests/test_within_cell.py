"""Values inside a cell (docs/privacy.md §11.3): columns whose synthetic cells move together share a quantile."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import kstest, spearmanr

from synthdp.core import within_cell
from synthdp.core.encoding import Encoder
from synthdp.core.schema import Attribute, Schema


def _schema() -> Schema:
    cuts = tuple(float(c) for c in range(10, 100, 10))
    return Schema((Attribute("a", "numeric", bounds=(0.0, 100.0), cuts=cuts),
                   Attribute("b", "numeric", bounds=(0.0, 100.0), cuts=cuts),
                   Attribute("c", "numeric", bounds=(0.0, 100.0), cuts=cuts),
                   Attribute("d", "numeric", bounds=(0.0, 100.0), cuts=cuts, missing=True),
                   Attribute("t", "categorical", categories=("x", "y"))))


def _codes(n=4000, seed=0) -> np.ndarray:
    """a and b move together, c against them, d apart (a tenth missing), t a text column."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 10, n)
    b = np.clip(a + rng.integers(-1, 2, n), 0, 9)
    c = 9 - a
    d = np.where(rng.random(n) < 0.1, 10, rng.integers(0, 10, n))
    return np.column_stack([a, b, c, d, rng.integers(0, 2, n)])


def test_groups_and_signs_come_from_the_synthetic_cells():
    groups = within_cell.quantile_groups(_codes(), _schema())
    assert groups == (within_cell.QuantileGroup(("a", "b", "c"), (1, 1, -1)),)


def test_shared_quantiles_make_values_comonotone_inside_cells_and_keep_each_column_uniform():
    codes = _codes()
    data = Encoder(_schema()).decode(codes, numeric="uniform", rng=np.random.default_rng(0))
    same = codes[:, 0] == codes[:, 1]
    within_a, within_b, within_c = (data[k].to_numpy(float) % 10 for k in "abc")
    assert np.allclose(within_a[same], within_b[same])            # one quantile for a and b
    assert np.allclose(within_a, 10 - within_c)                   # c, against a, takes 1 - U
    assert abs(spearmanr(within_a, data["d"].to_numpy(float) % 10, nan_policy="omit")[0]) < 0.1  # d draws its own
    assert kstest(within_a / 10, "uniform").pvalue > 0.01         # still uniform inside the cells


def test_the_values_are_a_function_of_the_synthetic_codes_and_the_generator_only():
    """Same codes and seed: same values (nothing else is read); another seed: other values."""
    codes = _codes()
    first = Encoder(_schema()).decode(codes, numeric="uniform", rng=np.random.default_rng(3))
    again = Encoder(_schema()).decode(codes.copy(), numeric="uniform", rng=np.random.default_rng(3))
    other = Encoder(_schema()).decode(codes, numeric="uniform", rng=np.random.default_rng(4))
    pd.testing.assert_frame_equal(first, again)
    assert not first["a"].equals(other["a"])


def test_integer_columns_take_the_integer_at_the_quantile():
    schema = Schema((Attribute("i", "numeric", bounds=(0, 99), cuts=(50.0,), dtype="int64"),
                     Attribute("j", "numeric", bounds=(0, 99), cuts=(50.0,), dtype="int64")))
    codes = np.repeat(np.array([[0, 0], [1, 1]]), 500, axis=0)
    data = Encoder(schema).decode(codes, numeric="uniform", rng=np.random.default_rng(0))
    assert (data["i"] == data["j"]).all() and data["i"].between(0, 99).all()
    assert set(data["i"][:500]) <= set(range(50)) and len(set(data["i"][:500])) > 40
