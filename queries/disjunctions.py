"""Disjunctions of literals, by De Morgan from a conjunction class.

A disjunction ``l_1 OR ... OR l_k`` of positive literals (one-hot literals
``[x_a == v]`` or binary features ``x_j``) equals ``1 - AND_i (1 - l_i)``.
On any 0/1 point ``x`` the inner conjunction of ``1 - l_i`` is the base
conjunction ``c`` with the same literals evaluated at ``1 - x``, so

    ``q(x) = 1 - c(1 - x)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from synthdp.queries.base import DerivedClass, Separator
from synthdp.queries.conjunctions import Conjunction, Conjunctions
from synthdp.queries.monotone import MonotoneConjunction, MonotoneConjunctions
from synthdp.core.errors import InputError


@dataclass(frozen=True, order=True)
class Disjunction:
    """``OR`` of the literals of the base conjunction ``inner`` (empty: FALSE)."""

    inner: Conjunction | MonotoneConjunction


def _inners(queries: Sequence[Disjunction]) -> list:
    return [q.inner for q in queries]


class Disjunctions(DerivedClass):
    """The disjunctions ``q = 1 - c(1 - x)`` for ``c`` in a conjunction class ``base``.

    Same feature space, widths and size as ``base``; ``q -> c`` is a bijection.
    """

    def __init__(self, base: Conjunctions | MonotoneConjunctions):
        if not isinstance(base, (Conjunctions, MonotoneConjunctions)):
            raise InputError(f"Disjunctions needs a Conjunctions or MonotoneConjunctions base, got {base!r}")
        super().__init__(base, f"disjunctions[{base.name}]")
        self.disjoins = base.conjoins

    def evaluate(self, queries: Sequence[Disjunction], points: np.ndarray) -> np.ndarray:
        return 1 - self.base.evaluate(_inners(queries), 1 - np.asarray(points, dtype=np.uint8))

    def separator(self) -> Separator:
        """The points ``1 - e`` for the points ``e`` of the base separator (same ``m``).

        ``q(1 - e) = 1 - c(e)``, so the signature of ``q`` is the complement
        of the base signature of ``c``.  *Proof that it separates.*  Distinct
        disjunctions have distinct inner conjunctions ``c != c'``; the base
        separator has an ``e`` with ``c(e) != c'(e)``, hence
        ``q(1 - e) != q'(1 - e)``.  A generalised base separator (no points)
        is complemented coordinate-wise, which is injective as well.
        """
        inner = self.base.separator()
        points = None if inner.points is None else (1 - inner.points).astype(np.uint8)
        return Separator(inner.m, points, f"{inner.argument}\n\n{self.separator.__doc__}")

    def signature(self, queries: Sequence[Disjunction]) -> np.ndarray:
        return (1 - self.base.signature(_inners(queries))).astype(np.uint8)

    def anchor(self) -> tuple[np.ndarray, int] | None:
        """``1 - p`` for the base anchor ``p`` (all zeros for conjunctions), with value ``1 - c(p)``."""
        anchor = self.base.anchor()
        return None if anchor is None else ((1 - anchor[0]).astype(np.uint8), 1 - anchor[1])

    def size(self) -> int:
        return self.base.size()

    def _enumerate(self):
        return map(Disjunction, self.base._enumerate())

    def contains(self, query) -> bool:
        return isinstance(query, Disjunction) and self.base.contains(query.inner)

    @property
    def attributes_read(self) -> int | None:
        """``q = 1 - c(1 - x)`` reads the attributes its conjunction ``c`` reads."""
        return self.base.attributes_read

    def attributes_of(self, query: Disjunction) -> tuple[int, ...]:
        return self.base.attributes_of(query.inner)

    def describe(self, query: Disjunction) -> str:
        inner = query.inner
        if isinstance(inner, Conjunction):
            literals = [Conjunction((lit,)) for lit in inner.literals]
        else:
            literals = [MonotoneConjunction((j,)) for j in inner.features]
        return " OR ".join(map(self.base.describe, literals)) or "FALSE"
