"""Closure under complement: the class ``Q union {1 - q : q in Q}``.

The synthetic-data game needs a complement-closed class
(docs/privacy.md §1.2 and Theorem 4.4): then the largest signed error is the largest
absolute error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from synthdp.queries.base import DerivedClass, QueryClass, Separator


@dataclass(frozen=True, order=True)
class Not:
    """The complement ``1 - query`` of a base query."""

    query: Any


def base_class(query_class: QueryClass) -> QueryClass:
    """The base class of a complement-closed wrapper; any other class is its own base."""
    return query_class.base if isinstance(query_class, ComplementClosed) else query_class


def split(queries: Sequence[Any]) -> tuple[list[Any], np.ndarray]:
    """Base queries and a 0/1 array that marks which ones were complemented."""
    base = [q.query if isinstance(q, Not) else q for q in queries]
    neg = np.array([isinstance(q, Not) for q in queries], dtype=np.uint8)
    return base, neg


class ComplementClosed(DerivedClass):
    """``base`` together with the complements of its queries.

    Its separator is the base separator (a complemented query's signature
    is the complement of the base signature) plus one extra coordinate that
    tells ``q`` from ``1 - q'``: the base class's *anchor* point, on which
    every base query takes the same value ``c`` (so complements take
    ``1 - c``).  A base class without an anchor gets a generalised
    coordinate instead: the complement flag itself.

    *Proof.* Take two distinct queries.  If both are base queries, or both
    complements of base queries ``q != q'``, the base separator has a point
    where ``q`` and ``q'`` (hence ``1 - q`` and ``1 - q'``) differ.  If one
    is ``q`` and the other ``1 - q'``, the extra coordinate is ``c`` on the
    first and ``1 - c`` on the second.
    """

    complement_closed = True

    def __init__(self, base: QueryClass):
        super().__init__(base, f"{base.name}+complements")

    def evaluate(self, queries, points) -> np.ndarray:
        base, neg = split(queries)
        return self.base.evaluate(base, points) ^ neg[:, None]

    def answer(self, queries, codes, weights) -> np.ndarray:
        base, neg = split(queries)
        pos = self.base.answer(base, codes, weights)
        total = np.asarray(weights).sum(dtype=object if np.asarray(weights).dtype == object else np.int64)
        return np.where(neg.astype(bool), total - pos, pos)

    def separator(self) -> Separator:
        inner = self.base.separator()
        anchor = self.base.anchor()
        points = None
        if anchor is not None and inner.points is not None:
            points = np.vstack([inner.points, anchor[0][None, :]])
        return Separator(inner.m + 1, points, f"{inner.argument}\n\n{type(self).__doc__}")

    def signature(self, queries) -> np.ndarray:
        base, neg = split(queries)
        anchor = self.base.anchor()
        c = anchor[1] if anchor is not None else 0
        sig = self.base.signature(base) ^ neg[:, None]
        return np.hstack([sig, (c ^ neg)[:, None]]).astype(np.uint8)

    def size(self) -> int:
        return 2 * self.base.size()

    def _enumerate(self):
        for q in self.base._enumerate():
            yield q
            yield Not(q)

    def contains(self, query) -> bool:
        return self.base.contains(query.query if isinstance(query, Not) else query)

    @property
    def attributes_read(self) -> int | None:
        return self.base.attributes_read

    def marginal_widths(self) -> range | None:
        return self.base.marginal_widths()

    def attributes_of(self, query) -> tuple[int, ...]:
        """``1 - q`` reads what ``q`` reads."""
        return self.base.attributes_of(query.query if isinstance(query, Not) else query)

    def describe(self, query) -> str:
        if isinstance(query, Not):
            return f"NOT ({self.base.describe(query.query)})"
        return self.base.describe(query)

    def complement(self, query):
        return query.query if isinstance(query, Not) else Not(query)

