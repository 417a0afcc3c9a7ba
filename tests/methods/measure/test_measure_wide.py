"""Wide tables (docs/privacy.md §8.9): the spanning step, the round schedule, the candidate pool, the footprint."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.accounting.zcdp import ZcdpLedger, exponential_rho, gaussian_rho
from synthdp.methods.measure import estimators
from synthdp.methods.measure import spanning
from synthdp.methods.measure import state
from synthdp.methods.measure.estimators import EstimatorSettings, NoisyMarginal
from synthdp.methods.measure.footprint import check_fits, footprint
from synthdp.methods.measure.algorithm import measure
from synthdp.methods.measure.measurements import candidate_weights, workload_marginals
from synthdp.methods.measure.settings import MeasureOptions
from synthdp.methods.measure.spanning import candidate_pool, pair_scores, spanning_pairs, unheld

DOMAIN = Domain(tuple(f"a{i}" for i in range(6)), (2, 3, 2, 4, 2, 3))
PAIRS = list(itertools.combinations(range(6), 2))
#: The spanning step from 4 attributes on, so that a 6-attribute table takes the wide path.
OPTIONS = MeasureOptions(spanning_from=4, rounds_per_sqrt_attribute=2,
                         estimator=EstimatorSettings(iters=10, final_iters=30, scoring_sample=2000))


def table(n: int = 300, seed: int = 0) -> AggregatedData:
    gen = np.random.default_rng(seed)
    codes = np.empty((n, 6), dtype=np.int64)
    codes[:, 0] = gen.integers(0, 2, n)
    for j, (p, s) in enumerate([(0, 3), (1, 2), (1, 4), (3, 2), (2, 3)], start=1):
        codes[:, j] = (codes[:, p] + gen.integers(0, 2, n)) % s
    return AggregatedData.from_codes(DOMAIN, codes)


def run(data, relation="add-remove", rho=Fraction(1, 2), options=OPTIONS):
    ledger = ZcdpLedger(rho)
    release = measure(data, PAIRS, budget=rho, relation=relation, ledger=ledger, rng=PrivateRandom(0),
                      options=options, progress=False)
    return release, ledger


def independent_model(data):
    return estimators.fit(DOMAIN, [NoisyMarginal((a,), data.marginal((a,)).reshape(-1) + 0.4, 4.0)
                                   for a in range(6)], 5)


def neighbours(data):
    """``data`` with one record added, and with one record replaced (every other record kept)."""
    codes = data.expand()
    added = AggregatedData.from_codes(DOMAIN, np.vstack([codes, [[1, 2, 1, 3, 1, 2]]]))
    other = codes.copy()
    other[0] = [1, 2, 1, 3, 1, 2] if tuple(other[0]) != (1, 2, 1, 3, 1, 2) else [0, 0, 0, 0, 0, 0]
    return added, AggregatedData.from_codes(DOMAIN, other)


def test_pair_scores_move_by_at_most_the_sensitivity_given_and_the_bound_is_attained():
    """The spanning step's scores (weight 1) move by at most 1 (add/remove) and 2 (replace-one), §8.3."""
    data = table()
    model = independent_model(data)

    def scores(d):
        return pair_scores(PAIRS, {r: d.marginal(r).reshape(-1) for r in PAIRS}, model, 2.4)

    base = scores(data)
    added, replaced = neighbours(data)
    assert np.abs(scores(added) - base).max() == 1
    assert np.abs(scores(replaced) - base).max() == 2


