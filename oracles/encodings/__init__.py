"""Encodings of the two oracle problems, one module per class family.

:func:`encode_query` and :func:`encode_data` build a backend-neutral
:class:`~synthdp.oracles.model.Model` for a (base) query class;
:class:`EncodedOracle` is the oracle every solver backend derives from:
it encodes, runs the backend's translation under the wall-clock watchdog,
and decodes the solution into a query or a record.
"""

from __future__ import annotations

import logging
import tempfile
import time
from abc import abstractmethod
from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from synthdp.oracles.base import Limits, Oracle, Raw
from synthdp.oracles.encodings import conjunctions, disjunctions, halfspaces, parities
from synthdp.oracles.encodings.common import weighted_points
from synthdp.oracles.model import KIND, Encoded, Model, Outcome
from synthdp.oracles.watchdog import TimedOut, run_with_deadline
from synthdp.queries.base import QueryClass
from synthdp.queries.conjunctions import Conjunctions
from synthdp.queries.disjunctions import Disjunctions
from synthdp.queries.halfspaces import Halfspaces
from synthdp.queries.monotone import MonotoneConjunctions
from synthdp.queries.parities import Parities
from synthdp.core.errors import OracleError

log = logging.getLogger(__name__)

#: The solver's own time limit stops this much before the hard kill (at most ``_MARGIN`` seconds).
_MARGIN_FRACTION, _MARGIN = 0.1, 2.0
#: Every constraint kind of the neutral model.
ALL_KINDS = frozenset(KIND.values())
#: (backend, family) pairs whose lack of support has been logged once.
_EXPLAINED: set[tuple[str, str]] = set()


@dataclass(frozen=True)
class Family:
    """The encoders of one class family and the constraint kinds they need at least.

    ``query`` also receives the kinds the backend translates: an encoder may
    pick a stronger formulation when more kinds are available (parities).
    """

    name: str
    kinds: frozenset[str]
    query: Callable[[QueryClass, np.ndarray, np.ndarray, np.ndarray, frozenset[str]], Encoded]
    data: Callable[[QueryClass, list, np.ndarray, np.ndarray], Encoded]


def _on_points(encode: Callable[[QueryClass, np.ndarray, np.ndarray], Encoded]):
    """A query encoder from one over weighted points (records and separator points pooled)."""
    def query(query_class, codes, weights, separator_weights, kinds) -> Encoded:
        return encode(query_class, *weighted_points(query_class, codes, weights, separator_weights))
    return query


def _any_kinds(encode):
    """A query encoder that uses one formulation whatever the backend translates."""
    def query(query_class, codes, weights, separator_weights, kinds) -> Encoded:
        return encode(query_class, codes, weights, separator_weights)
    return query


#: Checked in order (a workload is a :class:`Conjunctions`).
FAMILIES: tuple[tuple[type, Family], ...] = (
    (Conjunctions, Family("conjunctions", conjunctions.KINDS, _on_points(conjunctions.query_points),
                          conjunctions.data)),
    (MonotoneConjunctions, Family("monotone", conjunctions.KINDS, _on_points(conjunctions.monotone_query_points),
                                  conjunctions.monotone_data)),
    (Disjunctions, Family("disjunctions", disjunctions.KINDS, _any_kinds(disjunctions.query), disjunctions.data)),
    (Parities, Family("parities", parities.KINDS, parities.query, parities.data)),
    (Halfspaces, Family("halfspaces", halfspaces.KINDS, _any_kinds(halfspaces.query), halfspaces.data)),
)


def family_of(query_class: QueryClass) -> Family | None:
    """The encoding family of a base class, or ``None`` if none encodes it."""
    return next((fam for cls, fam in FAMILIES if isinstance(query_class, cls)), None)


def encode_query(query_class: QueryClass, codes, weights, separator_weights,
                 kinds: frozenset[str] = ALL_KINDS) -> Encoded:
    """Model of ``min_q sum_r w_r q(x_r) + sum_i eta_i sig_i(q)`` over a base class.

    ``kinds``: the constraint kinds the target backend translates.
    """
    return _family(query_class).query(query_class, np.asarray(codes, dtype=np.int64),
                                      np.asarray(weights, dtype=np.int64),
                                      np.asarray(separator_weights, dtype=np.int64), frozenset(kinds))


def encode_data(query_class: QueryClass, queries: list, weights, rho) -> Encoded:
    """Model of ``max_x sum_t w_t q_t(x) + sum_j rho_j x_j`` over valid records."""
    return _family(query_class).data(query_class, list(queries), np.asarray(weights, dtype=np.int64),
                                     np.asarray(rho, dtype=np.int64))


