"""Step 1 of docs/privacy.md §12: bound each family (a parent key with its parent rows and child rows) first.

Missing keys never match; a key held by several parent rows keeps one; a child row whose foreign key is missing
or matches no parent is an orphan and is dropped; each parent keeps at most ``k`` of its children.  Which rows are
kept is §10.6's local rule (:func:`~synthdp.mechanisms.units.keep_mask`) on each family's own rows, so adding a
family never changes what another family keeps (Lemma 12.1).  The counts of merged keys and orphans are private:
for the owner's warnings only, never in a release.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from synthdp.core.owner import owner_warning
from synthdp.linked.links import Link
from synthdp.mechanisms.units import keep_mask, unit_hash, unit_text, warn_dropped_rows

__all__ = ["Families", "bound_families", "bound_parents", "counted_families", "key_text", "unbounded_families",
           "warn_owner"]


@dataclass(frozen=True)
class Families:
    """The bounded pair: the kept parent rows and child rows (keys dropped), each kept child's parent (an index
    into ``parents``), and each parent's key text (None for a missing key) and number of kept children ``m``.
    ``children`` and ``parent_of`` are None where the child table stays in its files (engine='dask',
    :func:`counted_families`): its passes keep the same rows as they read them.

    ``merged_keys``, ``orphans`` and ``children_before`` are private counts, for the owner's warnings only.
    """

    parents: pd.DataFrame
    keys: np.ndarray
    m: np.ndarray
    children: pd.DataFrame | None
    parent_of: np.ndarray | None
    merged_keys: int
    orphans: int
    children_before: int


def key_text(values: pd.Series, column: str) -> np.ndarray:
    """Each key as exact text (§10.6's reading of a unit column: 7, 7.0 and "7" as a CSV reads it are one key),
    None where it is missing: a missing key is nobody's and matches nothing."""
    text = np.full(len(values), None, dtype=object)
    present = values.notna().to_numpy()
    text[present] = unit_text(values[present], column)
    return text


def _kept(text: np.ndarray, k: int, key: np.ndarray) -> np.ndarray:
    """Which rows of the present keys ``text`` to keep: at most ``k`` per key, by §10.6's local rule."""
    groups = pd.factorize(text)[0]
    return keep_mask(groups, unit_hash(text), np.arange(len(text)), k, key)


def bound_parents(parent: pd.DataFrame, link: Link, parent_key: np.ndarray) -> tuple[pd.DataFrame, np.ndarray, int]:
    """Step 1's parent rows: one row kept per key (with the rule's key ``parent_key``), every row without a key
    kept; as ``(rows without the key column, each row's key text or None, how many keys several rows held)``."""
    keys = key_text(parent[link.key], f"{link.parent}.{link.key}")
    present = np.flatnonzero(keys != None)  # noqa: E711 (elementwise on an object array)
    keep = np.ones(len(parent), dtype=bool)
    keep[present] = _kept(keys[present], 1, parent_key)
    merged = int((pd.Series(keys[present]).value_counts() > 1).sum())  # keys held by several rows
    return parent.loc[keep].drop(columns=[link.key]).reset_index(drop=True), keys[keep], merged


def bound_families(parent: pd.DataFrame, child: pd.DataFrame, link: Link, k: int, parent_key: np.ndarray,
                   child_key: np.ndarray) -> Families:
    """The families of ``parent`` and ``child`` bounded as docs/privacy.md §12 step 1 says, with the rule's keys
    ``parent_key`` (one parent row per key) and ``child_key`` (at most ``k`` children per parent)."""
    parents, keys, merged = bound_parents(parent, link, parent_key)
    foreign = key_text(child[link.foreign_key], f"{link.child}.{link.foreign_key}")
    positions = np.flatnonzero(keys != None)  # noqa: E711
    found = pd.Index(keys[positions]).get_indexer(foreign)  # unique after step 2; a missing key finds nothing
    matched = np.flatnonzero(found >= 0)
    kept = matched[_kept(foreign[matched], k, child_key)] if len(matched) else matched
    parent_of = positions[found[kept]]
    dropped = [link.foreign_key] + ([link.child_key] if link.child_key else [])
    children = child.iloc[kept].drop(columns=dropped).reset_index(drop=True)
    m = np.bincount(parent_of, minlength=len(parents)).astype(np.int64)
    return Families(parents, keys, m, children, parent_of, merged, len(child) - len(matched), len(matched))


def counted_families(parent: pd.DataFrame, counts: pd.Series, missing: int, link: Link, k: int,
                     parent_key: np.ndarray) -> Families:
    """The families of ``parent`` and a child table left in its files, from the child's rows per foreign key
    ``counts`` (by exact text, :func:`key_text`) and its rows without one, ``missing``: the parent rows
    :func:`bound_families` keeps and, for each, ``m = min(c, k)`` of its ``c`` matched children, which is what
    §10.6's rule keeps of them whatever its key (Lemma 10.60).  The child rows themselves are kept by the passes
    over the files, by the same rule (:mod:`synthdp.linked.files`)."""
    parents, keys, merged = bound_parents(parent, link, parent_key)
    present = keys != None  # noqa: E711
    matched = np.zeros(len(keys), dtype=np.int64)
    matched[present] = counts.reindex(keys[present], fill_value=0).to_numpy(dtype=np.int64)
    m = np.minimum(matched, k)
    return Families(parents, keys, m, None, None, merged, int(counts.sum()) + missing - int(matched.sum()),
                    int(matched.sum()))


def unbounded_families(parent: pd.DataFrame, child: pd.DataFrame, link: Link, parent_key: np.ndarray,
                       child_key: np.ndarray) -> Families:
    """The families of step 1 before its last rule, the cap on children: one parent row per key (with the key
    ``parent_key``, so the same rows as :func:`bound_families` keeps), orphans dropped, every matched child kept.
    ``m`` is then each family's row count ``m_w`` of docs/privacy.md §12 ("Choosing k privately"): its child rows,
    0 for a parent without children or without a key.  Private: the input of the private choice of ``k`` and of
    the owner's checks ahead of it."""
    return bound_families(parent, child, link, max(len(child), 1), parent_key, child_key)


def warn_owner(families: Families, link: Link, k: int) -> None:
    """Tell the owner (an :func:`owner_warning`, never the release) how many parent keys were merged, how many
    child rows were orphans, and whether bounding cut more than a fifth of the children (§10.8)."""
    if families.merged_keys:
        owner_warning(f"{families.merged_keys} key(s) of {link.parent}.{link.key} were held by several rows: one "
                      "row of each, chosen at random, was kept (docs/privacy.md §12); make the key unique to keep "
                      "the one you mean")
    if families.orphans:
        owner_warning(f"{families.orphans} row(s) of {link.child} have a missing {link.foreign_key} or one that "
                      f"matches no {link.parent}.{link.key}: they were dropped (docs/privacy.md §12)")
    warn_dropped_rows(families.children_before, int(families.m.sum()), k)
