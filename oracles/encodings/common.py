"""Encoding pieces shared by the class families.

* :func:`weighted_points`: the query player's points (records and separator
  points) with identical points merged and zero weights dropped;
* :func:`merge_queries`: the data player's queries with duplicates merged;
* :class:`Records`: the data player's record, one-hot value variables
  ``y[a, v]`` with exactly one value per attribute, and the objective terms
  of AND / OR queries over them;
* :class:`XorChains`: literals equal to XORs of literals, built as chains of
  3-literal XORs that share common prefixes across points or queries.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from synthdp.oracles.model import Lit, Model
from synthdp.queries.base import QueryClass

#: An (attribute, value) pair: the record literal ``[x_a == v]``.
Literal = tuple[int, int]


def weighted_points(query_class: QueryClass, codes: np.ndarray, weights: np.ndarray,
                    separator_weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct feature points with their total weights (non-zero only).

    The rows' feature vectors and the class's separator points (weighted by
    ``separator_weights``) are pooled: ``sum_r w_r q(x_r) + sum_i eta_i q(e_i)``
    is then one weighted sum over points, and coinciding points (a record
    equal to a separator point, or two equal separator points) merge.
    """
    points = [query_class.features(codes)]
    total = [np.asarray(weights, dtype=np.int64)]
    sep = query_class.separator()
    if sep.points is not None and sep.m:
        points.append(np.asarray(sep.points, dtype=np.uint8))
        total.append(np.asarray(separator_weights, dtype=np.int64))
    pts = np.vstack(points).astype(np.uint8)
    w = np.concatenate(total)
    if not len(pts):
        return pts, w
    uniq, inverse = np.unique(pts, axis=0, return_inverse=True)
    merged = np.zeros(len(uniq), dtype=np.int64)
    np.add.at(merged, inverse.reshape(-1), w)
    keep = merged != 0
    return uniq[keep], merged[keep]


def merge_queries(queries: Sequence[Any], weights: np.ndarray) -> dict[Any, int]:
    """``{query: total weight}`` over distinct queries, zero totals dropped (insertion order kept)."""
    merged: dict[Any, int] = {}
    for q, w in zip(queries, np.asarray(weights, dtype=np.int64).tolist()):
        merged[q] = merged.get(q, 0) + w
    return {q: w for q, w in merged.items() if w}


class XorChains:
    """Literals equal to ``XOR`` of literal tuples, sharing prefixes.

    ``xor_of((a, b, c))`` creates ``n1 = a ^ b`` and ``n2 = n1 ^ c``; a later
    ``xor_of((a, b, d))`` reuses ``n1``.  Every constraint is a 3-literal XOR,
    whose LP hull a MIP backend can write exactly; the chain variables are
    determined by their inputs, hence relaxable.
    """

    def __init__(self, model: Model):
        self.model = model
        self._nodes: dict[tuple[Lit, ...], Lit] = {}

    def xor_of(self, lits: Sequence[Lit]) -> Lit | None:
        """A literal equal to the XOR of ``lits`` (``None`` for the empty XOR, the constant 0)."""
        if not lits:
            return None
        node = lits[0]
        for i in range(1, len(lits)):
            key = tuple(lits[: i + 1])
            nxt = self._nodes.get(key)
            if nxt is None:
                nxt = self.model.new_bool(f"xor{len(self._nodes)}", relaxable=True)
                self.model.xor((node, lits[i], nxt), 0)
                self._nodes[key] = nxt
            node = nxt
        return node


