"""The release's missing shares against the real table's, for the data owner only (docs/privacy.md §10.8).

The release's self-check (:mod:`synthdp.release_check`) reads the synthetic
table alone: it can say that a column comes back mostly missing, not whether
the real column is mostly missing too, nor that a column missing nowhere now
comes back a quarter missing.  This comparison reads the real counts, so it is
not free: it goes to the person running synthdp only
(:func:`~synthdp.core.owner.owner_warning`), after the release is made, and no
step of the run depends on it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from synthdp.core.data import AggregatedData
from synthdp.core.owner import owner_warning
from synthdp.core.schema import Schema
from synthdp.core.tallies import Tallies
from synthdp.release_check import ColumnFinding

__all__ = ["MISSING_RISE", "real_missing_shares", "warn_missing_shares"]

#: Warn the owner when a column comes back missing in this many more rows (a share) than the real table.
MISSING_RISE = 0.10


def real_missing_shares(tallies: Tallies | None) -> dict[str, float]:
    """The share of rows missing in the real table of each column whose domain was learned, read off its tally
    (encoding also makes missing the values a learned domain left out, so the counted rows cannot say this)."""
    if tallies is None or not tallies.rows:
        return {}
    present = {c: sum(counts.values()) for c, counts in tallies.labels.items()}
    present |= {c: tally.rows for c, tally in tallies.numbers.items()}
    return {c: 1 - rows / tallies.rows for c, rows in present.items()}


def warn_missing_shares(real: AggregatedData, codes: np.ndarray, schema: Schema, findings: list[ColumnFinding],
                        raw: Mapping[str, float]) -> None:
    """Warn the owner of each column that comes back missing in :data:`MISSING_RISE` more of its rows than in the
    real table, saying how much the learned domain left out; and of each column the self-check calls mostly
    missing that the real table holds as missing too (the warning describes the data).

    ``real``: the counted rows and ``codes`` the released table, both encoded with ``schema``; ``raw``:
    :func:`real_missing_shares`, for the columns whose domain was learned (elsewhere the encoded share is the real
    one).
    """
    if not len(codes) or not real.n:
        return
    flagged = {f.column for f in findings if f.problem == "missing"}
    for j, attr in enumerate(schema.attributes):
        if not attr.missing:
            continue
        encoded = float(real.marginal((j,))[attr.missing_code] / real.n)
        before = min(raw.get(attr.name, encoded), encoded)
        after = float(np.mean(codes[:, j] == attr.missing_code))
        left_out = encoded - before
        if after - before > MISSING_RISE:
            cause = (f"{left_out:.0%} of the rows hold values the learned domain left out (they come back missing): "
                     "give its categories publicly, or group its rare values into larger ones"
                     if left_out > MISSING_RISE / 2 else
                     "the model spreads the missing rows too widely: raise epsilon, or give its domain publicly")
            owner_warning(f"column {attr.name!r} comes back {after:.0%} missing, and {before:.0%} of the real "
                          f"table's rows are missing; {cause}")
        elif attr.name in flagged:
            owner_warning(f"column {attr.name!r}: {before:.0%} of the real table's rows are missing too, so the "
                          f"release's warning that it comes back {after:.0%} missing describes the data")
