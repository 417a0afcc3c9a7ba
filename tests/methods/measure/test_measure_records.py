"""Record rounds of select-measure-estimate for classes beyond marginals (docs/privacy.md §8.1, §8.3).

Every ``record_every``-th round the exponential mechanism picks one of the
estimate's most probable records and that record's count is measured alone:
a counting query, sensitivity 1 under both relations, for the score and for
the measurement.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.accounting.zcdp import ZcdpLedger, exponential_rho, gaussian_rho
from synthdp.methods.measure import rounds, state
from synthdp.methods.measure.estimators import EstimatorSettings
from synthdp.methods.measure.algorithm import measure
from synthdp.methods.measure.measurements import REWEIGHTED_SAMPLE, OracleSelection
from synthdp.methods.measure.rounds import _round_kind, record_counts, record_scores
from synthdp.methods.measure.settings import MeasureOptions
from synthdp.oracles import get_oracle
from synthdp.queries.spec import parse_query_class

DOMAIN = Domain(tuple("abcdef"), (2,) * 6)
OPTIONS = MeasureOptions(rounds_per_attribute=2, record_every=2, record_after=0, oracle_every=0, backbone_width=2,
                         support=3000, support_iters=40, support_final_iters=80,
                         estimator=EstimatorSettings(iters=20, final_iters=50, scoring_sample=3000))


def spiked(n: int = 600, spike: float = 0.3, seed: int = 0) -> AggregatedData:
    """Uniform binary records plus a share ``spike`` of all-zero records (a 6-way feature no 2-way model holds)."""
    gen = np.random.default_rng(seed)
    codes = gen.integers(0, 2, (n, len(DOMAIN)))
    codes[: int(spike * n)] = 0
    return AggregatedData.from_codes(DOMAIN, codes)


def run(data, *, relation="add-remove", rho=Fraction(1, 2), options=OPTIONS, seed=0):
    qc = parse_query_class("conjunctions", DOMAIN)
    ledger = ZcdpLedger(rho)
    release = measure(data, qc, budget=rho, relation=relation, ledger=ledger, rng=PrivateRandom(seed),
                      options=options, progress=False, oracle=OracleSelection(qc, get_oracle("exact")))
    return release, ledger


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
def test_record_rounds_are_charged_with_sensitivity_one_under_both_relations(monkeypatch, relation):
    """The record EM runs at sensitivity 1 and is charged eps**2/8; the record's count at Delta2**2 = 1."""
    em_calls, drawn = [], []
    real_em, real_gauss = rounds.exponential_mechanism, state.discrete_gaussian_array

    def em(scores, **kw):
        em_calls.append((len(scores), kw["sensitivity"], kw["epsilon"]))
        return real_em(scores, **kw)

    def gauss(size, sigma2, rng):
        drawn.append((size, sigma2))
        return real_gauss(size, sigma2, rng)

    monkeypatch.setattr(rounds, "exponential_mechanism", em)
    monkeypatch.setattr(state, "discrete_gaussian_array", gauss)
    release, ledger = run(spiked(), relation=relation)
    records = [m for m in release.measurements if m.query is not None]
    assert records, "no record round ran"
    assert all(m.estimator == REWEIGHTED_SAMPLE and m.attrs == tuple(range(len(DOMAIN))) for m in records)
    # each record measurement: one cell, charged 1/(2 sigma2) for the sigma2 the sampler received
    record_draws = [s2 for size, s2 in drawn if size == 1]
    assert [m.sigma2 for m in records] == record_draws
    assert all(m.rho == gaussian_rho(1, m.sigma2) for m in records)
    # the record selections: sensitivity 1 whatever the relation, charged eps**2/8
    record_ems = [(s, e) for k, s, e in em_calls if k <= OPTIONS.record_candidates and s == 1]
    assert len(record_ems) == len(records)
    assert [e for _, e in record_ems] == [m.selection_epsilon for m in records]
    assert all(m.selection_rho == exponential_rho(m.selection_epsilon) for m in records)
    assert ledger.spent <= ledger.rho_budget


def _neighbours(codes: np.ndarray):
    """Every add/remove and replace-one neighbour of a small code matrix, with its relation."""
    universe = np.array(list(itertools.product((0, 1), repeat=codes.shape[1])))
    for i in range(len(codes)):
        yield "add-remove", np.delete(codes, i, axis=0)
        for x in universe:
            yield "replace-one", np.vstack([np.delete(codes, i, axis=0), x])
    for x in universe:
        yield "add-remove", np.vstack([codes, x])


def test_record_scores_move_by_at_most_one_and_the_bound_is_attained():
    """Brute force over all neighbours of a small table: the sensitivity the record EM uses (1) is the true one."""
    domain = Domain(tuple("abc"), (2, 2, 2))
    gen = np.random.default_rng(3)
    codes = gen.integers(0, 2, (7, 3))
    points = np.array(list(itertools.product((0, 1), repeat=3)))
    fitted = gen.uniform(0, 3, len(points))
    sigma2 = Fraction(5, 2)
    base = record_scores(record_counts(AggregatedData.from_codes(domain, codes), points), fitted, sigma2)
    worst = {"add-remove": 0, "replace-one": 0}
    for relation, other in _neighbours(codes):
        moved = record_scores(record_counts(AggregatedData.from_codes(domain, other), points), fitted, sigma2)
        worst[relation] = max(worst[relation], int(np.abs(moved - base).max()))
    assert worst == {"add-remove": 1, "replace-one": 1}


