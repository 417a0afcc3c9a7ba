"""Contribution bounding for a privacy unit: at most ``k`` rows per unit, chosen locally (docs/privacy.md §10.6).

With a public unit column (one value per person) and a public bound ``k``,
the run first keeps at most ``k`` rows of every unit, then drops the unit
column.  Every later step is private for neighbours that differ by at most
``k`` rows (Theorem 10.61), which the ledgers' ``contribution_bound`` carries
to every sensitivity.

*The rule is local* (Lemma 10.60).  Which rows of a unit ``w`` are kept
depends only on a key ``kappa`` (128 bits from a child stream of the run's
generator) and on ``w``'s own rows: row ``j`` of ``w`` (its rank among
``w``'s rows in input order) gets the priority ``h_kappa(id(w), j)``, a keyed
64-bit mix of a hash of the unit's text and ``j``, and the ``k`` smallest
priorities are kept (ties by ``j``).  Adding a unit anywhere in the table
therefore never changes the rows kept of another unit, for every key: that
is all the privacy proof needs.  The randomness of the choice serves
accuracy (an unbiased subsample per unit); its quality never touches the
guarantee.

Units are grouped by the exact text of their value (:func:`category_label`:
integral numbers print as integers whatever their dtype; a CSV's unit column
is read as text, never parsed), so every reader and engine groups alike.  A row without
a unit value is an error naming it, raised before any private step.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from synthdp.core.errors import InputError
from synthdp.core.owner import owner_warning
from synthdp.core.schema import category_label
from synthdp.accounting.ledger import UNIT_BOUND_LABEL, Ledger, as_epsilon
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.selection import exponential_mechanism

__all__ = ["AUTO_CANDIDATES", "AUTO_EPSILON_SHARE", "AUTO_MAX_ROWS", "AUTO_QUANTILE", "Bounding", "ChosenBound",
           "DROPPED_SHARE", "bounded_rows", "bounding_key", "bound_frame", "candidates_text", "choose_rows_per_unit",
           "keep_mask", "rows_per_unit", "unit_hash", "unit_text", "warn_dropped_rows"]

#: ``max_rows_per_unit="auto"``: the public share of epsilon spent choosing ``k``, the largest ``k`` considered
#: and the quantile of rows per unit aimed at (docs/privacy.md §10.6, Proposition 10.64).
AUTO_EPSILON_SHARE = Fraction(1, 20)
AUTO_MAX_ROWS = 32
AUTO_QUANTILE = Fraction(9, 10)
#: The public range of ``k``: the choice ranges over those of them whose plan passes (docs/privacy.md §10.6).
AUTO_CANDIDATES = tuple(range(1, AUTO_MAX_ROWS + 1))

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def bounding_key(rng: PrivateRandom) -> np.ndarray:
    """The key ``kappa`` of the bounding rule: two uniform 64-bit words from a child stream of ``rng``."""
    return rng.spawn().random_words(2)


def unit_text(values: pd.Series, column: str, first_row: int = 0) -> np.ndarray:
    """The units as text (an object array), or :class:`InputError` naming the first row without a unit."""
    missing = values.isna().to_numpy()
    if missing.any():
        row = first_row + int(np.flatnonzero(missing)[0])
        raise InputError(f"privacy unit column {column!r} is missing at data row {row} ({int(missing.sum())} row(s) "
                         "in all): every row needs its unit; drop those rows or give each its own unit value")
    if pd.api.types.is_string_dtype(values.dtype) and values.dtype != object:
        return values.astype(str).to_numpy(dtype=object)
    return values.map(category_label).to_numpy(dtype=object)  # 7, np.int64(7) and 7.0 are all "7"


def unit_hash(text: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each unit's text (deterministic across processes and engines)."""
    return pd.util.hash_array(np.asarray(text, dtype=object), categorize=False)


