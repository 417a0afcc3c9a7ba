"""The link's figures of the two-table quality report (:mod:`synthdp.quality`): children per parent, the
strongest parent x child pairs, and whether every child's foreign key is a parent's key.

**Owner-side only**, like the rest of the report: everything here reads the real tables freely.  A family is a
parent key with its children (docs/privacy.md §12): the real pair is read as it is (every child matched to its
parent's key, a key held by several parent rows counted once, a parent row without a key a family with no
children), and, when ``k`` is known, bounded as the release bounds it (each family's children counted up to
``k``), so that the synthetic pair is compared both with the real data and with what the release could model.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from synthdp.core.schema import Schema
from synthdp.evaluation.figures import OWNER_ONLY, PairTable, QualityFigures
from synthdp.evaluation.similarity import joint_shares, pair_codes, read_columns
from synthdp.linked.bounding import key_text
from synthdp.linked.links import Link

#: Bars of the children-per-parent picture: counts ``0 .. CHILD_BARS - 1`` each, the larger ones as one bar.
CHILD_BARS = 20
#: Parent x child pairs whose two-way tables are kept for the page (the strongest real associations).
STRONGEST_PAIRS = 3
#: Broken foreign keys of the synthetic pair quoted on the page.
BROKEN_EXAMPLES = 5


@dataclass(frozen=True)
class ChildCounts:
    """Children per parent: the shares of families with each count (``labels``) in the real pair, in the real pair
    bounded to ``k`` (None without ``k``) and in the synthetic pair, and the total variation distances of the
    synthetic shares from each, over the exact counts."""

    labels: tuple[str, ...]
    real: tuple[float, ...]
    bounded: tuple[float, ...] | None
    synthetic: tuple[float, ...]
    tvd: float
    bounded_tvd: float | None
    k: int | None
    real_mean: float
    synthetic_mean: float


@dataclass(frozen=True)
class Integrity:
    """Whether one side's pair holds together: of its ``children`` rows, ``broken`` have a missing foreign key or
    one that matches no parent key (``examples``: a few of them); ``duplicate_keys`` parent keys are held by
    several rows, ``missing_keys`` parent rows have none."""

    children: int
    broken: int
    examples: tuple[str, ...]
    duplicate_keys: int
    missing_keys: int

    @property
    def holds(self) -> bool:
        """Every child's foreign key is exactly one parent's key, and every parent has a key."""
        return self.broken == 0 and self.duplicate_keys == 0 and self.missing_keys == 0


@dataclass(frozen=True)
class LinkedPair:
    """One parent column against one child column, over the child rows joined to their parents: Cramér's V of
    their binned two-way table in each pair, and the total variation distance between the two tables (numbers
    cut at the real quantiles, :func:`~synthdp.evaluation.similarity.pair_codes`)."""

    parent_column: str
    child_column: str
    real_association: float
    synthetic_association: float
    tvd: float


@dataclass(frozen=True)
class LinkFigures:
    """What the report measured of the link: the pairs are sorted by their real association, strongest first,
    and ``tables`` holds the two-way tables of the first :data:`STRONGEST_PAIRS`."""

    link: Link
    counts: ChildCounts
    integrity: dict[str, Integrity]
    pairs: tuple[LinkedPair, ...]
    tables: tuple[PairTable, ...]

    def warnings(self) -> list[str]:
        """Plain-words warnings about the synthetic pair's keys."""
        check, link = self.integrity["synthetic"], self.link
        out = []
        if check.broken:
            out.append(f"{link.child}.{link.foreign_key}: {check.broken} of {check.children} synthetic rows match no "
                       f"{link.parent}.{link.key} (e.g. {', '.join(map(repr, check.examples))})")
        if check.duplicate_keys:
            out.append(f"{link.parent}.{link.key}: {check.duplicate_keys} synthetic keys are held by several rows")
        if check.missing_keys:
            out.append(f"{link.parent}.{link.key}: {check.missing_keys} synthetic rows have no key")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"link": self.link.describe(), "children_per_parent": asdict(self.counts),
                "integrity": {side: {**asdict(c), "holds": c.holds} for side, c in self.integrity.items()},
                "pairs": [asdict(p) for p in self.pairs], "pair_tables": [asdict(t) for t in self.tables]}