def test_record_counts_agree_with_a_direct_count():
    data = spiked(200, seed=4)
    points = np.array([[0] * 6, [1] * 6, [0, 1, 0, 1, 0, 1]])
    rows = data.expand()
    assert record_counts(data, points).tolist() == [int((rows == p).all(axis=1).sum()) for p in points]


def test_record_rounds_recover_a_spike_no_small_marginal_holds():
    """At a generous budget, the all-zero record's count in the output is much closer to the truth with record
    rounds than with the 2-way backbone alone (mean over seeds; same budget)."""
    data = spiked(2000, spike=0.3, seed=1)
    truth = int(record_counts(data, np.zeros((1, 6), dtype=int))[0])

    def error(options, seed):
        release, _ = run(data, rho=Fraction(2), options=options, seed=seed)
        scale = data.n / len(release.records)
        return abs((release.records == 0).all(axis=1).sum() * scale - truth)

    without = MeasureOptions(**{**OPTIONS.__dict__, "record_every": 0})
    with_records = np.mean([error(OPTIONS, s) for s in range(3)])
    backbone_only = np.mean([error(without, s) for s in range(3)])
    assert with_records < backbone_only / 3, (with_records, backbone_only)


def test_without_record_rounds_the_backbone_run_is_the_marginal_run():
    """The oracle path with no record or RSPM rounds is exactly marginals:K's run without its covering step (same
    seed, same records; the covering step serves marginal workloads only, docs/privacy.md §8.10)."""
    data = spiked(500, seed=2)
    options = MeasureOptions(**{**OPTIONS.__dict__, "record_every": 0, "cover_share": Fraction(0)})
    halfspaces = parse_query_class("halfspaces:1", DOMAIN)
    rho = Fraction(1, 4)
    wide = measure(data, halfspaces, budget=rho, relation="add-remove", ledger=ZcdpLedger(rho), rng=PrivateRandom(5),
                   options=options, progress=False, oracle=OracleSelection(halfspaces, get_oracle("cpsat")))
    pairs = measure(data, "marginals:2", budget=rho, relation="add-remove", ledger=ZcdpLedger(rho),
                    rng=PrivateRandom(5), options=options, progress=False)
    assert np.array_equal(wide.records, pairs.records)
    assert [m.to_dict() for m in wide.measurements] == [m.to_dict() for m in pairs.measurements]
    covering = MeasureOptions(**{**OPTIONS.__dict__, "record_every": 0})  # the default cover_share: not read here
    again = measure(data, halfspaces, budget=rho, relation="add-remove", ledger=ZcdpLedger(rho), rng=PrivateRandom(5),
                    options=covering, progress=False, oracle=OracleSelection(halfspaces, get_oracle("cpsat")))
    assert covering.cover_share > 0 and np.array_equal(again.records, wide.records)


def test_record_rounds_wait_for_the_backbone_to_anneal():
    """The schedule reads only the round number and the annealing steps (both public)."""
    qc = parse_query_class("conjunctions", DOMAIN)
    oracle = OracleSelection(qc, get_oracle("exact"))
    options = MeasureOptions(record_every=4, record_after=1, oracle_every=6)
    kinds = [_round_kind(t, 0, oracle, options) for t in range(1, 13)]
    assert kinds == ["marginal"] * 5 + ["oracle"] + ["marginal"] * 5 + ["oracle"]
    kinds = [_round_kind(t, 1, oracle, options) for t in range(1, 13)]
    assert kinds == ["marginal"] * 3 + ["record", "marginal", "oracle", "marginal", "record"] + ["marginal"] * 3 + \
        ["record"]
    assert {_round_kind(t, 5, None, options) for t in range(1, 30)} == {"marginal"}


def test_record_candidates_are_the_same_list_on_neighbouring_tables(monkeypatch):
    """The candidate list is read off the estimate's sample (public), never the true counts (docs/privacy.md §10.1).

    The exponential mechanism is forced to pick candidate j, and the released
    query names the record picked: so the whole ordered list is what the
    release can show.  D holds none of the estimate's support; D' adds one
    record, the one a ranking by true counts would move to the front.
    """
    from synthdp.methods.measure.reweight import WeightedSample

    universe = np.array(list(itertools.product((0, 1), repeat=len(DOMAIN))))
    support = universe[:20]
    estimate = WeightedSample(DOMAIN, support, np.arange(40.0, 20.0, -1.0))  # strictly decreasing weights
    options = MeasureOptions(**{**OPTIONS.__dict__, "record_candidates": 8})
    d = AggregatedData.from_codes(DOMAIN, universe[40:])
    neighbour = AggregatedData.from_codes(DOMAIN, np.vstack([universe[40:], support[-1]]))

    def candidates(data):
        listed = []
        for j in range(options.record_candidates):
            monkeypatch.setattr(rounds, "exponential_mechanism", lambda scores, **kw: j)
            m, _, _ = rounds._record_round(
                data, estimate, select_rho=Fraction(1, 10), measure_rho=Fraction(1, 10), options=options,
                ledger=ZcdpLedger(Fraction(1)), relation="add-remove", rng=PrivateRandom(0),
                generator=np.random.default_rng(5), label="record")
            listed.append(m.query)
        return listed

    first = candidates(d)
    assert len(set(first)) == options.record_candidates
    assert first == candidates(neighbour)