@pytest.mark.parametrize("relation,sens_sq,factor", [("add-remove", 1, 1), ("replace-one", 2, 2)])
def test_spanning_step_charges_and_sensitivities(monkeypatch, relation, sens_sq, factor):
    """d - 1 picks at the eps of a third of the spanning share, each at the pair score's sensitivity; every
    measurement charged Delta2**2/(2 sigma2) for the sigma2 drawn; the whole run within rho."""
    picks, drawn = [], []
    real_em, real_gauss = spanning.exponential_mechanism, state.discrete_gaussian_array

    def em(scores, **kw):
        picks.append(kw)
        return real_em(scores, **kw)

    def gauss(size, sigma2, rng):
        drawn.append(sigma2)
        return real_gauss(size, sigma2, rng)

    monkeypatch.setattr(spanning, "exponential_mechanism", em)
    monkeypatch.setattr(state, "discrete_gaussian_array", gauss)
    rho = Fraction(1, 2)
    release, ledger = run(table(), relation=relation, rho=rho)
    third = OPTIONS.spanning_share * rho / 3
    assert len(picks) == 5 and all(p["sensitivity"] == factor for p in picks)
    assert all(exponential_rho(p["epsilon"]) <= third / 5 for p in picks)
    assert sum(exponential_rho(p["epsilon"]) for p in picks) > third * Fraction(999, 1000)
    gauss_events = [e for e in ledger.events if e.mechanism == "gaussian"]
    assert len(gauss_events) == len(drawn)
    for event, sigma2 in zip(gauss_events, drawn):
        assert event.rho == gaussian_rho(sens_sq, sigma2)
    assert sum(e.rho for e in gauss_events[:6]) <= third and sum(e.rho for e in gauss_events[6:11]) <= third
    picked = [m.attrs for m in release.measurements[6:11]]
    assert all(len(r) == 2 for r in picked)
    assert ledger.spent <= rho and release.rho_spent == ledger.spent


def test_spanning_pairs_form_a_spanning_tree():
    """Kruskal's rule: each pick joins two components, so d - 1 picks span every attribute without a cycle."""
    for seed in range(5):
        ledger = ZcdpLedger(Fraction(1))
        scores = np.random.default_rng(seed).integers(-50, 50, len(PAIRS))
        picked = spanning_pairs(PAIRS, scores, 6, epsilon=Fraction(1, 10), sensitivity=1, ledger=ledger,
                                relation="add-remove", rng=PrivateRandom(seed))
        component = list(range(6))
        for a, b in picked:
            assert component[a] != component[b]
            old = component[b]
            component = [component[a] if c == old else c for c in component]
        assert len(picked) == 5 and len(set(component)) == 1


def test_round_schedule_and_pool_are_public():
    """The round cap reads d only; the pool is drawn from the public generator, the same on neighbours."""
    assert spanning.adaptive_rounds(100, 4) == 40 and spanning.adaptive_rounds(200, 4) == 57
    assert not spanning.uses_spanning_step(40, [(0,), (0, 1, 2)], 32)  # no 2-way candidate
    assert spanning.uses_spanning_step(32, [(0, 1)], 32) and not spanning.uses_spanning_step(31, [(0, 1)], 32)
    cands = list(candidate_weights(PAIRS))
    first = candidate_pool(cands, 7, np.random.default_rng(3))
    assert first == candidate_pool(cands, 7, np.random.default_rng(3)) and len(set(first)) == 7
    assert candidate_pool(cands, 100, np.random.default_rng(3)) == cands


def test_unheld_agrees_with_holder():
    data = table()
    model = estimators.fit(DOMAIN, [NoisyMarginal(r, data.marginal(r).reshape(-1), 1.0)
                                    for r in [(0, 1), (1, 2, 3), (4,), (3, 5)]], 3)
    cands = list(candidate_weights(list(itertools.combinations(range(6), 3))))
    assert unheld(model, cands).tolist() == [model.holder(r) is None for r in cands]


def test_add_remove_neighbours_release_the_same_unpaid_values():
    """On D and D + one record with the same seed: the same charges and scales in the same order (§8.6)."""
    data = table()
    added, _ = neighbours(data)
    (a, la), (b, lb) = run(data), run(added)
    first = [(e.mechanism, e.rho) for e in la.events][:12]
    assert first == [(e.mechanism, e.rho) for e in lb.events][:12]


def test_narrow_tables_do_not_take_the_wide_path():
    """Below spanning_from the run is the one of §8.1 (the same measurements with the option far away)."""
    far = MeasureOptions(spanning_from=10**6, estimator=OPTIONS.estimator, rounds_per_attribute=1)
    near = MeasureOptions(estimator=OPTIONS.estimator, rounds_per_attribute=1)
    (a, _), (b, _) = run(table(), options=far), run(table(), options=near)
    assert [m.attrs for m in a.measurements] == [m.attrs for m in b.measurements]
    assert np.array_equal(a.records, b.records)