def family_counts(parents: pd.DataFrame, children: pd.DataFrame, link: Link) -> tuple[np.ndarray, np.ndarray]:
    """Each family's number of children (one per distinct parent key, then one with none per parent row without a
    key), and each child row's family (-1 for a child whose foreign key is missing or matches no key)."""
    keys = key_text(parents[link.key], f"{link.parent}.{link.key}")
    present = keys[keys != None]  # noqa: E711 (elementwise on an object array)
    distinct = pd.Index(pd.unique(present))
    family = distinct.get_indexer(key_text(children[link.foreign_key], f"{link.child}.{link.foreign_key}"))
    counts = np.bincount(family[family >= 0], minlength=len(distinct))
    return np.concatenate([counts, np.zeros(len(keys) - len(present), dtype=np.int64)]), family


def integrity(parents: pd.DataFrame, children: pd.DataFrame, link: Link) -> Integrity:
    """The pair's key check (:class:`Integrity`)."""
    keys = key_text(parents[link.key], f"{link.parent}.{link.key}")
    present = pd.Series(keys[keys != None], dtype=object)  # noqa: E711
    _, family = family_counts(parents, children, link)
    broken = key_text(children[link.foreign_key], f"{link.child}.{link.foreign_key}")[family < 0]
    examples = tuple(dict.fromkeys("(missing)" if v is None else v for v in broken))[:BROKEN_EXAMPLES]
    return Integrity(len(children), int((family < 0).sum()), examples, int((present.value_counts() > 1).sum()),
                     int(len(keys) - len(present)))


def _shares(counts: np.ndarray, size: int) -> np.ndarray:
    return np.bincount(counts, minlength=size) / max(len(counts), 1)


def _tvd(a: np.ndarray, b: np.ndarray) -> float:
    """The total variation distance of two samples of counts, over their exact values."""
    size = int(max(a.max(initial=0), b.max(initial=0))) + 1
    return float(0.5 * np.abs(_shares(a, size) - _shares(b, size)).sum())


def _bars(counts: np.ndarray, top: int) -> tuple[float, ...]:
    """The shares of counts ``0 .. top - 1`` and, when ``top`` is :data:`CHILD_BARS`, of all larger ones as one."""
    return tuple(_shares(np.minimum(counts, top - 1), top).tolist())


def child_counts(real: np.ndarray, synthetic: np.ndarray, k: int | None) -> ChildCounts:
    """Children per parent of the real families (``real``), of the real families bounded to ``k`` and of the
    synthetic ones (:class:`ChildCounts`)."""
    bounded = None if k is None else np.minimum(real, k)
    most = int(max(real.max(initial=0), synthetic.max(initial=0)))
    top = min(most + 1, CHILD_BARS)
    labels = tuple(str(c) for c in range(top))
    if most >= CHILD_BARS:
        labels = labels[:-1] + (f">= {CHILD_BARS - 1}",)
    return ChildCounts(labels, _bars(real, top), None if bounded is None else _bars(bounded, top),
                       _bars(synthetic, top), _tvd(synthetic, real),
                       None if bounded is None else _tvd(synthetic, bounded), k, _mean(real), _mean(synthetic))


def _mean(counts: np.ndarray) -> float:
    return float(counts.mean()) if len(counts) else 0.0


def joined_rows(parents: pd.DataFrame, children: pd.DataFrame, link: Link, columns: dict[str, list[str]]
                ) -> pd.DataFrame:
    """Each child row that has a parent, its ``columns[link.child]`` beside its parent's ``columns[link.parent]``
    (the first row of a key held by several), every column named ``table.column``."""
    keys = key_text(parents[link.key], f"{link.parent}.{link.key}")
    rows = np.flatnonzero(keys != None)  # noqa: E711
    first = pd.Series(rows, index=keys[rows]).groupby(level=0, sort=False).first()
    found = pd.Index(first.index).get_indexer(key_text(children[link.foreign_key], f"{link.child}.{link.foreign_key}"))
    matched = np.flatnonzero(found >= 0)
    child = children.iloc[matched][columns[link.child]].reset_index(drop=True)
    parent = parents.iloc[first.to_numpy()[found[matched]]][columns[link.parent]].reset_index(drop=True)
    return pd.concat([parent.add_prefix(f"{link.parent}."), child.add_prefix(f"{link.child}.")], axis=1)


