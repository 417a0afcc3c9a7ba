"""Exact row identity on any domain (docs/privacy.md §10.1).

Rows are matched and counted by whole-row keys (:mod:`synthdp.core.keys`),
never by an int64 index that wraps: on a domain of ``4**33 = 2**66`` cells an
index modulo ``2**64`` drops the first column, and two records that differ
only there would share one count.  The record rounds of ``measure`` read
those counts, so a wrapped key would let one record move a measured count by
hundreds.  The end-to-end test couples two neighbouring runs (every noisy
output of the second run is the first run's, allowed only when the true
answers differ by at most the sensitivity paid for) and compares every
released field.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.core.errors import InternalError
from synthdp.core.keys import count_equal, pack, unpack, word_spans
from synthdp.engines.keys import aggregate
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.accounting.zcdp import ZcdpLedger
from synthdp.methods.measure import rounds, state
from synthdp.methods.measure import spanning
from synthdp.methods.measure.estimators import EstimatorSettings
from synthdp.methods.measure.algorithm import measure
from synthdp.methods.measure.measurements import OracleSelection
from synthdp.methods.measure.rounds import record_counts
from synthdp.methods.measure.settings import MeasureOptions
from synthdp.oracles import get_oracle
from synthdp.queries.spec import parse_query_class

WIDE = Domain(tuple(f"c{i}" for i in range(33)), (4,) * 33)  # 2**66 cells
BINARY = Domain(tuple(f"b{i}" for i in range(200)), (2,) * 200)  # 2**200 cells


def _issue_table(domain: Domain, column: int = 0) -> tuple[AggregatedData, np.ndarray]:
    """1000 copies of the all-zeros record A and one record B, A with ``column`` set to 1; and the points A, B."""
    a = np.zeros(len(domain), dtype=np.int64)
    b = a.copy()
    b[column] = 1
    return AggregatedData.from_codes(domain, np.vstack([np.tile(a, (1000, 1)), b])), np.vstack([a, b])


@pytest.mark.parametrize("domain", [WIDE, BINARY], ids=["4^33", "2^200"])
@pytest.mark.parametrize("column", [0, 1, -1])
def test_record_counts_are_exact_beyond_2_to_the_63_cells(domain, column):
    data, points = _issue_table(domain, column % len(domain))
    assert record_counts(data, points).tolist() == [1000, 1]
    # the counting engines key the same rows the same way
    counted = aggregate(domain, data.expand())
    assert np.array_equal(counted.codes, data.codes) and counted.counts.tolist() == data.counts.tolist()


@pytest.mark.parametrize("domain", [WIDE, BINARY], ids=["4^33", "2^200"])
def test_whole_row_keys_agree_with_brute_force(domain):
    gen = np.random.default_rng(0)
    rows = gen.integers(0, 2, (300, len(domain)))
    rows[100:200] = rows[:100]  # duplicates
    rows[200:, 0] = 1 - rows[:100, 0]  # differ only in the first column from an earlier row
    counts = gen.integers(1, 5, len(rows))
    points = np.vstack([rows[::7], gen.integers(0, 2, (20, len(domain)))])
    brute = [int(counts[(rows == p).all(axis=1)].sum()) for p in points]
    assert count_equal(rows, counts, points, domain.sizes).tolist() == brute
    keys = pack(rows, domain.sizes)
    assert keys.shape[1] == len(word_spans(domain.sizes)) > 1
    assert np.array_equal(unpack(keys, domain.sizes), rows)
    assert len({tuple(k) for k in keys.tolist()}) == len({tuple(r) for r in rows.tolist()})


def test_int64_indexes_refuse_products_of_2_to_the_63_or_more():
    under = Domain(tuple(f"x{i}" for i in range(62)), (2,) * 62 + ())
    top = np.ones((1, 62), dtype=np.int64)
    assert under.flat_index(top, tuple(range(62))).tolist() == [2**62 - 1]
    at = Domain(tuple(f"x{i}" for i in range(63)), (2,) * 63)
    with pytest.raises(InternalError, match="at least 2\\*\\*63"):
        at.flat_index(np.ones((1, 63), dtype=np.int64), tuple(range(63)))
    with pytest.raises(InternalError, match="would wrap"):
        WIDE.flat_index(np.zeros((1, 33), dtype=np.int64), tuple(range(33)))
    assert WIDE.flat_index(np.ones((1, 33), dtype=np.int64), tuple(range(31))).tolist() == [(4**31 - 1) // 3]


# ---------------------------------------------------------------------- neighbouring runs with record rounds on
OPTIONS = MeasureOptions(rounds_per_attribute=1, record_every=2, record_after=0, oracle_every=0, backbone_width=2,
                         support=2000, support_iters=20, support_final_iters=40, record_candidates=16,
                         estimator=EstimatorSettings(iters=10, final_iters=20, scoring_sample=2000))


class Coupling:
    """Record every private output of a first run; replay it in a second run on a neighbour.

    The second run still calls each mechanism (so the ledger is charged the
    same), then returns the first run's output, which is allowed only when
    the true answers differ by at most the sensitivity the mechanism was
    charged for.  Every released field of both runs must then be equal.
    """

    def __init__(self, monkeypatch):
        self.outputs: list = []
        self.replay: list | None = None
        real_measure, real_em = state.measure_one, rounds.exponential_mechanism

        def measure_one(answers, attrs, sigma2, sensitivity_sq, **kw):
            m, noisy = real_measure(answers, attrs, sigma2, sensitivity_sq, **kw)
            return m, self._step("gaussian", np.asarray(answers), noisy, sensitivity_sq)

        def em(scores, **kw):
            return self._step("exponential", np.asarray(scores), real_em(scores, **kw), kw["sensitivity"])

        for module in (state, rounds):  # the marginals' measurements, the record rounds'
            monkeypatch.setattr(module, "measure_one", measure_one)
        monkeypatch.setattr(rounds, "exponential_mechanism", em)
        monkeypatch.setattr(spanning, "exponential_mechanism", em)  # the wide path's picks (docs/privacy.md §8.9)

    def _step(self, kind, true, output, sensitivity):
        if self.replay is None:
            self.outputs.append((kind, true, output))
            return output
        was_kind, was_true, was_output = self.replay.pop(0)
        assert kind == was_kind and true.shape == was_true.shape
        moved = np.abs(true.astype(object) - was_true.astype(object))
        if kind == "gaussian":
            assert int((moved**2).sum()) <= sensitivity, f"a measured answer moved by {moved.max()}"
        else:
            assert int(moved.max()) <= sensitivity, f"a selection score moved by {moved.max()}"
        return was_output


def _run(data: AggregatedData, seed: int = 3):
    rho = Fraction(1, 2)
    qc = parse_query_class("conjunctions", data.domain)
    return measure(data, qc, budget=rho, relation="add-remove", ledger=ZcdpLedger(rho), rng=PrivateRandom(seed),
                   n_rows=200, options=OPTIONS, progress=False, oracle=OracleSelection(qc, get_oracle("exact")))


def test_neighbouring_runs_with_record_rounds_release_the_same_fields_when_coupled(monkeypatch):
    """D = 1000 A + B + noise rows on 2**66 cells, and D without B: coupled runs release identical records,
    measurements (every field), rounds, rho spent and model total, and at least one record round ran on A."""
    gen = np.random.default_rng(1)
    data, points = _issue_table(WIDE)
    rest = gen.integers(0, 4, (200, len(WIDE)))
    d = AggregatedData.from_codes(WIDE, np.vstack([data.expand(), rest]))
    neighbour = AggregatedData.from_codes(WIDE, np.vstack([np.tile(points[0], (1000, 1)), rest]))
    coupling = Coupling(monkeypatch)
    first = _run(d)
    coupling.replay = list(coupling.outputs)
    second = _run(neighbour)
    assert coupling.replay == []
    records = [m for m in first.measurements if m.selected_by == "record"]
    assert records and any("c0=0" in m.query for m in records)
    assert np.array_equal(first.records, second.records)
    assert [m.to_dict() for m in first.measurements] == [m.to_dict() for m in second.measurements]
    assert (first.rounds, first.rho_spent, first.model_total) == (second.rounds, second.rho_spent, second.model_total)
