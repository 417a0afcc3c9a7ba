"""The interface every query class implements.

A query class is a finite set of counting queries ``q: {0,1}^D -> {0,1}``
over a *feature space* (the one-hot encoding of a record, or its compact
binary encoding).  Besides evaluation, it gives the privacy mechanisms a
**separator**: a list of ``m`` pseudo-points (or, for classes that need it,
``m`` binary functions of the solver's representation) such that any two
distinct queries of the class disagree on at least one of them.  That is
requirement R0 of docs/privacy.md (§1.2): RSPM adds one noise term
per separator coordinate, so ``m`` should be as small as can be proved.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from synthdp.core.domain import Domain
from synthdp.core.errors import InputError

Query = Any

#: Classes larger than this refuse to enumerate.
ENUMERATION_LIMIT = 2_000_000


def onehot_features(domain: Domain, codes: np.ndarray) -> np.ndarray:
    """One feature per (attribute, value): the one-hot encoding."""
    return domain.onehot(codes)


def binary_feature_columns(domain: Domain) -> list[tuple[int, int]]:
    """The compact binary feature map as ``(attribute, value)`` pairs.

    A two-valued attribute gives one feature, ``[x_a == 1]``; any other
    attribute gives its one-hot block ``[x_a == v]`` for every value ``v``.
    On an all-binary dataset (NLTCS, ACS) the features are the attributes.
    """
    cols: list[tuple[int, int]] = []
    for a, size in enumerate(domain.sizes):
        cols.extend([(a, 1)] if size == 2 else [(a, v) for v in range(size)])
    return cols


def binary_features(domain: Domain, codes: np.ndarray) -> np.ndarray:
    """Apply :func:`binary_feature_columns` to code rows; an ``(n, d)`` uint8 matrix."""
    codes = np.asarray(codes, dtype=np.int64)
    cols = binary_feature_columns(domain)
    attrs = np.array([a for a, _ in cols], dtype=np.int64)
    vals = np.array([v for _, v in cols], dtype=np.int64)
    return (codes[:, attrs] == vals[None, :]).astype(np.uint8)


@dataclass(frozen=True)
class Separator:
    """A separator of a query class.

    ``points`` is an ``(m, n_features)`` 0/1 matrix when the separator is a
    set of points (the signature of ``q`` is then ``q`` evaluated on them);
    it is ``None`` for a *generalised* separator whose coordinates are
    binary functions of the solver's representation (see halfspaces).
    ``argument`` is the proof, in words, that it separates.
    """

    m: int
    points: np.ndarray | None
    argument: str


class QueryClass(ABC):
    """A finite class of counting queries over the records of ``domain``."""

    #: Short name used in specs and reports, e.g. ``"marginals:3"``.
    name: str = "queries"
    #: Whether ``1 - q`` is in the class for every ``q``.
    complement_closed: bool = False
    #: What the class's structure lets a solver or an evaluator exploit (read by the oracles, the players and the
    #: evaluators instead of testing concrete classes).  ``conjoins``: the queries are conjunctions of record
    #: literals, of ``"one-hot"`` literals ``x_a = v`` or of ``"binary"`` features (:meth:`literals` reads them);
    #: None otherwise.  ``disjoins``: the same for disjunctions.  ``listed_cells``: the class is the cells of an
    #: explicit list of attribute sets (``marginal_attrs``), not every set within its width bounds.  ``parity``:
    #: XORs of binary features.  ``linear_threshold``: halfspaces over binary features.
    conjoins: str | None = None
    disjoins: str | None = None
    listed_cells: bool = False
    parity: bool = False
    linear_threshold: bool = False

    def __init__(self, domain: Domain):
        self.domain = domain

    # ----- feature space -------------------------------------------------
    @property
    def n_features(self) -> int:
        """Dimension ``D`` of the points queries are evaluated on."""
        return self.domain.n_onehot

    def features(self, codes: np.ndarray) -> np.ndarray:
        """Feature vectors of valid records (one-hot by default)."""
        return onehot_features(self.domain, codes)

    # ----- evaluation ----------------------------------------------------
    @abstractmethod
    def evaluate(self, queries: Sequence[Query], points: np.ndarray) -> np.ndarray:
        """``out[i, j] = queries[i](points[j])`` for 0/1 feature points; uint8."""

    def answer(self, queries: Sequence[Query], codes: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Exact integer ``sum_r weights[r] * q(codes[r])`` for each query.

        The default goes through :meth:`evaluate`; classes override it with
        a faster path (marginal tables for conjunctions).
        """
        weights = np.asarray(weights, dtype=np.int64)
        out = np.zeros(len(queries), dtype=np.int64)
        step = max(1, 2_000_000 // max(1, len(queries)))
        for start in range(0, len(codes), step):
            vals = self.evaluate(queries, self.features(codes[start : start + step])).astype(np.int64)
            out += vals @ weights[start : start + step]
        return out

    def answers(self, queries: Sequence[Query], data) -> np.ndarray:
        """Un-normalised counts ``n q(D)`` on an :class:`~synthdp.core.data.AggregatedData`."""
        return self.answer(queries, data.codes, data.counts)

    # ----- separators ----------------------------------------------------
    @abstractmethod
    def separator(self) -> Separator:
        """A separator set for the class (requirement R0)."""

    def signature(self, queries: Sequence[Query]) -> np.ndarray:
        """``(len(queries), m)`` 0/1 matrix of separator coordinates."""
        sep = self.separator()
        if sep.points is None:
            raise NotImplementedError(f"{type(self).__name__} must implement signature()")
        return self.evaluate(queries, sep.points)

    def dual_separator(self) -> list[tuple[int, int]]:
        """The one-hot coordinates ``x -> [x_a == v]`` of a record: ``sum(size_a)`` of them (docs/privacy.md §4.3).

        They separate records: two records that differ in attribute ``a``
        differ on ``[x_a == v]`` for either of their values ``v``.  The last
        value of each attribute is redundant for separation, but it is kept:
        the data player perturbs every coordinate, and a value without a
        coordinate would never be perturbed -- under two-sided noise it would
        lose to the largest of its attribute's other noises, under one-sided
        penalties it would win every tie.
        """
        return [(a, v) for a, size in enumerate(self.domain.sizes) for v in range(size)]

    # ----- enumeration and membership -------------------------------------
    @abstractmethod
    def size(self) -> int:
        """Exact number of queries (a Python int; may be astronomically large)."""

    def enumerate(self) -> list[Query]:
        """Every query of the class; refuses when the class is too large."""
        if self.size() > ENUMERATION_LIMIT:
            raise InputError(
                f"{self.name} has {self.size()} queries, more than the enumeration limit "
                f"{ENUMERATION_LIMIT}; use a solver oracle instead of enumeration"
            )
        return list(self._enumerate())

    @abstractmethod
    def _enumerate(self):
        """Yield every query (called only when the class is small enough)."""

    @abstractmethod
    def contains(self, query: Query) -> bool:
        """Exact membership test (used to verify solver output, R2)."""

    @abstractmethod
    def describe(self, query: Query) -> str:
        """The query in column terms, e.g. ``age=30-39 AND sex=Male``."""

    def literals(self, query: Query) -> tuple[tuple[int, int], ...]:
        """The record literals ``(attribute, value)`` whose conjunction is ``query`` (classes that ``conjoins``)."""
        raise TypeError(f"{self.name} queries are not conjunctions of record literals")

    # ----- the attributes a query reads ------------------------------------
    @property
    def attributes_read(self) -> int | None:
        """At most how many attributes one query reads; None when a query may read every attribute."""
        return None

    def marginal_widths(self) -> range | None:
        """The widths ``k`` of the ``k``-way marginals whose cells determine every query; None when there are none.

        A query that reads at most ``K`` attributes is a function of the marginal on them, and that marginal a
        function of any ``K``-way marginal holding them: the default is ``K`` alone (at most ``d``).
        """
        width = self.attributes_read
        if width is None:
            return None
        width = min(width, len(self.domain))
        return range(width, width + 1)

    def attributes_of(self, query: Query) -> tuple[int, ...]:
        """The attributes ``query`` reads (sorted): a function of the query alone, never of the data."""
        raise InputError(f"cannot tell which attributes {query!r} of {self.name} reads")

    def complement(self, query: Query) -> Query:
        """``1 - q`` as a query of this class (complement-closed classes only)."""
        raise InputError(f"{self.name} is not closed under complement; wrap it in ComplementClosed")

    def anchor(self) -> tuple[np.ndarray, int] | None:
        """A point where every query of the class takes the same value, and that value.

        Complement closure adds it to the separator (it separates ``q`` from
        ``1 - q'``).  ``None`` when no such point exists.
        """
        return None

    # ----- objective -----------------------------------------------------
    def objective(self, query: Query, codes: np.ndarray, weights: np.ndarray, separator_weights: np.ndarray) -> int:
        """Exact integer objective ``sum_r w_r q(x_r) + sum_i eta_i sig_i(q)``."""
        data_term = int(self.answer([query], codes, weights)[0])
        sig = self.signature([query])[0].astype(object)
        return data_term + int(np.dot(sig, np.asarray(separator_weights, dtype=object)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class DerivedClass(QueryClass):
    """A class defined from another one on the same records and features.

    Complement closure and De Morgan duals are built this way: they
    evaluate the base class's queries on the same feature vectors, so the
    feature map and the dual separator (which separates records, not
    queries) are the base's.
    """

    def __init__(self, base: QueryClass, name: str):
        super().__init__(base.domain)
        self.base = base
        self.name = name

    @property
    def n_features(self) -> int:
        return self.base.n_features

    def features(self, codes: np.ndarray) -> np.ndarray:
        return self.base.features(codes)

    def dual_separator(self) -> list[tuple[int, int]]:
        return self.base.dual_separator()