def cramers_v(shares: np.ndarray) -> float:
    """Cramér's V of a two-way table of shares (rows and columns without any share left out): 0 for independent
    columns, 1 when one determines the other; 0 when either side has a single value."""
    shares = shares[shares.sum(axis=1) > 0][:, shares.sum(axis=0) > 0]
    if min(shares.shape) < 2:
        return 0.0
    expected = np.outer(shares.sum(axis=1), shares.sum(axis=0)) / shares.sum()
    phi2 = float(((shares - expected) ** 2 / expected).sum()) / shares.sum()
    return float(np.sqrt(phi2 / (min(shares.shape) - 1)))


def linked_pairs(real: pd.DataFrame, synthetic: pd.DataFrame, link: Link, schema: Schema | None
                 ) -> tuple[tuple[LinkedPair, ...], tuple[PairTable, ...]]:
    """Every parent column against every child column of the joined rows (:func:`joined_rows`), sorted by the
    real association, strongest first, and the two-way tables of the :data:`STRONGEST_PAIRS` strongest."""
    if len(real) == 0 or len(synthetic) == 0:
        return (), ()
    columns = read_columns(real, synthetic, schema)
    bins = {c.name: pair_codes(c) for c in columns}
    parent_side = [c.name for c in columns if c.name.startswith(f"{link.parent}.")]
    child_side = [c.name for c in columns if c.name.startswith(f"{link.child}.")]
    pairs, tables = [], {}
    for p in parent_side:
        for c in child_side:
            shares = [joint_shares(bins[p], bins[c], side) for side in ("real", "synthetic")]
            pairs.append(LinkedPair(p, c, cramers_v(shares[0]), cramers_v(shares[1]),
                                    float(0.5 * np.abs(shares[0] - shares[1]).sum())))
            tables[p, c] = PairTable((p, c), bins[p].labels, bins[c].labels, tuple(map(tuple, shares[0].tolist())),
                                     tuple(map(tuple, shares[1].tolist())))
    ranked = tuple(sorted(pairs, key=lambda pair: -pair.real_association))
    return ranked, tuple(tables[p.parent_column, p.child_column] for p in ranked[:STRONGEST_PAIRS])


@dataclass(frozen=True)
class LinkedFigures:
    """What the two-table quality report holds (:class:`synthdp.quality.LinkedQualityReport`, which adds the
    page): each table's figures (its key columns left out), the link's, and the linked run's release when given.
    **For the data owner only**: statistics of the real tables."""

    tables: dict[str, QualityFigures]
    link: LinkFigures
    release: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def warnings(self) -> tuple[str, ...]:
        """The link's warnings, then each table's, named by table."""
        return (*self.link.warnings(), *(f"{name}: {w}" for name, t in self.tables.items() for w in t.warnings))

    def summary(self) -> str:
        """A few lines for a person: the keys, children per parent, the strongest pair, each table's score."""
        link, counts, check = self.link.link, self.link.counts, self.link.integrity["synthetic"]
        bounded = "" if counts.bounded_tvd is None else f", {counts.bounded_tvd:.3f} from it bounded to {counts.k}"
        keys = "every synthetic foreign key is a parent's key" if check.holds else "the synthetic keys are BROKEN"
        lines = [OWNER_ONLY, f"two tables ({link.describe()}): {keys}",
                 f"children per parent: mean {counts.real_mean:.2f} real, {counts.synthetic_mean:.2f} synthetic; TVD "
                 f"{counts.tvd:.3f} from the real pair{bounded}"]
        if self.link.pairs:
            p = self.link.pairs[0]
            lines.append(f"strongest parent x child pair {p.parent_column} x {p.child_column}: Cramér's V "
                         f"{p.real_association:.3f} real, {p.synthetic_association:.3f} synthetic; TVD {p.tvd:.3f}")
        lines.extend(f"{name}: quality score {t.score:.1f}/100 ({t.n_real} real rows, {t.n_synthetic} synthetic)"
                     for name, t in self.tables.items())
        lines.extend(f"warning: {w}" for w in self.warnings)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        """Everything on the page as JSON-ready data (marked owner-only)."""
        out = {"warning": OWNER_ONLY, **self.link.to_dict(), "warnings": list(self.warnings),
               "tables": {name: t.to_dict() for name, t in self.tables.items()}, "release": self.release}
        return json.loads(json.dumps(out))  # tuples as lists, as the JSON file has them