def test_footprint_and_refusal():
    """The plan's estimate reads the domain and options only; a run past the machine's memory is refused, saying
    what to change."""
    wide = Domain(tuple(f"c{i}" for i in range(100)), (4,) * 100)
    cands = list(candidate_weights(workload_marginals("marginals:2", wide)))
    size = footprint(wide, cands, MeasureOptions(), n_rows=None, oracle=False)
    assert size.rounds == 40 and size.spanning_pairs == 99 and size.scored_per_round == 5000
    assert size.candidates == 5050 and size.memory_bytes < 2**30
    check_fits(size, 2**40)
    with pytest.raises(InputError, match="fewer or lower-order queries.*smaller model cap.*coarser schema"):
        check_fits(size, 2**20)


def test_privacy_unit_of_k_rows_scales_every_spanning_sensitivity(monkeypatch):
    """Under a unit of k = 2 rows (§10.6): each Gaussian charge is k**2 Delta2**2/(2 sigma2), and the picks' sampler
    is given k times the per-row score sensitivity (read off the exponent it draws with)."""
    scales = []
    real_prepare = spanning.exponential_mechanism.__globals__["_prepare"]

    def prepare(*args, **kwargs):
        out = real_prepare(*args, **kwargs)
        scales.append(out[2])  # the sensitivity the sampler's exponent uses
        return out

    monkeypatch.setitem(spanning.exponential_mechanism.__globals__, "_prepare", prepare)
    drawn = []
    real_gauss = state.discrete_gaussian_array
    monkeypatch.setattr(state, "discrete_gaussian_array",
                        lambda size, sigma2, rng: drawn.append(sigma2) or real_gauss(size, sigma2, rng))
    rho = Fraction(1, 2)
    ledger = ZcdpLedger(rho, contribution_bound=2)
    measure(table(), PAIRS, budget=rho, relation="add-remove", ledger=ledger, rng=PrivateRandom(0), options=OPTIONS,
            progress=False)
    gauss = [e for e in ledger.events if e.mechanism == "gaussian"]
    assert [e.rho for e in gauss] == [gaussian_rho(4, s) for s in drawn]
    assert scales[:5] == [2] * 5 and ledger.spent <= rho


def test_plan_states_the_footprint_and_refuses_before_any_private_step(monkeypatch):
    """make_plan (which never sees the data) states the footprint and refuses a run past the machine's memory."""
    from synthdp import plan as plan_module
    from synthdp.bench.width import tree_table
    from synthdp.config import SynthesisConfig
    from synthdp.methods.measure import method as measure_method

    _, schema, _ = tree_table(40, 10, seed=0)
    config = SynthesisConfig(epsilon=1, delta=1e-9, query_class="marginals:2", schema=schema, method="measure")
    made = plan_module.make_plan(config, schema)
    stated = made.choices()["footprint"]["value"]
    assert stated["spanning_pairs"] == 39 and stated["rounds"] == 26 and stated["candidates"] == 820
    monkeypatch.setattr(measure_method, "machine_memory", lambda: 2**20)
    with pytest.raises(InputError, match="more than this machine's"):
        plan_module.make_plan(config, schema)


@pytest.mark.parametrize("relation,delta1", [("add-remove", 1), ("replace-one", 2)])
def test_pure_dp_spanning_step(relation, delta1):
    """Under pure DP (Laplace, docs/privacy.md §10.2) the spanning step charges each pick its eps (a third of the
    share over d - 1) and each measurement a Delta_1; the run stays within epsilon."""
    from synthdp.accounting.ledger import Ledger
    from synthdp.mechanisms.laplace import spent_epsilon

    epsilon = Fraction(2)
    ledger = Ledger(epsilon, Fraction(0))
    release = measure(table(), PAIRS, budget=epsilon, relation=relation, ledger=ledger, rng=PrivateRandom(0),
                      options=OPTIONS, progress=False, pure=True)
    third = OPTIONS.spanning_share * epsilon / 3
    picks = [m for m in release.measurements[6:11]]
    assert all(len(m.attrs) == 2 and m.selection_epsilon <= third / 5 for m in picks)
    assert sum(m.selection_epsilon for m in picks) > third * Fraction(999, 1000)
    assert spent_epsilon(ledger) <= epsilon
