"""Conjunctive classes: one-hot conjunctions (marginal cells), workloads, monotone conjunctions.

**Query player.**  A structural literal per feature column says whether the
query contains it (``l[a, v]`` for one-hot literals, ``f[j]`` for binary
features).  A conjunction is 1 on a 0/1 point ``x`` iff it contains no
column where ``x`` is 0, so with the columns grouped into blocks (one per
attribute)

    ``q(x) = NOR_blocks u[b, S_b(x)]``,  ``u[b, S] = OR_{c in S} lit_c``,

where ``S_b(x)`` are the zero columns of ``x`` in block ``b``.  Points with
the same violation pattern ``(S_b(x))_b`` are merged (summing weights, which
subsumes merging identical points).  For a merged weight ``w``:

* one violated block: the term ``w (1 - u)``, no extra variable;
* ``w > 0`` needs only ``z >= q(x)``: the clause ``z OR u_1 OR ...``;
* ``w < 0`` needs only ``z <= q(x)``: ``NOT z OR NOT u_b`` per block.

Each ``u`` is defined only in the direction its uses need (``u <= OR`` for
positive weights, ``u >= OR`` for negative ones).  In a one-hot block at most
one literal is set, so the OR is a sum and ``u = s_a - sum of the
complement`` (``s_a`` = attribute used) when that side is shorter; for a
record this is the 3-literal ``u = s_a - l[a, x_a]``.

Class constraints: at most one literal per attribute (``s_a = sum_v l[a, v]``),
``min_width <= sum s_a <= max_width``; a workload picks exactly one of its
marginals with a selector ``t_M`` and ``s_a = sum_{M ∋ a} t_M``; monotone
conjunctions bound the number of features.  No symmetry breaking: distinct
feasible assignments are distinct queries, with distinct signatures.

**Data player.**  See :meth:`synthdp.oracles.encodings.common.Records.add_conjunctions`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from synthdp.oracles.encodings.common import Literal, Records, merge_queries
from synthdp.oracles.model import MAXIMIZE, MINIMIZE, Encoded, Lit, Model
from synthdp.queries.conjunctions import Conjunction, Conjunctions
from synthdp.queries.monotone import MonotoneConjunction, MonotoneConjunctions

KINDS = frozenset({"clause", "card"})

_UPPER, _LOWER = 1, 2  # needs of a violation literal: u <= OR (positive weights), u >= OR (negative)


@dataclass(frozen=True)
class Block:
    """Feature columns of one attribute and the literals that select them.

    ``exclusive``: at most one of ``lits`` is true, and ``any_lit`` equals
    their sum (one-hot literals of one attribute).
    """

    columns: np.ndarray
    lits: tuple[Lit, ...]
    exclusive: bool = False
    any_lit: Lit | None = None


def add_nor_terms(model: Model, blocks: list[Block], points: np.ndarray, weights: np.ndarray) -> None:
    """Add ``sum_x w_x q(x)`` for ``q(x) = NOR_b OR_{c in S_b(x)} lit_c`` (see the module docstring)."""
    if not len(points):
        return
    if not blocks:  # only the empty conjunction: q(x) = 1 everywhere
        model.constant += int(weights.sum())
        return
    ids = np.zeros((len(points), len(blocks)), dtype=np.int64)
    patterns: list[list[tuple[int, ...]]] = []
    for b, block in enumerate(blocks):
        zero = 1 - points[:, block.columns]
        uniq, inverse = np.unique(zero, axis=0, return_inverse=True)
        ids[:, b] = inverse.reshape(-1)
        patterns.append([tuple(np.flatnonzero(row).tolist()) for row in uniq])
    keys, inverse = np.unique(ids, axis=0, return_inverse=True)
    merged = np.zeros(len(keys), dtype=np.int64)
    np.add.at(merged, inverse.reshape(-1), weights)

    terms: list[tuple[list[tuple[int, int]], int]] = []
    needs: dict[tuple[int, int], int] = {}
    for key, w in zip(keys.tolist(), merged.tolist()):
        if w == 0:
            continue
        violated = [(b, pid) for b, pid in enumerate(key) if patterns[b][pid]]
        terms.append((violated, w))
        for v in violated:
            needs[v] = needs.get(v, 0) | (_UPPER if w > 0 else _LOWER)
    u = {v: _violation(model, blocks[v[0]], patterns[v[0]][v[1]], need) for v, need in needs.items()}

    for violated, w in terms:
        if not violated:
            model.constant += w
        elif len(violated) == 1:
            model.add_objective(-u[violated[0]], w)
        else:
            z = model.new_bool("z", relaxable=True)
            model.add_objective(z, w)
            if w > 0:
                model.clause(z, *(u[v] for v in violated))
            else:
                for v in violated:
                    model.clause(-z, -u[v])


def _violation(model: Model, block: Block, positions: tuple[int, ...], need: int) -> Lit:
    """A literal ``u`` with ``u <= OR`` (``_UPPER``) and/or ``u >= OR`` (``_LOWER``) of the selected literals."""
    members = [block.lits[i] for i in positions]
    if len(members) == 1:
        return members[0]
    if block.exclusive and len(members) == len(block.lits):
        return block.any_lit
    u = model.new_bool("u", relaxable=True)
    chosen = set(positions)
    rest = [lit for i, lit in enumerate(block.lits) if i not in chosen]
    if block.exclusive and len(rest) + 1 < len(members):
        # u = any - sum(rest)
        if need & _UPPER:
            model.at_most_one((u, *rest, -block.any_lit))
        if need & _LOWER:
            model.clause(u, *rest, -block.any_lit)
        return u
    if need & _UPPER:
        model.clause(-u, *members)
    if need & _LOWER:
        if block.exclusive:
            model.at_most_one((-u, *members))
        else:
            for m in members:
                model.implies(m, u)
    return u


# ----- one-hot conjunctions and workloads --------------------------------------------
def query_points(query_class: Conjunctions, points: np.ndarray, weights: np.ndarray) -> Encoded:
    """``min_q sum_x w_x q(x)`` over one-hot conjunctions (or a workload's cells)."""
    model = Model(MINIMIZE)
    domain = query_class.domain
    if query_class.listed_cells:
        usable = sorted({a for attrs in query_class.marginal_attrs for a in attrs})
    else:
        usable = list(range(len(domain))) if query_class.max_width > 0 else []
    lits = {a: [model.new_bool(f"l[{a}={v}]") for v in range(domain.sizes[a])] for a in usable}
    used = {}
    for a, la in lits.items():
        if len(la) == 1:
            used[a] = la[0]
        else:
            used[a] = model.new_bool(f"s[{a}]", relaxable=True)
            model.exactly_one((-used[a], *la))
    if query_class.listed_cells:
        select = [model.new_bool(f"t{attrs}") for attrs in query_class.marginal_attrs]
        model.exactly_one(select)
        for a in usable:
            model.exactly_one((-used[a], *(t for t, attrs in zip(select, query_class.marginal_attrs) if a in attrs)))
    elif query_class.min_width > 0 or query_class.max_width < len(usable):
        model.card(used.values(), query_class.min_width, query_class.max_width)

    offsets = domain.offsets
    blocks = [Block(np.arange(offsets[a], offsets[a] + domain.sizes[a]), tuple(lits[a]), True, used[a])
              for a in usable]
    add_nor_terms(model, blocks, points, weights)

    def decode(values: Mapping[int, int]) -> Conjunction:
        return Conjunction(tuple((a, v) for a in usable for v, lit in enumerate(lits[a]) if values[lit]))

    return Encoded(model, tuple(v for la in lits.values() for v in la), decode)


def data(query_class: Conjunctions, queries: list, weights: np.ndarray, rho: np.ndarray) -> Encoded:
    """``max_x sum_t w_t q_t(x) + rho . coords(x)`` for one-hot conjunctions."""
    model = Model(MAXIMIZE)
    records = Records(model, query_class.domain.sizes)
    records.add_coordinates(query_class.dual_separator(), rho)
    records.add_conjunctions({q.literals: w for q, w in merge_queries(queries, weights).items()})
    return Encoded(model, records.outputs, records.decode)


# ----- monotone conjunctions of binary features --------------------------------------
def feature_blocks(columns: list[Literal]) -> list[np.ndarray]:
    """Feature indices grouped by attribute (a one-hot block, or one bit)."""
    blocks: dict[int, list[int]] = {}
    for j, (a, _) in enumerate(columns):
        blocks.setdefault(a, []).append(j)
    return [np.array(js, dtype=np.int64) for js in blocks.values()]


def monotone_query_points(query_class: MonotoneConjunctions, points: np.ndarray, weights: np.ndarray) -> Encoded:
    """``min_q sum_x w_x q(x)`` over monotone conjunctions of width ``<= max_width``."""
    model = Model(MINIMIZE)
    feats = [model.new_bool(f"f{j}") for j in range(query_class.n_features)]
    if query_class.max_width < len(feats):
        model.card(feats, 0, query_class.max_width)
    blocks = [Block(cols, tuple(feats[j] for j in cols)) for cols in feature_blocks(query_class.columns)]
    add_nor_terms(model, blocks, points, weights)

    def decode(values: Mapping[int, int]) -> MonotoneConjunction:
        return MonotoneConjunction(tuple(j for j, lit in enumerate(feats) if values[lit]))

    return Encoded(model, tuple(feats), decode)


def record_literals(query_class, query) -> tuple[Literal, ...]:
    """The record literals ``(a, v)`` of a one-hot or monotone conjunction."""
    return query_class.literals(query)


def monotone_data(query_class: MonotoneConjunctions, queries: list, weights: np.ndarray, rho: np.ndarray) -> Encoded:
    """Data player for monotone conjunctions: conjunctions of record literals.

    Two features of one attribute (``[x_a == v] AND [x_a == v']``) are never
    both 1 on a record, so such a query is the constant 0 and is dropped.
    """
    model = Model(MAXIMIZE)
    records = Records(model, query_class.domain.sizes)
    records.add_coordinates(query_class.dual_separator(), rho)
    terms: dict[tuple[Literal, ...], int] = {}
    for q, w in merge_queries(queries, weights).items():
        lits = record_literals(query_class, q)
        if len({a for a, _ in lits}) == len(lits):
            terms[lits] = terms.get(lits, 0) + w
    records.add_conjunctions({lits: w for lits, w in terms.items() if w})
    return Encoded(model, records.outputs, records.decode)
