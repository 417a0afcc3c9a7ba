"""Parities of the compact binary features.

**Query player.**  A literal ``f[j]`` per feature; ``q(x)`` is the parity
of ``c(x) = sum_{j in supp(x)} f[j]``.  With linear constraints available it
is written by counting, ``c(x) = p + 2 h`` with ``p`` the parity bit and the
integer ``h <= min(max_width, |supp(x)|) / 2`` in binary digits (all unique
given ``f``); otherwise (MaxSAT) as a chain of 3-literal XORs that shares
prefixes across points (:class:`~synthdp.oracles.encodings.common.XorChains`).
The counting form gives CP-SAT a useful LP and sum propagation: on ADULT
features with ``max_width = 3`` it proved optima 4-7x faster than the chains
(300 and 1,000 rows).  Either way the parity literal is exact, so it carries
the point's weight directly, for either sign; points with the same support
are merged beforehand.  ``max_width`` is one cardinality constraint on ``f``.

**Data player.**  On a record, the features of one attribute are
exclusive, so their XOR is ``[x_a in V_a]`` (one literal, see
:meth:`~synthdp.oracles.encodings.common.Records.value_in`); the query is the XOR of
those over its attributes.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from synthdp.oracles.encodings.common import Records, XorChains, merge_queries, weighted_points
from synthdp.oracles.model import MAXIMIZE, MINIMIZE, Encoded, Model
from synthdp.queries.parities import Parities, Parity

KINDS = frozenset({"clause", "card", "xor"})


def query(query_class: Parities, codes: np.ndarray, weights: np.ndarray, separator_weights: np.ndarray,
          kinds: frozenset[str]) -> Encoded:
    """``min_q sum_r w_r q(x_r) + sum_i eta_i q(e_i)`` over parities of width ``<= max_width``.

    ``kinds``: the constraint kinds the backend translates (counting needs ``"linear"``).
    """
    points, w = weighted_points(query_class, codes, weights, separator_weights)
    model = Model(MINIMIZE)
    feats = [model.new_bool(f"f{j}") for j in range(query_class.n_features)]
    if query_class.max_width < len(feats):
        model.card(feats, 0, query_class.max_width)
    chains = None if "linear" in kinds else XorChains(model)
    for point, weight in zip(points, w.tolist()):
        support = [feats[j] for j in np.flatnonzero(point)]
        if not support:  # every parity is 0 at the origin
            continue
        if len(support) == 1:
            parity = support[0]
        elif chains is not None:
            parity = chains.xor_of(support)
        else:
            parity = _parity_by_count(model, support, min(len(support), query_class.max_width))
        model.add_objective(parity, weight)

    def decode(values: Mapping[int, int]) -> Parity:
        return Parity(tuple(j for j, lit in enumerate(feats) if values[lit]))

    return Encoded(model, tuple(feats), decode)


def _parity_by_count(model: Model, lits: list[int], cap: int) -> int:
    """A literal ``p`` with ``sum(lits) = p + 2 h``, ``h`` in binary digits (``sum(lits) <= cap``)."""
    p = model.new_bool("p")
    digits = [model.new_bool(f"h.{k}") for k in range((cap // 2).bit_length())]
    model.linear([(lit, 1) for lit in lits] + [(p, -1)] + [(h, -(2 << k)) for k, h in enumerate(digits)], 0, 0)
    return p


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
