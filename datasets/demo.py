"""A small, deterministic, correlated demo table that the project generates itself.

The table is drawn from a fixed Bayesian network over six categorical
columns (child <- parents)::

    region, age_group               (roots)
    education   <- age_group, region
    employment  <- age_group, education
    income_band <- employment, education, region
    has_car     <- income_band, region

Each column is drawn given its parents from a log-linear model: a base score
per value plus one score table per parent, turned into probabilities by a
softmax. Used by ``make demo`` and the examples; needs no data file.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthdp.core.errors import InputError
from synthdp.core.schema import Attribute, Schema

#: Public categories of the demo columns, in code order.
DEMO_CATEGORIES: dict[str, tuple] = {
    "region": ("North", "South", "East", "West"),
    "age_group": ("18-29", "30-44", "45-64", "65+"),
    "education": ("primary", "secondary", "tertiary"),
    "employment": ("employed", "unemployed", "student", "retired"),
    "income_band": ("low", "middle", "high"),
    "has_car": (False, True),
}

# (column, base log-scores, {parent: log-score table of shape (parent values, column values)}),
# in an order where parents come first.
_NETWORK: tuple[tuple[str, tuple[float, ...], dict[str, tuple[tuple[float, ...], ...]]], ...] = (
    ("region", (0.2, 0.0, 0.0, -0.2), {}),
    ("age_group", (0.0, 0.3, 0.3, -0.3), {}),
    ("education", (0.0, 0.6, 0.0), {
        "age_group": ((-1.0, 0.0, 0.8), (-0.5, 0.0, 0.6), (0.0, 0.0, 0.0), (1.0, 0.0, -0.8)),
        "region": ((0.0, 0.0, 0.6), (0.4, 0.0, -0.4), (0.0, 0.0, 0.0), (0.2, 0.0, -0.2)),
    }),
    ("employment", (1.5, 0.0, -1.0, -1.0), {
        "age_group": ((0.0, 0.3, 2.5, -5.0), (0.5, 0.0, -1.5, -5.0), (0.3, 0.0, -3.0, 0.0), (-2.0, -1.0, -5.0, 3.5)),
        "education": ((-0.5, 0.8, -1.0, 0.0), (0.0, 0.0, 0.0, 0.0), (0.6, -0.8, 0.8, 0.0)),
    }),
    ("income_band", (0.5, 0.3, -1.0), {
        "employment": ((0.0, 0.5, 0.5), (2.0, -1.5, -3.0), (2.0, -1.0, -3.0), (0.5, 0.5, -0.5)),
        "education": ((1.0, 0.0, -1.5), (0.0, 0.0, 0.0), (-0.8, 0.2, 1.5)),
        "region": ((-0.3, 0.0, 0.4), (0.4, 0.0, -0.4), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    }),
    ("has_car", (0.0, 0.2), {
        "income_band": ((0.8, -0.8), (0.0, 0.0), (-1.0, 1.5)),
        "region": ((0.0, 0.0), (-0.5, 0.5), (0.3, -0.3), (-0.4, 0.4)),
    }),
)


def _draw(rng: np.random.Generator, scores: np.ndarray) -> np.ndarray:
    """One categorical draw per row with probabilities ``softmax(scores)`` (inverse CDF)."""
    probs = np.exp(scores - scores.max(axis=1, keepdims=True))
    cdf = np.cumsum(probs / probs.sum(axis=1, keepdims=True), axis=1)
    codes = (cdf < rng.random(scores.shape[0])[:, None]).sum(axis=1)
    return np.minimum(codes, scores.shape[1] - 1)


def demo_dataframe(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    """``n`` rows of the demo table; the same ``(n, seed)`` always gives the same frame."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError(f"n must be a positive integer, got {n!r}")
    rng = np.random.default_rng(seed)
    codes: dict[str, np.ndarray] = {}
    for column, base, effects in _NETWORK:
        scores = np.tile(np.asarray(base), (n, 1))
        for parent, table in effects.items():
            scores += np.asarray(table)[codes[parent]]
        codes[column] = _draw(rng, scores)
    return pd.DataFrame({
        column: pd.Series(np.asarray(DEMO_CATEGORIES[column], dtype=object)[codes[column]]).infer_objects()
        for column in DEMO_CATEGORIES
    })


def demo_schema() -> Schema:
    """The public schema of :func:`demo_dataframe` (explicit categories; nothing read off data)."""
    return Schema(tuple(
        Attribute(column, "categorical", categories=values, dtype="bool" if column == "has_car" else None)
        for column, values in DEMO_CATEGORIES.items()
    ))
