"""Where inside its cell a synthetic numeric value goes: one shared quantile for columns that move together
(docs/privacy.md §11.3).

Post-processing of the synthetic code matrix: the groups and the directions
are read off the *synthetic* rows' cell indices, the quantiles drawn from the
run's post-processing generator; nothing here sees the private table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from synthdp.core.schema import Schema

__all__ = ["GROUP_CORRELATION", "QuantileGroup", "quantile_groups", "shared_quantiles"]

#: Public: two numeric columns share a quantile when the Spearman correlation of their synthetic cell indices is at
#: least this, in absolute value.
GROUP_CORRELATION = 0.5


@dataclass(frozen=True)
class QuantileGroup:
    """Numeric columns drawn with one quantile per row; ``signs[i] = -1``: column ``i`` takes ``1 - U``."""

    columns: tuple[str, ...]
    signs: tuple[int, ...]


def _cell_ranks(codes: np.ndarray, missing: int | None) -> pd.Series:
    """The rows' cell indices, missing cells as NaN (left out of a correlation)."""
    values = pd.Series(codes, dtype="float64")
    return values.where(values != missing) if missing is not None else values


def quantile_groups(codes: np.ndarray, schema: Schema) -> tuple[QuantileGroup, ...]:
    """Groups of numeric columns joined along pairs whose synthetic cell indices correlate (Spearman) by at least
    :data:`GROUP_CORRELATION` in absolute value; each group's sign is relative to its first column (schema order),
    along the pairs that joined it.  Columns in no pair form no group."""
    numeric = [j for j, a in enumerate(schema.attributes) if a.kind == "numeric"]
    if len(numeric) < 2 or len(codes) < 2:
        return ()
    frame = pd.DataFrame({j: _cell_ranks(codes[:, j], schema.attributes[j].missing_code) for j in numeric})
    corr = frame.corr(method="spearman").fillna(0.0)
    sign, groups = {}, []
    for start in numeric:  # breadth-first over the pairs that pass, from the first column not yet placed
        if start in sign:
            continue
        sign[start], members, queue = 1, [start], [start]
        while queue:
            j = queue.pop(0)
            for k in numeric:
                if k not in sign and abs(corr.loc[j, k]) >= GROUP_CORRELATION:
                    sign[k] = sign[j] * (1 if corr.loc[j, k] > 0 else -1)
                    members.append(k)
                    queue.append(k)
        if len(members) > 1:
            members.sort()
            groups.append(QuantileGroup(tuple(schema.attributes[j].name for j in members),
                                        tuple(sign[j] for j in members)))
    return tuple(groups)


def shared_quantiles(codes: np.ndarray, schema: Schema, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Per column of a :func:`quantile_groups` group, each row's quantile inside its cell (``U`` or ``1 - U``, one
    ``U`` per row and group, drawn from ``rng``)."""
    out = {}
    for group in quantile_groups(codes, schema):
        shared = rng.random(len(codes))
        for column, sign in zip(group.columns, group.signs):
            out[column] = shared if sign > 0 else 1.0 - shared
    return out