class Records:
    """A record as one-hot value variables ``y[a][v]``, exactly one per attribute."""

    def __init__(self, model: Model, sizes: Sequence[int]):
        self.model = model
        self.sizes = tuple(sizes)
        self.y = [[model.new_bool(f"y[{a}={v}]") for v in range(size)] for a, size in enumerate(self.sizes)]
        for lits in self.y:
            model.exactly_one(lits)
        self._sums: dict[tuple[int, tuple[int, ...]], Lit] = {}

    @property
    def outputs(self) -> tuple[int, ...]:
        return tuple(v for lits in self.y for v in lits)

    def decode(self, values: Mapping[int, int]) -> np.ndarray:
        """The code vector: the value whose indicator is set, per attribute."""
        return np.array([next(v for v, lit in enumerate(lits) if values[lit]) for lits in self.y], dtype=np.int64)

    def add_coordinates(self, coords: Iterable[Literal], rho: np.ndarray) -> None:
        """``sum_j rho_j [x_{a_j} == v_j]`` (the dual-separator noise)."""
        for (a, v), r in zip(coords, np.asarray(rho, dtype=np.int64).tolist()):
            self.model.add_objective(self.y[a][v], r)

    def value_in(self, a: int, values: Iterable[int]) -> Lit | bool:
        """A literal equal to ``[x_a in values]`` (``True``/``False`` when constant).

        One value is ``y`` itself; all but one is ``NOT y`` of the missing
        value; otherwise an auxiliary ``g`` with ``g + sum of the smaller
        side = 1`` (or ``g = sum``), exact because the values are exclusive.
        """
        values = tuple(sorted(set(values)))
        rest = tuple(v for v in range(self.sizes[a]) if v not in values)
        if not values or not rest:
            return bool(values)
        if len(values) == 1:
            return self.y[a][values[0]]
        if len(rest) == 1:
            return -self.y[a][rest[0]]
        key = (a, values)
        if key not in self._sums:
            g = self.model.new_bool(f"in[{a}:{values}]", relaxable=True)
            if len(values) <= len(rest):
                self.model.exactly_one((-g, *(self.y[a][v] for v in values)))
            else:
                self.model.exactly_one((g, *(self.y[a][v] for v in rest)))
            self._sums[key] = g
        return self._sums[key]

    def add_conjunctions(self, terms: Mapping[tuple[Literal, ...], int]) -> None:
        """``sum_t w_t AND_{(a, v) in t} [x_a == v]``, literals of each term on distinct attributes.

        Positive weights need ``z_t <= q_t``: terms over the same attribute set
        are mutually exclusive, so for each ``(a, v)`` one constraint
        ``sum_{t: t_a = v} z_t <= y[a, v]`` covers them (the local-marginal
        constraint, tighter than ``z_t <= y`` per literal).  Negative weights
        need ``z_t >= q_t``: the clause ``z_t OR NOT y_1 OR ...``.
        """
        model = self.model
        exclusive: dict[tuple[int, ...], dict[Literal, list[Lit]]] = {}
        for lits, w in terms.items():
            if not lits:
                model.constant += w
            elif len(lits) == 1:
                model.add_objective(self.y[lits[0][0]][lits[0][1]], w)
            else:
                z = model.new_bool(f"and{lits}", relaxable=True)
                model.add_objective(z, w)
                if w > 0:
                    group = exclusive.setdefault(tuple(a for a, _ in lits), {})
                    for lit in lits:
                        group.setdefault(lit, []).append(z)
                else:
                    model.clause(z, *(-self.y[a][v] for a, v in lits))
        for group in exclusive.values():
            for (a, v), zs in group.items():
                model.at_most_one((*zs, -self.y[a][v]))

    def add_disjunctions(self, terms: Mapping[tuple[Literal, ...], int]) -> None:
        """``sum_t w_t OR_{(a, v) in t} [x_a == v]``.

        Positive weights need ``z <= q``: the clause ``NOT z OR y_1 OR ...``.
        Negative weights need ``z >= q``: per attribute ``sum_v y[a, v] <= z``
        (one at-most-one, as values of an attribute are exclusive).
        """
        model = self.model
        for lits, w in terms.items():
            by_attr: dict[int, set[int]] = {}
            for a, v in lits:
                by_attr.setdefault(a, set()).add(v)
            if any(len(vals) == self.sizes[a] for a, vals in by_attr.items()):
                model.constant += w  # the OR covers every value of an attribute: always 1
            elif len(lits) == 1:
                model.add_objective(self.y[lits[0][0]][lits[0][1]], w)
            elif lits:
                z = model.new_bool(f"or{lits}", relaxable=True)
                model.add_objective(z, w)
                if w > 0:
                    model.clause(-z, *(self.y[a][v] for a, vals in by_attr.items() for v in sorted(vals)))
                else:
                    for a, vals in by_attr.items():
                        model.at_most_one((-z, *(self.y[a][v] for v in sorted(vals))))
