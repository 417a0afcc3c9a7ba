"""Parities of the compact binary features.

**Query player.**  A literal ``f[j]`` per feature; ``q(x)`` is the XOR of
``f`` over the support of ``x``, written as a chain of 3-literal XORs that
shares prefixes across points (:class:`~oracles.encodings.common.XorChains`).
Being exact, the parity literal carries the point's weight directly, for
either sign; points with the same support are merged beforehand.
``max_width`` is one cardinality constraint on ``f``.

**Data player.**  On a record, the features of one attribute are
exclusive, so their XOR is ``[x_a in V_a]`` (one literal, see
:meth:`~oracles.encodings.common.Records.value_in`); the query is the XOR of
those over its attributes.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from oracles.encodings.common import Records, XorChains, merge_queries, weighted_points
from oracles.model import MAXIMIZE, MINIMIZE, Encoded, Model
from queries.parities import Parities, Parity

KINDS = frozenset({"clause", "card", "xor"})


def query(query_class: Parities, codes: np.ndarray, weights: np.ndarray, separator_weights: np.ndarray) -> Encoded:
    """``min_q sum_r w_r q(x_r) + sum_i eta_i q(e_i)`` over parities of width ``<= max_width``."""
    points, w = weighted_points(query_class, codes, weights, separator_weights)
    model = Model(MINIMIZE)
    feats = [model.new_bool(f"f{j}") for j in range(query_class.n_features)]
    if query_class.max_width < len(feats):
        model.card(feats, 0, query_class.max_width)
    chains = XorChains(model)
    for point, weight in zip(points, w.tolist()):
        node = chains.xor_of([feats[j] for j in np.flatnonzero(point)])
        if node is not None:
            model.add_objective(node, weight)

    def decode(values: Mapping[int, int]) -> Parity:
        return Parity(tuple(j for j, lit in enumerate(feats) if values[lit]))

    return Encoded(model, tuple(feats), decode)


def data(query_class: Parities, queries: list, weights: np.ndarray, rho: np.ndarray) -> Encoded:
    """``max_x sum_t w_t q_t(x) + rho . coords(x)`` for parities."""
    model = Model(MAXIMIZE)
    records = Records(model, query_class.domain.sizes)
    records.add_coordinates(query_class.dual_separator(), rho)
    chains = XorChains(model)
    for q, w in merge_queries(queries, weights).items():
        by_attr: dict[int, list[int]] = {}
        for j in q.features:
            a, v = query_class.columns[j]
            by_attr.setdefault(a, []).append(v)
        flip, lits = 0, []
        for a, vals in by_attr.items():
            lit = records.value_in(a, vals)
            if lit is True:
                flip ^= 1
            elif lit is not False:
                lits.append(lit)
        node = chains.xor_of(lits)
        if node is None:
            model.constant += w * flip
        else:
            model.add_objective(-node if flip else node, w)
    return Encoded(model, records.outputs, records.decode)