def _mix(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser, a bijection of 64-bit words with full avalanche."""
    x = (x ^ (x >> np.uint64(30))) * _MIX1
    x = (x ^ (x >> np.uint64(27))) * _MIX2
    return x ^ (x >> np.uint64(31))


def _priorities(ids: np.ndarray, ranks: np.ndarray, key: np.ndarray) -> np.ndarray:
    """``h_kappa(id, j)``: the keyed mix of a unit's hash and a row's rank in it (wrapping uint64 arithmetic)."""
    with np.errstate(over="ignore"):
        a = _mix(ids.astype(np.uint64) ^ np.uint64(key[0]))
        b = _mix(ranks.astype(np.uint64) * _GOLDEN + np.uint64(key[1]))
        return _mix(a ^ b)


def _ranks(sorted_groups: np.ndarray) -> np.ndarray:
    """For sorted group labels, each row's position within its group (0, 1, ...)."""
    n = len(sorted_groups)
    starts = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]]) if n else np.zeros(0, np.int64)
    return np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))


def keep_mask(groups: np.ndarray, ids: np.ndarray, positions: np.ndarray, k: int, key: np.ndarray) -> np.ndarray:
    """Which rows to keep: per unit (``groups``, exact), the ``k`` rows of smallest priority (Lemma 10.60).

    ``ids`` is each row's unit hash and ``positions`` its input position (any
    integers ordering the rows of a unit as in the input); ``j`` is the rank of
    a row among its unit's rows by position.  Nothing here reads another
    unit's rows, so the kept rows of a unit are a function of ``key`` and of
    that unit's rows alone.
    """
    by_position = np.lexsort((positions, groups))
    g = groups[by_position]
    j = _ranks(g)
    priority = _priorities(ids[by_position], j, key)
    by_priority = np.lexsort((j, priority, g))
    keep = np.zeros(len(groups), dtype=bool)
    keep[by_position[by_priority[_ranks(g[by_priority]) < k]]] = True
    return keep


def bound_frame(df: pd.DataFrame, unit: str, k: int, key: np.ndarray) -> pd.DataFrame:
    """``df`` with at most ``k`` rows per unit of column ``unit`` (docs/privacy.md §10.6), without that column.

    The kept rows stay in input order with a fresh index.
    """
    if unit not in df.columns:
        raise InputError(f"privacy unit column {unit!r} is not in the data, whose columns are {list(df.columns)}")
    text = unit_text(df[unit], unit)
    groups = pd.factorize(text)[0]
    keep = keep_mask(groups, unit_hash(text), np.arange(len(df)), k, key)
    return df.loc[keep].drop(columns=[unit]).reset_index(drop=True)


@dataclass(frozen=True)
class Bounding:
    """A run's contribution bounding: the unit column, the public ``k`` and the key of the rule (§10.6).

    The key is private randomness: it never goes into a report.
    """

    column: str
    k: int
    key: np.ndarray

    def apply(self, df: pd.DataFrame) -> pd.DataFrame:
        """``df`` with at most ``k`` rows per unit, without the unit column (:func:`bound_frame`)."""
        return bound_frame(df, self.column, self.k, self.key)

    def __repr__(self) -> str:  # never print the key
        return f"Bounding(column={self.column!r}, k={self.k})"


@dataclass(frozen=True)
class ChosenBound:
    """A ``k`` chosen privately (released), what choosing it cost, and the public candidates it was chosen from
    (docs/privacy.md §10.6)."""

    k: int
    epsilon: Fraction
    candidates: tuple[int, ...]
    quantile: Fraction


def candidates_text(candidates: tuple[int, ...]) -> str:
    """The candidates as the report and the ledger name them: ``1..32`` for a run of integers, else a list."""
    if candidates == tuple(range(candidates[0], candidates[-1] + 1)):
        return f"{candidates[0]}..{candidates[-1]}"
    return ", ".join(map(str, candidates))


def rows_per_unit(df: pd.DataFrame, unit: str) -> np.ndarray:
    """Each unit's number of rows ``m_w`` in the raw table (units in no released order); refuses a row without
    a unit, naming it (:func:`unit_text`)."""
    return np.bincount(pd.factorize(unit_text(df[unit], unit))[0])


