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

**Data player.**  ``q_t(x) = [w_t . x >= theta_t]``, enforced by ``z_t`` in the
direction its weight needs, with ``w_t . x`` written per attribute and weight
value (see :func:`_record_form`).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from synthdp.oracles.encodings.common import Records, merge_queries
from synthdp.oracles.model import MAXIMIZE, MINIMIZE, Encoded, Model
from synthdp.queries.halfspaces import Halfspace, Halfspaces

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
        terms, const = _record_form(records, query_class.columns, q.weights)
        z = model.new_bool("z")  # not relaxable: a big-M translation would make it fractional
        model.add_objective(z, w)
        if w > 0:
            model.linear(terms, q.threshold - const, None, enforce=z)
        else:
            model.linear(terms, None, q.threshold - 1 - const, enforce=-z)
    return Encoded(model, records.outputs, records.decode)


def _record_form(records: Records, columns: list, weights: tuple[int, ...]) -> tuple[list[tuple[int, int]], int]:
    """``w . x`` on a record as ``(terms, constant)`` with one term per attribute and weight value.

    The features of one attribute are exclusive, so their part of ``w . x``
    is ``sum_c c [x_a in V_c]`` over the distinct weights ``c``; each
    indicator is one literal (:meth:`Records.value_in`).  This replaces up
    to ``size_a`` terms by at most ``2B`` and propagates better.
    """
    by_value: dict[tuple[int, int], list[int]] = {}
    for (a, v), c in zip(columns, weights):
        if c:
            by_value.setdefault((a, c), []).append(v)
    terms, const = [], 0
    for (a, c), values in by_value.items():
        lit = records.value_in(a, values)
        if lit is True:
            const += c
        elif lit < 0:  # c [x_a in V] = c (1 - y) for a negative literal -y
            const += c
            terms.append((-lit, -c))
        else:
            terms.append((lit, c))
    return terms, const
