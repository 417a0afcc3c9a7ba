"""What select-measure-estimate selects from, pays for and releases (docs/privacy.md §8.1).

The candidates are a class's marginals and all their non-empty subsets,
weighted as AIM weights them (:func:`candidate_weights`); a
:class:`Measurement` is one paid measurement (its released scale, its cost,
what chose it, which estimator serves it); :class:`OracleSelection` is the
RSPM family for a class too large to enumerate; :class:`MeasureRelease` is
what a run hands back.  Everything here is a function of the public class,
domain and released values: nothing reads the data.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np

from synthdp.core.domain import Domain
from synthdp.core.errors import InputError
from synthdp.accounting.zcdp import exponential_rho, pure_rho
from synthdp.methods.measure.estimators import GraphicalModel
from synthdp.methods.measure.reweight import WeightedSample
from synthdp.oracles.base import Limits, Oracle
from synthdp.queries.base import QueryClass
from synthdp.queries.complement import base_class
from synthdp.queries.spec import parse_query_class
from synthdp.queries.workload import Workload


Marginal = tuple[int, ...]


#: Most marginals (with their subsets) a conjunction class may expand to (an unbounded class on many attributes is
#: refused) ...
MAX_MARGINALS = 20_000
#: ... unless its marginals read at most ``LOW_ORDER`` attributes: those are served up to this many (wide tables,
#: docs/privacy.md §8.9: their true counts are taken when a round first scores them, and a round scores at most
#: ``candidate_pool`` of them).
LOW_ORDER, MAX_LOW_ORDER_MARGINALS = 3, 200_000


def marginal_limit(width: int) -> int:
    """Most marginals (with their subsets) the method enumerates when the widest reads ``width`` attributes."""
    return MAX_LOW_ORDER_MARGINALS if width <= LOW_ORDER else MAX_MARGINALS


#: Who chose a measurement: nobody (the initial 1-way marginals), the exponential mechanism over marginals or
#: over the estimate's most probable records (``record``), RSPM, or the covering step (``cover``: a workload
#: marginal no measurement of the rounds contains, docs/privacy.md §8.10).
SELECTORS = ("initial", "exponential", "record", "rspm", "cover")


#: Which estimator serves a measurement.
GRAPHICAL_MODEL, REWEIGHTED_SAMPLE = "graphical model", "reweighted sample"


@dataclass(frozen=True)
class Measurement:
    """One paid measurement: what was measured, its noise scale, its cost, what chose it, what estimator serves it.

    ``query`` is the measured query in words when one query was measured
    alone (an oracle selection too wide to widen); None for a marginal.
    ``noise`` is ``"gaussian"`` (zCDP: ``sigma2`` is the scale, ``rho`` the
    cost) or ``"laplace"`` (pure DP, docs/privacy.md §10.2: the scale is the
    rate ``a`` and the cost an ``epsilon``; :attr:`sigma2` and :attr:`rho`
    do not exist then).
    """

    attrs: Marginal
    names: tuple[str, ...]
    scale: Fraction
    cost: Fraction
    selection_epsilon: Fraction | None = None  # None for the initial 1-way marginals
    selected_by: str = "exponential"
    query: str | None = None
    estimator: str = GRAPHICAL_MODEL
    noise: str = "gaussian"
    #: A coarse measurement (docs/privacy.md §8.11): per attribute, how many groups it is read through (None: its
    #: cells); None for a fine measurement.
    groups: tuple[int | None, ...] | None = None
    #: A level of a refined reading (docs/privacy.md §11.1): 0 the twin, then 1, 2, ... below it; and how many cells
    #: it measured.  None for any other measurement.
    level: int | None = None
    cells: int | None = None

    def __post_init__(self) -> None:
        if self.selected_by not in SELECTORS:
            raise InputError(f"selected_by must be one of {SELECTORS}, got {self.selected_by!r}")

    @property
    def fine(self) -> bool:
        """Whether it read every fine cell of its marginal one by one (not through groups, not a level of a refined
        reading): only then does it hold the marginal (docs/privacy.md §8.10)."""
        return self.groups is None and self.level is None

    @property
    def sigma2(self) -> Fraction:
        """The discrete Gaussian's scale (zCDP measurements only)."""
        if self.noise != "gaussian":
            raise AttributeError("a Laplace measurement has a rate (scale), not a sigma2")
        return self.scale

    @property
    def rho(self) -> Fraction:
        """The measurement's zCDP cost (zCDP measurements only)."""
        if self.noise != "gaussian":
            raise AttributeError("a Laplace measurement costs an epsilon (cost), not a rho")
        return self.cost

    @property
    def selection_rho(self) -> Fraction:
        if self.selection_epsilon is None:
            return Fraction(0)
        return pure_rho(self.selection_epsilon) if self.selected_by == "rspm" else exponential_rho(self.selection_epsilon)

    def to_dict(self) -> dict:
        if self.noise == "gaussian":
            noise = {"sigma2": str(self.scale), "rho": str(self.cost)}
        else:
            noise = {"laplace_rate": str(self.scale), "epsilon": str(self.cost)}
        coarse = {} if self.groups is None else \
            {"groups": {name: k for name, k in zip(self.names, self.groups) if k is not None}}
        level = {} if self.level is None else {"level": self.level, "cells": self.cells}
        return {"marginal": list(self.names), "query": self.query, **noise, **coarse, **level,
                "selected_by": self.selected_by,
                "selection_epsilon": None if self.selection_epsilon is None else str(self.selection_epsilon),
                "estimator": self.estimator}