def bounded_rows(rows: np.ndarray, k: int) -> int:
    """``sum_w min(m_w, k)``: exactly the rows that keeping at most ``k`` rows per unit keeps, whatever the key
    (Lemma 10.60's rule keeps ``min(m_w, k)`` of each unit).  Private: for the owner's size checks only."""
    return int(np.minimum(rows, k).sum())


def rows_per_unit_scores(rows: np.ndarray, max_rows: int, quantile: Fraction) -> np.ndarray:
    """``u(k) = -|b #{units with min(rows, max_rows) <= k} - a #units|`` for ``k = 1..max_rows``, ``quantile = a/b``.

    The largest candidate stands for "``max_rows`` or more" (Proposition 10.64): every unit counts as held by it,
    so when most units hold more rows than any candidate the choice leans to ``max_rows`` instead of being flat.
    """
    held = np.cumsum(np.bincount(np.minimum(rows, max_rows), minlength=max_rows + 1))[1:max_rows + 1]
    return -np.abs(quantile.denominator * held - quantile.numerator * len(rows))


def choose_rows_per_unit(rows: np.ndarray, *, epsilon: Fraction, rng: PrivateRandom, ledger: Ledger, relation: str,
                         candidates: tuple[int, ...] = AUTO_CANDIDATES,
                         quantile: Fraction = AUTO_QUANTILE) -> ChosenBound:
    """``k`` among the public ``candidates`` by the exponential mechanism, near the ``quantile`` of the rows per unit
    ``rows`` (:func:`rows_per_unit`; Proposition 10.64).

    ``candidates`` are a function of public inputs only (the ``k`` whose plan passes,
    :func:`synthdp.plan.candidate_plans`): a range read off the data would not be private.  The largest
    candidate stands for "that many or more".  Runs on the raw table, before bounding, and is charged
    ``epsilon`` to ``ledger`` ahead of every other spend (the score's sensitivity ``max(a, b - a)`` is stated per
    unit, so the ledger's bound must still be 1); the caller then fixes the ledger's bound to the released ``k``.
    """
    if ledger.contribution_bound != 1:
        raise InputError("the rows per unit are chosen before the ledger's contribution bound is fixed")
    if not candidates or list(candidates) != sorted(set(candidates)) or candidates[0] < 1:
        raise InputError(f"the candidates for k must be increasing positive integers, got {candidates!r}")
    epsilon, quantile = as_epsilon(epsilon), Fraction(quantile)
    a, b = quantile.numerator, quantile.denominator
    scores = rows_per_unit_scores(rows, candidates[-1], quantile)[np.asarray(candidates) - 1]
    label = f"{UNIT_BOUND_LABEL}: k in {candidates_text(candidates)} near quantile {quantile}"
    pick = exponential_mechanism(scores, epsilon=epsilon, sensitivity=max(a, b - a), rng=rng, ledger=ledger,
                                 relation=relation, label=label, ahead=True)
    return ChosenBound(candidates[pick], epsilon, tuple(candidates), quantile)


#: The share of the rows that contribution bounding may drop before the owner is warned (docs/privacy.md §10.8).
DROPPED_SHARE = 0.2


def warn_dropped_rows(before: int, after: int, k: int) -> None:
    """Tell the owner, by an :func:`owner_warning`, when keeping at most ``k`` rows per unit dropped more than
    :data:`DROPPED_SHARE` of the rows.  Reads the private row counts: never in the release (§10.8)."""
    if before and (before - after) / before > DROPPED_SHARE:
        owner_warning(f"keeping at most max_rows_per_unit={k} rows per unit dropped {before - after} of the "
                      f"{before} rows ({(before - after) / before:.0%}); the synthetic table will stand for {k} "
                      "rows of each unit. Give a larger public max_rows_per_unit (what a unit may hold by the design of "
                      "the data), or aggregate each unit's rows first")
