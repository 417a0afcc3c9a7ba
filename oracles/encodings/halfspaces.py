"""Integer halfspaces ``[w . x >= theta]`` over the compact binary features.

**Query player.**  The representation is encoded by its binary digits, the
class's generalised separator: ``b[j][k]`` are the digits of ``w_j + B`` and
``c[k]`` those of ``theta - theta_min`` (least significant first), with
``sum_k 2^k b[j][k] <= 2B`` and ``sum_k 2^k c[k] <= theta_max - theta_min``
so exactly the class's representations are feasible.  The separator term
``sum_i eta_i sig_i(q)`` is then linear in these digits.  For a point ``x``
with support ``T``, ``w . x - theta = E(x)`` is linear in the digits, and

* ``w_x > 0`` needs ``z >= q(x)``: ``NOT z  =>  E(x) <= -1``;
* ``w_x < 0`` needs ``z <= q(x)``: ``z  =>  E(x) >= 0``

(enforced linear constraints; a MIP backend writes them with the tightest
big-M from the digit bounds, so ``z`` must stay integral there).  No symmetry breaking: the class is a set of
representations, and representations of one function differ in signature.

**Data player.**  ``q_t(x) = [sum_j w_tj y_j >= theta_t]`` over the record's
value indicators, enforced by ``z_t`` in the direction its weight needs.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from oracles.encodings.common import Records, merge_queries
from oracles.model import MAXIMIZE, MINIMIZE, Encoded, Model
from queries.halfspaces import Halfspace, Halfspaces

KINDS = frozenset({"card", "linear"})


def _digits(model: Model, n_bits: int, top: int, name: str) -> list[int]:
    """Boolean digits of an integer in ``0..top`` (``sum 2^k d_k <= top`` unless every code is valid)."""
    digits = [model.new_bool(f"{name}.{k}") for k in range(n_bits)]
    if top < 2**n_bits - 1:
        model.linear([(d, 2**k) for k, d in enumerate(digits)], None, top)
    return digits


def query(query_class: Halfspaces, codes: np.ndarray, weights: np.ndarray, separator_weights: np.ndarray) -> Encoded:
    """``min_q sum_r w_r q(x_r) + sum_i eta_i sig_i(q)`` over the halfspace representations."""
    model = Model(MINIMIZE)
    B, d = query_class.weight_bound, query_class.n_features
    span = query_class.theta_max - query_class.theta_min
    wbits = [_digits(model, query_class.weight_bits, 2 * B, f"w{j}") for j in range(d)]
    tbits = _digits(model, query_class.threshold_bits, span, "theta")
    for lit, eta in zip([b for bits in wbits for b in bits] + tbits, np.asarray(separator_weights).tolist()):
        model.add_objective(lit, eta)

    points = query_class.features(codes)
    if len(points):
        points, inverse = np.unique(points, axis=0, return_inverse=True)
        merged = np.zeros(len(points), dtype=np.int64)
        np.add.at(merged, inverse.reshape(-1), np.asarray(weights, dtype=np.int64))
    else:
        merged = np.zeros(0, dtype=np.int64)
    theta_terms = [(c, -(2**k)) for k, c in enumerate(tbits)]
    for point, w in zip(points, merged.tolist()):
        if w == 0:
            continue
        support = np.flatnonzero(point).tolist()
        terms = [(b, 2**k) for j in support for k, b in enumerate(wbits[j])] + theta_terms
        const = -B * len(support) - query_class.theta_min  # E(x) = sum(terms) + const
        z = model.new_bool("z")  # not relaxable: a big-M translation would make it fractional
        model.add_objective(z, w)
        if w > 0:
            model.linear(terms, None, -1 - const, enforce=-z)
        else:
            model.linear(terms, -const, None, enforce=z)

    def decode(values: Mapping[int, int]) -> Halfspace:
        def number(bits: list[int]) -> int:
            return sum(values[b] << k for k, b in enumerate(bits))

        return Halfspace(tuple(number(bits) - B for bits in wbits), number(tbits) + query_class.theta_min)

    return Encoded(model, tuple(b for bits in wbits for b in bits) + tuple(tbits), decode)


def data(query_class: Halfspaces, queries: list, weights: np.ndarray, rho: np.ndarray) -> Encoded:
    """``max_x sum_t w_t [w_t . x >= theta_t] + rho . coords(x)``."""
    model = Model(MAXIMIZE)
    records = Records(model, query_class.domain.sizes)
    records.add_coordinates(query_class.dual_separator(), rho)
    for q, w in merge_queries(queries, weights).items():
        terms = [(records.y[a][v], c) for (a, v), c in zip(query_class.columns, q.weights) if c]
        z = model.new_bool("z")  # not relaxable: a big-M translation would make it fractional
        model.add_objective(z, w)
        if w > 0:
            model.linear(terms, q.threshold, None, enforce=z)
        else:
            model.linear(terms, None, q.threshold - 1, enforce=-z)
    return Encoded(model, records.outputs, records.decode)
