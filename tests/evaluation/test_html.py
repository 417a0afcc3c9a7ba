"""The quality page's worst-pair tables: folded to the bins holding the largest shares, within a fixed width."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from synthdp.evaluation.html import PAIR_TABLE_BINS, fold_pair_table, render
from synthdp.quality import OWNER_ONLY, PairTable, quality_report


def _wide_text(n: int, seed: int) -> pd.DataFrame:
    """Two text columns of 60 values each with skewed shares, related to each other, and a number."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, 61) ** 1.2
    first = rng.choice(60, n, p=weights / weights.sum())
    second = np.where(rng.random(n) < 0.5, first, rng.choice(60, n, p=weights / weights.sum()))
    return pd.DataFrame({"shop": [f"shop number {i}" for i in first], "town": [f"town {i}" for i in second],
                         "amount": rng.exponential(100, n)})


def test_fold_keeps_the_largest_bins_of_either_table_and_sums_the_rest():
    rng = np.random.default_rng(0)
    real, synthetic = rng.dirichlet(np.ones(30 * 20)).reshape(30, 20), rng.dirichlet(np.ones(30 * 20)).reshape(30, 20)
    synthetic[29] *= 0.0
    synthetic[29, 0] = 0.5  # a row rare in real and piled up in synthetic is kept
    synthetic /= synthetic.sum()
    table = PairTable(("a", "b"), tuple(f"r{i}" for i in range(30)), tuple(f"c{j}" for j in range(20)),
                      tuple(map(tuple, real)), tuple(map(tuple, synthetic)))
    folded = fold_pair_table(table, 5)
    rows = np.argsort(-np.maximum(real.sum(1), synthetic.sum(1)), kind="stable")[:4]
    assert folded.row_labels == tuple(f"r{i}" for i in sorted(rows)) + ("(26 others)",) and "r29" in folded.row_labels
    assert len(folded.column_labels) == 5 and folded.column_labels[-1] == "(16 others)"
    for side, shares in (("real", real), ("synthetic", synthetic)):
        cells = np.array(getattr(folded, side))
        assert cells.shape == (5, 5) and cells.sum() == pytest.approx(1)
        assert cells[:4, 4].sum() == pytest.approx(shares[np.sort(rows)].sum() - cells[:4, :4].sum())
    small = PairTable(("a", "b"), ("x", "y"), ("u",), ((0.5,), (0.5,)), ((1.0,), (0.0,)))
    assert fold_pair_table(small) == small


def test_two_wide_text_columns_draw_tables_of_at_most_12_by_12_cells():
    real, syn = _wide_text(3000, 0), _wide_text(3000, 1)
    report = quality_report(real, syn)
    assert report.worst_pairs[0].columns == ("shop", "town") and len(report.worst_pairs[0].row_labels) == 51
    page = render(report, mark=OWNER_ONLY)
    section = page[page.index("<h3>shop x town"):]
    section = section[:section.index("</div>")]
    widths = [int(w) for w in re.findall(r'<svg width="(\d+)"', section)]
    assert len(widths) == 2 and max(widths) <= 110 + 22 * PAIR_TABLE_BINS + 8
    assert section.count(">(40 others)</text>") == 4  # 11 of 51 bins kept: a row and a column in each table
    assert section.count("<title>") == 2 * PAIR_TABLE_BINS * PAIR_TABLE_BINS
