"""The column figures of the quality report: values and support scores against brute force and by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthdp.evaluation.similarity import (is_constant, outside_shares, read_columns, shape_score, support_score,
                                           top_values, values_score)


def _column(real, synthetic):
    (column,) = read_columns(pd.DataFrame({"v": real}), pd.DataFrame({"v": synthetic}))
    return column


def _brute_values(real: pd.Series, synthetic: pd.Series, top: int) -> float:
    """The TV complement over the ``top`` most frequent values of each side and the rest, from value counts."""
    p, q = (s.dropna().value_counts(normalize=True, sort=False) for s in (real, synthetic))
    picked = set(p.sort_values(ascending=False, kind="stable").index[:top]) | set(
        q.sort_values(ascending=False, kind="stable").index[:top])
    gap = sum(abs(p.get(v, 0) - q.get(v, 0)) for v in picked)
    rest = abs(sum(p.get(v, 0) for v in p.index if v not in picked) - sum(q.get(v, 0) for v in q.index
                                                                           if v not in picked))
    return 1 - 0.5 * (gap + rest)


@pytest.mark.parametrize("seed", range(4))
def test_values_score_is_the_tv_complement_over_the_top_values_and_the_rest(seed):
    rng = np.random.default_rng(seed)
    real = pd.Series(np.where(rng.random(500) < 0.3, 0.0, rng.integers(1, 40, 500)))
    synthetic = pd.Series(np.where(rng.random(400) < 0.1, 7.0, rng.integers(0, 40, 400)).astype(float))
    synthetic[::13] = np.nan  # missing values are left out of both tables' shares
    assert values_score(_column(real, synthetic), 5) == pytest.approx(_brute_values(real, synthetic, 5))
    texts = [s.map(lambda v: None if pd.isna(v) else f"c{int(v)}") for s in (real, synthetic)]
    assert values_score(_column(*texts), 5) == pytest.approx(_brute_values(*texts, 5))


def test_a_pile_up_counts_in_full_in_values_and_half_in_ks():
    real = np.arange(1000.0)
    synthetic = np.where(np.arange(1000) % 5 == 0, 500.0, np.arange(1000.0))  # 20% at 500, 0.1% in real
    column = _column(real, synthetic)
    assert 500.0 in top_values(column, 5)
    assert values_score(column, 5) == pytest.approx(1 - 0.199)  # the pile-up's whole gap
    assert shape_score(column) == pytest.approx(1 - 0.1)  # the CDFs part by 0.1 at most, on either side of 500


@pytest.mark.parametrize("real, synthetic, shares", [
    ([1.0, 2, 3, 4], [3.0, 4, 5, 6], (0.5, 0.5)),
    ([0.0] * 8 + [50.0, 100.0], [0.0] * 9 + [40.0], (0.2, 0.0)),  # a range clipped short at 40
    (list("aabcdd"), list("aab") + ["new"], (0.5, 0.25)),  # 'c' and both 'd' lost; one made-up category
    ([1.0, 2.0], [np.nan, np.nan], (1.0, 0.0)),
])
def test_support_is_what_lies_outside_the_other_table(real, synthetic, shares):
    column = _column(real, synthetic)
    assert outside_shares(column) == pytest.approx(shares)
    assert support_score(column) == pytest.approx(max(0.0, 1 - sum(shares)))


@pytest.mark.parametrize("real, synthetic, constant", [
    (list("abab"), list("aaaa"), True), ([1.0, 2.0], [2.0, np.nan], True), (list("aaaa"), list("aa"), False),
    (list("abab"), list("abbb"), False), ([1.0, 2.0], [np.nan, np.nan], False),
])
def test_constant_means_one_synthetic_value_where_the_real_column_varies(real, synthetic, constant):
    assert is_constant(_column(real, synthetic)) is constant
