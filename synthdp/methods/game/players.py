"""Query players of the game: RSPM (Mode E or N), PRSMA (Mode P, or its exact-oracle law), and the
workload baselines (exponential mechanism, report-noisy-max).

Each player builds the round objective of docs/privacy.md §4.1 from the real data and
the data player's ``N`` samples and spends its own per-round budget through
the mechanism that records it in the ledger.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np

from synthdp.oracles.base import Limits, Oracle, QueryInstance
from synthdp.queries.base import ENUMERATION_LIMIT, QueryClass
from synthdp.queries.complement import Not, base_class
from synthdp.accounting.ledger import Ledger
from synthdp.core.data import AggregatedData
from synthdp.mechanisms.prsma import prsma, prsma_parameters
from synthdp.methods.game.algorithm import Selection
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.rspm import difference_sensitivity, rspm
from synthdp.mechanisms.selection import exponential_mechanism, report_noisy_max
from synthdp.queries.workload import Workload


def game_instance(query_class: QueryClass, real: AggregatedData, synthetic: AggregatedData) -> QueryInstance:
    """``L(q) = -N sum_x n_x(D) q(x) + n sum_x N_x q(x)`` (docs/privacy.md §4.1 step 2, Lemma 2.0(b))."""
    codes, weights = real.combine(synthetic, -synthetic.n, real.n)
    return QueryInstance.build(query_class, codes, weights)


@dataclass
class RSPMPlayer:
    """Discrete RSPM on the game objective, ``Delta = 2N`` under both relations (docs/privacy.md §4.1)."""

    query_class: QueryClass
    oracle: Oracle
    epsilon0: Fraction
    rng: PrivateRandom
    ledger: Ledger
    relation: str
    mode: str = "E"
    limits: Limits | None = None
    name: str = "rspm"

    def select(self, real: AggregatedData, synthetic: AggregatedData, round_index: int) -> Selection:
        instance = game_instance(self.query_class, real, synthetic)
        result = rspm(instance, epsilon=self.epsilon0,
                      sensitivity=difference_sensitivity(synthetic.n, self.relation, "game"),
                      oracle=self.oracle, rng=self.rng, ledger=self.ledger, mode=self.mode,
                      limits=self.limits, relation=self.relation, label=f"round {round_index}")
        return Selection(result.query, result.conditional, [result.oracle])


@dataclass
class PRSMAPlayer:
    """PRSMA around RSPM on the game objective of each piece (docs/privacy.md §4.7, Mode P).

    ``exact_oracle=True`` samples PRSMA's output law under an oracle that never
    fails, one unlimited call per round (:func:`synthdp.mechanisms.prsma.prsma`): for
    measuring PRSMA's accuracy where its ``K R`` calls are out of reach.
    """

    query_class: QueryClass
    oracle: Oracle
    epsilon: Fraction
    delta: Fraction
    rng: PrivateRandom
    ledger: Ledger
    limits: Limits | None
    max_oracle_calls: int
    insist: bool = False
    exact_oracle: bool = False
    name: str = "prsma"
    #: PRSMA's running time tracks the failure flags it hides (docs/privacy.md §3.2): progress shows no times.
    timings_private: ClassVar[bool] = True

    def select(self, real: AggregatedData, synthetic: AggregatedData, round_index: int) -> Selection:
        params = prsma_parameters(self.epsilon, self.delta, real.n, self.query_class.separator().m,
                                  synthetic.n, log_q=_log_size(self.query_class))

        def piece_instance(piece: AggregatedData) -> QueryInstance:
            return game_instance(self.query_class, piece, synthetic)

        result = prsma(real.expand(), piece_instance, domain=real.domain, params=params, oracle=self.oracle,
                       limits=self.limits, rng=self.rng, ledger=self.ledger, max_oracle_calls=self.max_oracle_calls,
                       insist=self.insist, label=f"round {round_index}", exact_oracle=self.exact_oracle)
        note = "" if result.query is not None else "PRSMA returned bottom: round skipped"
        # The per-call oracle results are PRSMA diagnostics, not private: their count and failures
        # reveal the flags f_i that PRSMA only releases through the noisy test (docs/privacy.md §3.2), and
        # they would reach the published report (oracle_stats) and the progress bar.  Keep them out.
        return Selection(result.query, False, [], note)


def _log_size(query_class: QueryClass) -> float:
    return math.log(query_class.size())


@dataclass
class WorkloadPlayer:
    """Exponential mechanism or report-noisy-max over an enumerated, complement-closed workload (docs/privacy.md §4.6).

    Scores ``U(q) = N sum n_x q(x) - n sum N_x q(x)`` come from marginal counts
    (one table per attribute set, never cell by cell in Python); a complement
    scores ``-U(q)``.  Score sensitivity is ``N`` under both relations.
    """

    query_class: QueryClass
    epsilon0: Fraction
    rng: PrivateRandom
    ledger: Ledger
    relation: str
    mechanism: str = "exponential"
    name: str = "exponential"

    def __post_init__(self) -> None:
        base = base_class(self.query_class)
        self.workload = as_workload(base)
        self.base = base
        self.queries = None if self.workload is not None else base.enumerate()

    def _counts(self, data: AggregatedData) -> np.ndarray:
        if self.workload is not None:
            return self.workload.cell_answers(data.codes, data.counts)
        return self.base.answers(self.queries, data)

    def _query(self, index: int):
        return self.workload.query_at(index) if self.workload is not None else self.queries[index]

    def _real_counts(self, real: AggregatedData) -> np.ndarray:
        """The real data's counts, computed once: they are the same every round."""
        if getattr(self, "_real", None) is not real:
            self._real, self._real_cache = real, self._counts(real)
        return self._real_cache

    def select(self, real: AggregatedData, synthetic: AggregatedData, round_index: int) -> Selection:
        u = synthetic.n * self._real_counts(real) - real.n * self._counts(synthetic)
        scores = np.concatenate([u, -u])
        pick = exponential_mechanism if self.mechanism == "exponential" else report_noisy_max
        index = pick(scores, epsilon=self.epsilon0, sensitivity=synthetic.n, rng=self.rng, ledger=self.ledger,
                     relation=self.relation, label=f"round {round_index}")
        k = len(u)
        return Selection(self._query(index) if index < k else Not(self._query(index - k)))


def as_workload(base: QueryClass):
    """The class as an explicit marginal workload (all cells of listed attribute sets), if it is one."""
    if base.listed_cells:
        return base
    if base.conjoins == "one-hot" and base.min_width == base.max_width:
        return Workload(base.domain, list(itertools.combinations(range(len(base.domain)), base.min_width)))
    return None


def workload_size(base: QueryClass) -> int | None:
    """How many base queries a workload player scores; None when the class is too large to enumerate."""
    if base.conjoins == "one-hot" and base.min_width == base.max_width:
        return base.size()  # the cells of all k-way marginals, counted without listing them (200 columns: 1.3M sets)
    workload = as_workload(base)
    if workload is not None:
        return workload.n_cells
    size = base.size()
    return size if size <= ENUMERATION_LIMIT else None
