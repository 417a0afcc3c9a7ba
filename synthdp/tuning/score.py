"""The private score of a candidate synthetic table (docs/privacy.md §5.2).

A candidate table ``y`` of the public size ``N_out`` is scored against the
real data ``D`` (``n`` records) on a public evaluation workload of marginal
cells by the *integer* error

    Err(D, y) = max_q | N_out * count_q(D) - n * count_q(y) |  =  n N_out max_q |q(D) - q(y)|,

whose sensitivity is at most ``N_out`` under both neighbouring relations
(docs/privacy.md §5.2: each inner term moves by ``N_out (q(x') - q(x))`` under
replace-one and by ``N_out (q(x*) - q(y))`` under add/remove, and a max moves
no more than its terms).  The released score is ``s = -(Err + Z)`` with
``Z ~ DLap(eps_s / N_out)`` drawn exactly (§1.6, (F1)): the discrete Laplace
mechanism, ``eps_s``-DP.  Higher scores are better.

The complement ``1 - q`` of a cell has the same integer error as ``q`` (the
two terms are negatives of each other), so the workload lists plain cells.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError
from synthdp.mechanisms.noise import discrete_laplace
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.queries.complement import base_class
from synthdp.queries.spec import parse_query_class
from synthdp.queries.workload import Workload

#: Products ``n * N_out`` below this are computed in int64; larger ones in exact Python integers.
_INT64_SAFE = 2**62


@dataclass(frozen=True)
class EvalWorkload:
    """A public evaluation workload: the cells of the marginals on ``marginals`` (attribute indices)."""

    marginals: tuple[tuple[int, ...], ...]
    name: str


def eval_workload(spec: Any, domain: Domain) -> EvalWorkload:
    """The evaluation workload described by ``spec``, fixed before the data are read (§5.2).

    ``spec`` is a query class spec whose cells are marginal cells
    (``"marginals:3"``, ``"marginals:<=2"``, ``"workload:adult_3way_64"``), a
    :class:`~synthdp.queries.workload.Workload` or conjunction class of
    bounded width, or a list of attribute-name lists.  It depends on the
    public domain only.
    """
    if isinstance(spec, (list, tuple)):
        if not spec:
            raise InputError("eval_workload is empty: list at least one marginal (a list of attribute names)")
        qc = Workload.from_names(domain, spec, name=f"workload[{len(spec)} marginals]")
    elif spec is None:
        raise InputError("eval_workload is required: a public workload such as 'marginals:3' or a list of "
                         "attribute-name lists, fixed before seeing the data")
    else:
        qc = base_class(parse_query_class(spec, domain, closed=False))
    if qc.listed_cells:
        return EvalWorkload(tuple(qc.marginal_attrs), qc.name)
    if qc.conjoins == "one-hot" and qc.max_width is not None and qc.max_width <= len(domain):
        widths = range(max(qc.min_width, 1), qc.max_width + 1)
        sets = tuple(s for k in widths for s in itertools.combinations(range(len(domain)), k))
        if sets:
            return EvalWorkload(sets, qc.name)
    raise InputError(f"eval_workload {getattr(qc, 'name', spec)!r} is not a workload of marginal cells; use "
                     "'marginals:K', 'marginals:<=K', 'workload:KEY' or a list of attribute-name lists")


def integer_error(real: AggregatedData, synthetic: AggregatedData, workload: EvalWorkload) -> int:
    """``Err(D, y) = max_q |N_out count_q(D) - n count_q(y)|`` over the workload's cells, exactly (§5.2)."""
    n, n_out = real.n, synthetic.n
    exact = n * n_out >= _INT64_SAFE
    worst = 0
    for attrs in workload.marginals:
        mine, theirs = real.marginal(attrs), synthetic.marginal(attrs)
        if exact:
            mine, theirs = mine.astype(object), theirs.astype(object)
        worst = max(worst, int(np.abs(n_out * mine - n * theirs).max()))
    return worst


def score_sensitivity(n_out: int, contribution_bound: int = 1) -> int:
    """Sensitivity of ``Err(D, y)`` in ``D``: ``N_out`` under both relations (§5.2), ``k N_out`` for units of ``k``
    rows (§10.6, Lemma 10.62)."""
    return n_out * contribution_bound


def score_noise_rate(epsilon_score: Fraction, n_out: int, contribution_bound: int = 1) -> Fraction:
    """The rate ``lambda = eps_s / (k N_out)`` of the score's discrete Laplace noise (§5.2, §1.6, §10.6)."""
    return Fraction(epsilon_score) / score_sensitivity(n_out, contribution_bound)


def private_score(error: int, epsilon_score: Fraction, n_out: int, rng: PrivateRandom,
                  contribution_bound: int = 1) -> int:
    """``-(Err + Z)``, ``Z ~ DLap(eps_s / (k N_out))`` exactly: the ``eps_s``-DP score (§5.2, §10.6)."""
    rate = score_noise_rate(epsilon_score, n_out, contribution_bound)
    return -(error + discrete_laplace(rate.numerator, rate.denominator, rng))


@dataclass(frozen=True)
class Outcome:
    """One candidate run as random stopping sees it: ``(j, y, s)`` of docs/privacy.md §5.1.

    ``score`` is the released private score, ``index`` the candidate's
    position in the public list, ``table`` the synthetic table ``y`` (a
    DataFrame), and ``public`` facts about the run that are functions of its
    configuration only (they never enter the order).
    """

    score: int
    index: int
    table: Any
    public: dict = field(default_factory=dict, compare=False)

    def serialised(self) -> bytes:
        """A canonical serialisation of ``y``: its CSV text (header, rows in order, no index)."""
        return self.table.to_csv(index=False).encode()


def outranks(a: Outcome, b: Outcome) -> bool:
    """``a > b`` in the fixed strict total order of §5.1.

    Higher score first; among equal scores the lower candidate index; then
    the lexicographically smaller serialisation of the table.  Only released
    values enter the comparison.
    """
    if a.score != b.score:
        return a.score > b.score
    if a.index != b.index:
        return a.index < b.index
    return a.serialised() < b.serialised()

