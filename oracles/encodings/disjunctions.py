"""Disjunctions, by De Morgan from their conjunction class.

**Query player.**  ``q(x) = 1 - c(1 - x)`` for the inner conjunction ``c``, so

    ``sum_x w_x q(x) = sum_x w_x - sum_x w_x c(1 - x)``:

the inner class's encoding on the complemented points with negated weights,
plus a constant.  (The class's separator points are the complements of the
inner ones, so they go through the same identity.)

**Data player.**  On a record, ``q`` is the OR of its record literals; see
:meth:`synthdp.oracles.encodings.common.Records.add_disjunctions`.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from synthdp.oracles.encodings import conjunctions
from synthdp.oracles.encodings.common import Literal, Records, merge_queries, weighted_points
from synthdp.oracles.model import MAXIMIZE, Encoded, Model
from synthdp.queries.disjunctions import Disjunction, Disjunctions

KINDS = conjunctions.KINDS


def query(query_class: Disjunctions, codes: np.ndarray, weights: np.ndarray, separator_weights: np.ndarray) -> Encoded:
    """``min_q sum_r w_r q(x_r) + sum_i eta_i q(e_i)`` over disjunctions."""
    points, w = weighted_points(query_class, codes, weights, separator_weights)
    base = query_class.base
    encode = conjunctions.monotone_query_points if base.conjoins == "binary" else conjunctions.query_points
    inner = encode(base, (1 - points).astype(np.uint8), -w)
    inner.model.constant += int(w.sum())

    def decode(values: Mapping[int, int]) -> Disjunction:
        return Disjunction(inner.decode(values))

    return Encoded(inner.model, inner.outputs, decode)


def data(query_class: Disjunctions, queries: list, weights: np.ndarray, rho: np.ndarray) -> Encoded:
    """``max_x sum_t w_t OR(literals of q_t) + rho . coords(x)``."""
    model = Model(MAXIMIZE)
    records = Records(model, query_class.domain.sizes)
    records.add_coordinates(query_class.dual_separator(), rho)
    terms: dict[tuple[Literal, ...], int] = {}
    for q, w in merge_queries(queries, weights).items():
        lits = conjunctions.record_literals(query_class.base, q.inner)
        terms[lits] = terms.get(lits, 0) + w
    records.add_disjunctions({lits: w for lits, w in terms.items() if w})
    return Encoded(model, records.outputs, records.decode)