@dataclass(frozen=True)
class OracleSelection:
    """RSPM over a class too large to enumerate (docs/privacy.md §8.1 (b), second bullet; §2).

    ``query_class`` must be closed under complement (the objective of §4.1
    finds queries the estimate under-counts; their complements, the ones
    it over-counts).  ``mode``/``limits`` as in :func:`synthdp.mechanisms.rspm.rspm`.
    """

    query_class: QueryClass
    oracle: Oracle
    mode: str = "E"
    limits: Limits | None = None

    def __post_init__(self) -> None:
        if not self.query_class.complement_closed:
            raise InputError(f"oracle selection needs a complement-closed class, got {self.query_class.name}")


@dataclass
class MeasureRelease:
    """The synthetic records (integer codes in the domain's coding) and what was paid for."""

    records: np.ndarray
    measurements: list[Measurement]
    rounds: int
    rho_spent: Fraction
    model_total: float
    #: The estimate the records were drawn from: the graphical model or its reweighted sample (§8.7, §10.9).
    estimate: GraphicalModel | WeightedSample
    #: The covering step's marginals skipped because their noise would exceed the released total over their cells
    #: (§13): a function of released values.
    cover_skipped: int = 0


def workload_marginals(query_class: str | QueryClass | Sequence[Sequence[int]], domain: Domain) -> list[Marginal]:
    """The marginals (sorted attribute-index tuples) whose cells determine every query of ``query_class``.

    Serves explicit workloads (``workload:FILE`` or a list of attribute-index
    tuples), ``marginals:K``, ``marginals:<=K``, and every class whose
    queries read at most ``K`` attributes (bounded conjunctions, and
    parities, monotone conjunctions and disjunctions of width ``K``: each
    query is a function of the marginal on the attributes it reads), with
    or without complements, given as a spec string or a class; any other
    class raises :class:`InputError` (it is served through the oracle path).
    """
    if isinstance(query_class, str):
        query_class = parse_query_class(query_class, domain, closed=False)
    if not isinstance(query_class, QueryClass):
        return list(Workload(domain, query_class).marginal_attrs)
    qc = base_class(query_class)
    if qc.listed_cells:
        return list(qc.marginal_attrs)
    widths = qc.marginal_widths()  # their subsets are candidates too
    if widths is None:
        raise InputError(f"{query_class.name} is not a marginal class: its queries may read every attribute")
    count = sum(math.comb(len(domain), k) for k in range(1, widths[-1] + 1))  # the candidates: all their subsets
    if count > marginal_limit(widths[-1]):
        raise InputError(f"{qc.name} would need {count} marginals (at most {marginal_limit(widths[-1])}); it is served "
                         "through "
                         "the oracle path")
    return [m for k in widths for m in itertools.combinations(range(len(domain)), k)]


def backbone_marginals(domain: Domain, width: int) -> list[Marginal]:
    """Every marginal on ``width`` attributes (the workload of ``marginals:width``; its subsets are candidates too).

    Weighting the candidates by this workload, rather than by all marginals
    up to ``width``, was better on NLTCS at eps 0.1 and 0.25 (certified error
    over all conjunctions 0.052 vs 0.057 and 0.026 vs 0.033, 2 seeds).
    """
    return list(itertools.combinations(range(len(domain)), min(width, len(domain))))


def query_attributes(query_class: QueryClass, query) -> Marginal:
    """The attributes a query of ``query_class`` reads: a function of the query alone (the widening rule, §8.1 (b))."""
    return query_class.attributes_of(query)


def released_attributes(domain: Domain, names: Sequence[str]) -> frozenset[int]:
    """The attributes of ``domain`` named by ``MeasureOptions.released_columns``; refuses a name it lacks."""
    missing = [name for name in names if name not in domain.names]
    if missing:
        raise InputError(f"released_columns names {missing}, which the domain lacks (its columns: "
                         f"{list(domain.names)}); name columns of the table")
    return frozenset(domain.names.index(name) for name in names)


def beyond_released(marginals, released: frozenset[int]) -> list[Marginal]:
    """The marginals of ``marginals`` with at least one attribute outside ``released``: the ones a run measures
    when the marginals over ``released`` alone come from another release (docs/privacy.md §12 step 2)."""
    return [m for m in marginals if not set(m) <= released]


def candidate_weights(marginals: Sequence[Marginal]) -> dict[Marginal, int]:
    """Every non-empty subset of a workload marginal, weighted by ``sum_m |r & m|`` over the workload (AIM's weights)."""
    closure = sorted({s for m in marginals for k in range(1, len(m) + 1) for s in itertools.combinations(m, k)},
                     key=lambda s: (len(s), s))
    holding = Counter(a for m in marginals for a in set(m))  # sum_m |r & m| = sum over a in r of #{m : a in m}
    return {r: sum(holding[a] for a in set(r)) for r in closure}