def _family(query_class: QueryClass) -> Family:
    fam = family_of(query_class)
    if fam is None:
        raise OracleError(f"no solver encoding for the query class {query_class.name}")
    return fam


class EncodedOracle(Oracle):
    """An oracle that solves both players through the family encodings.

    A backend sets :attr:`kinds` (the constraint kinds it translates),
    ``integer_limit`` (its exact-integer range, requirement R1) and
    ``default_work_limit`` (in its own work unit), and implements
    :meth:`solve_model`.
    """

    kinds: frozenset[str] = frozenset()

    def supports(self, query_class: QueryClass) -> bool:
        fam = family_of(query_class)
        if fam is None:
            return False
        missing = fam.kinds - self.kinds
        if missing and (self.name, fam.name) not in _EXPLAINED:
            _EXPLAINED.add((self.name, fam.name))
            log.warning("the %s backend cannot encode %s: their encoding needs %s constraints, which %s does not "
                        "translate; use a backend that does (cpsat translates every family)",
                        self.name, fam.name, "/".join(sorted(missing)), self.name)
        return not missing

    def _minimize(self, query_class, codes, weights, separator_weights, limits: Limits) -> Raw:
        start = time.perf_counter()
        return self._solve(encode_query(query_class, codes, weights, separator_weights, self.kinds), limits, start)

    def _maximize(self, query_class, queries, weights, rho, limits: Limits) -> Raw:
        start = time.perf_counter()
        return self._solve(encode_data(query_class, queries, weights, rho), limits, start)

    def _solve(self, encoded: Encoded, limits: Limits, start: float) -> Raw:
        """Run :meth:`solve_model` (under the watchdog when there is a time limit) and decode."""
        model = encoded.model
        log.debug("%s: %d variables, %d constraints, encoded in %.3fs", self.name, model.n_vars,
                  len(model.constraints), time.perf_counter() - start)
        if not model.kinds() <= self.kinds:
            raise OracleError(f"{self.name} cannot translate {sorted(model.kinds() - self.kinds)} constraints; "
                              f"the encoding emitted kinds its family does not declare")
        if model.magnitude() >= self.integer_limit:
            return Raw(None, None, "integer range", False,
                       message=f"objective or constraint sums reach {model.magnitude()}, beyond the exact range "
                               f"{self.integer_limit} of {self.name} (docs/privacy.md §2.7 R1)")
        if not model.constraints and not model.objective:  # nothing to decide: every assignment is optimal
            return Raw(encoded.decode(dict.fromkeys(encoded.outputs, 0)), model.constant, "trivial", True)
        timeout = None if limits.time_limit is None else limits.time_limit - (time.perf_counter() - start)
        budget = None if timeout is None else max(0.0, timeout - min(_MARGIN, _MARGIN_FRACTION * timeout))
        if budget is not None and budget <= 0:
            return Raw(None, None, "time limit", False, message=f"{self.name}: no time left to solve")
        self.load()  # in this process, so that a forked child does not pay for the import
        with tempfile.TemporaryDirectory(prefix=f"synthdp-{self.name}-") as workdir:  # removed even after a kill
            outcome = run_with_deadline(partial(self.solve_model, model, encoded.outputs, limits, budget, workdir),
                                        timeout)
        if isinstance(outcome, TimedOut):
            return Raw(None, None, "time limit", False,
                       message=f"{self.name} killed at the wall-clock limit after {outcome.seconds:.3g}s")
        log.debug("PRIVATE, do not publish: %s: %s (proven %s, bound %s) after %.3fs", self.name, outcome.status,
                  outcome.proven, outcome.bound, time.perf_counter() - start)
        solution = None if outcome.values is None else encoded.decode(outcome.values)
        bound = None if outcome.bound is None else outcome.bound + model.constant
        return Raw(solution, bound, outcome.status, outcome.proven and solution is not None, outcome.nodes,
                   outcome.message)

    def load(self) -> None:
        """Import the solver library (lazily: importing every backend's library up front is slow)."""

    @abstractmethod
    def solve_model(self, model: Model, outputs: tuple[int, ...], limits: Limits,
                    time_budget: float | None, workdir: str) -> Outcome:
        """Optimise ``model``; report the values of ``outputs`` and a valid bound.

        ``time_budget`` is the solver's own wall-clock limit (``None``: none);
        a hard kill follows shortly after it.  ``limits.work_limit`` is a
        deterministic budget in the backend's native unit.  ``workdir`` is a
        private scratch directory, removed by the caller.
        """
